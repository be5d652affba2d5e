import { IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType, registerEnumType } from 'type-graphql';
import { JSONObject } from '../../core/scalars';
import { Provider } from '../providers';

export enum ProrationBehavior {
  CREATE_PRORATIONS = 'create_prorations',
  NONE = 'none',
}
registerEnumType(ProrationBehavior, { name: 'ProrationBehavior' });

/** When a plan change takes effect (docs/subscriptions.md "Scheduled changes"). */
export enum ChangeEffective {
  /** Now, prorated. */
  NOW = 'now',
  /** At the end of the current period (or trial): nothing changes before; the renewal bills the new plan. */
  PERIOD_END = 'period_end',
}
registerEnumType(ChangeEffective, { name: 'ChangeEffective' });

@InputType()
export class CreateSubscriptionInput {
  @Field(() => ID) planId!: string;
  @Field(() => ID, {
    nullable: true,
    description: "One of the plan's prices; default: the plan's default price (in `currency` when given)",
  })
  priceId?: string | null;
  @Field(() => String, { nullable: true, description: "The plan's default price in this currency" })
  @IsOptional()
  @MaxLength(3)
  currency?: string | null;
  @Field(() => ID, { nullable: true, description: 'An existing customer; else customer_email finds or creates one' })
  customerId?: string | null;
  @Field(() => String, { nullable: true, description: 'Required unless customer_id' })
  @IsOptional()
  @MaxLength(254)
  customerEmail?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) customerName?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) customerPhone?: string | null;
  @Field(() => String, { nullable: true, description: '2-digit GST state code' })
  @IsOptional()
  @MaxLength(2)
  customerStateCode?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(15) customerGstin?: string | null;
  @Field({ description: 'Placeholders {SUBSCRIPTION_ID} and {CHECKOUT_SESSION_ID} are filled in' })
  @MaxLength(2048)
  successUrl!: string;
  @Field() @MaxLength(2048) cancelUrl!: string;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(64) couponCode?: string | null;
  @Field(() => Provider, { nullable: true, description: "Default: the mode's default connection" })
  provider?: Provider | null;
  @Field(() => JSONObject, { nullable: true }) metadata?: Record<string, unknown> | null;
}

@InputType()
export class ChangePlanInput {
  @Field(() => ID) planId!: string;
  @Field(() => ID, {
    nullable: true,
    description: "Default: the new plan's default price in the subscription's currency",
  })
  priceId?: string | null;
  @Field(() => ProrationBehavior, { nullable: true, description: 'Default CREATE_PRORATIONS' })
  prorationBehavior?: ProrationBehavior | null;
  @Field(() => ChangeEffective, {
    nullable: true,
    description: 'Default NOW; PERIOD_END schedules the change for the end of the current period (or trial)',
  })
  effective?: ChangeEffective | null;
}

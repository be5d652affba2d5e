import { IsOptional, MaxLength } from 'class-validator';
import { Field, ID, InputType } from 'type-graphql';
import { JSONObject, Money } from '../../core/scalars';
import { TaxBehavior } from '../catalog';
import { Provider } from '../providers';

@InputType()
export class CreatePaymentInput {
  @Field(() => Money, { description: 'Subunits; at least 100' }) amount!: number;
  // String limits are the columns' (payments, customers); URLs are text, limited to 2048 like validateUrl.
  @Field(() => String, { nullable: true, description: "3-letter ISO code; default 'INR'" })
  @IsOptional()
  @MaxLength(3)
  currency?: string | null;
  @Field(() => ID, {
    nullable: true,
    description: 'An existing customer (POST /v1/customers); else customer_email finds or creates one',
  })
  customerId?: string | null;
  @Field(() => String, {
    nullable: true,
    description: "Required unless customer_id; with customer_id it must be that customer's e-mail",
  })
  @IsOptional()
  @MaxLength(254)
  customerEmail?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) customerPhone?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) customerName?: string | null;
  @Field(() => String, { nullable: true, description: '2-digit GST state code' })
  @IsOptional()
  @MaxLength(2)
  customerStateCode?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(15) customerGstin?: string | null;
  @Field(() => String, { nullable: true, description: "The merchant's own order id" })
  @IsOptional()
  @MaxLength(255)
  referenceId?: string | null;
  @Field({ description: 'Placeholders {CHECKOUT_SESSION_ID} and {PAYMENT_ID} are filled in' })
  @MaxLength(2048)
  successUrl!: string;
  @Field() @MaxLength(2048) cancelUrl!: string;
  @Field(() => JSONObject, { nullable: true }) metadata?: Record<string, unknown> | null;
  @Field(() => Provider, { nullable: true, description: "Default: the mode's default connection" })
  provider?: Provider | null;
  @Field(() => TaxBehavior, {
    nullable: true,
    description: 'Default EXCLUSIVE (GST on top of amount); INCLUSIVE: amount contains its GST and is what is charged',
  })
  taxBehavior?: TaxBehavior | null;
}

@InputType()
export class RefundPaymentInput {
  @Field(() => Money, {
    nullable: true,
    description:
      'Money to return, in subunits (GST included: counted against amount_total); default: all of amount_total not yet refunded',
  })
  amount?: number | null;
  @Field(() => String, { nullable: true }) @IsOptional() @MaxLength(255) reason?: string | null;
}

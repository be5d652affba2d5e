import { Field, InputType } from 'type-graphql';
import { JSONObject, Money } from '../../core/scalars';
import { Provider } from '../providers/provider-connection.entity';

@InputType()
export class CreatePaymentInput {
  @Field(() => Money, { description: 'Subunits; at least 100' }) amount!: number;
  @Field(() => String, { nullable: true, description: "3-letter ISO code; default 'INR'" }) currency?: string | null;
  @Field() customerEmail!: string;
  @Field(() => String, { nullable: true }) customerPhone?: string | null;
  @Field(() => String, { nullable: true }) customerName?: string | null;
  @Field(() => String, { nullable: true, description: '2-digit GST state code' }) customerStateCode?: string | null;
  @Field(() => String, { nullable: true }) customerGstin?: string | null;
  @Field(() => String, { nullable: true, description: "The merchant's own order id" }) referenceId?: string | null;
  @Field({ description: 'Placeholders {CHECKOUT_SESSION_ID} and {PAYMENT_ID} are filled in' }) successUrl!: string;
  @Field() cancelUrl!: string;
  @Field(() => JSONObject, { nullable: true }) metadata?: Record<string, unknown> | null;
  @Field(() => Provider, { nullable: true, description: "Default: the mode's default connection" }) provider?: Provider | null;
}

@InputType()
export class RefundPaymentInput {
  @Field(() => Money, { nullable: true, description: 'Subunits; default: everything not yet refunded' }) amount?: number | null;
  @Field(() => String, { nullable: true }) reason?: string | null;
}


import { BigIntType, Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject, Money } from '../../core/scalars';
import { TaxBehavior } from '../catalog';
import { Customer } from '../customers';
import type { SnapshotTaxParties } from '../invoices';
import { Provider } from '../providers';

export enum PaymentStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
  EXPIRED = 'expired',
  PARTIALLY_REFUNDED = 'partially_refunded',
  REFUNDED = 'refunded',
}
registerEnumType(PaymentStatus, { name: 'PaymentStatus' });

/** Statuses whose amount was collected: revenue is their amount less refunds. */
export const COLLECTED_STATUSES = [PaymentStatus.SUCCEEDED, PaymentStatus.PARTIALLY_REFUNDED, PaymentStatus.REFUNDED];

export enum RefundStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
}
registerEnumType(RefundStatus, { name: 'RefundStatus' });

/** What a payment collected: a one-off checkout, or an amount a gateway collected for a subscription. */
export enum PaymentBillingReason {
  ONE_TIME = 'one_time',
  /** A subscription's first charge (after its trial, if any). */
  SUBSCRIPTION_CREATE = 'subscription_create',
  /** A renewal. */
  SUBSCRIPTION_CYCLE = 'subscription_cycle',
  /** A dunning retry that paid a renewal's open invoice. */
  SUBSCRIPTION_RETRY = 'subscription_retry',
  /** A plan change's adjustment or a usage invoice, collected from the mandate on its own. */
  SUBSCRIPTION_UPDATE = 'subscription_update',
}
registerEnumType(PaymentBillingReason, { name: 'PaymentBillingReason' });

/**
 * Money a gateway collected: a one-off payment through a hosted checkout, or a subscription's collection (a renewal, a
 * retry, an adjustment: `billing_reason`), recorded when the gateway reports it and named by its invoice's `payment_id`.
 */
@Entity({ tableName: 'payments' })
@Index({ properties: ['checkoutSessionId'] })
@Index({ properties: ['merchantId', 'mode', 'customerId', 'id'] })
// Catch-up after a lost LISTEN connection reads the payments updated since then (payment.catchup.ts).
@Index({ properties: ['updatedAt'] })
// Reconciliation reads pending checkouts oldest first (payment.service.ts reconcilePending).
@Index({
  name: 'payments_pending_checkout_index',
  expression:
    'create index "payments_pending_checkout_index" on "payments" ("created_at") where "status" = \'pending\' and "checkout_session_id" is not null',
})
@ObjectType()
export class Payment extends TenantEntity {
  @Field()
  get object(): string {
    return 'payment';
  }

  @Field(() => Money, {
    description:
      'The price the merchant asked for: tax-exclusive, or GST included when tax_behavior is inclusive. A collection for a subscription: its taxable value.',
  })
  @Property({ type: new BigIntType('number') })
  amount!: number;
  @Field(() => Money, {
    description: 'GST on amount (contained in it when tax_behavior is inclusive), fixed at creation; 0 when untaxed.',
  })
  @Property({ type: new BigIntType('number'), default: 0 })
  taxAmount: number = 0;
  /**
   * Whether `amount` contains its GST (docs/payments.md): `inclusive`, amount_total = amount; `exclusive` (the default,
   * and every collection for a subscription, whose amount is its invoice's taxable value), amount_total = amount + tax.
   */
  @Field(() => TaxBehavior, {
    description: 'exclusive: GST on top of amount; inclusive: amount contains its GST (amount_total = amount).',
  })
  @Enum({ items: () => TaxBehavior, default: TaxBehavior.EXCLUSIVE })
  taxBehavior: TaxBehavior = TaxBehavior.EXCLUSIVE;
  @Field(() => Money, {
    description:
      'What the gateway checkout charges, and the total of the invoice: amount + tax_amount, or amount when tax_behavior is inclusive.',
  })
  @Property({ type: new BigIntType('number') })
  amountTotal!: number;
  /** Money returned by refunds succeeded or in progress (docs/payments.md); never above `amountTotal`. */
  @Field(() => Money, {
    description:
      'Money returned by refunds succeeded or in progress, counted against amount_total; at most amount_total.',
  })
  @Property({ type: new BigIntType('number') })
  amountRefunded: number = 0;
  /**
   * What the gateway refunded or is refunding for those refunds (their `gateway_amount`s). Refunds are money returned,
   * so this equals `amountRefunded` (kept: the customers' lifetime revenue reads it; customer.store.ts).
   */
  @Property({ type: new BigIntType('number'), default: 0 }) gatewayAmountRefunded: number = 0;
  /** The tax parties fixed at creation (payment.tax.ts); the invoice's GST is computed from them. Null: created before. */
  @Property({ type: 'jsonb', nullable: true }) taxParties?: SnapshotTaxParties | null;
  @Field() @Property({ length: 3 }) currency!: string;
  @Field(() => PaymentStatus) @Enum({ items: () => PaymentStatus }) status: PaymentStatus = PaymentStatus.PENDING;

  @Field(() => ID) @ManyToOne(() => Customer, { mapToPk: true, fieldName: 'customer_id' }) customerId!: string;
  @Field() @Property() customerEmail!: string;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) customerName?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) customerPhone?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) referenceId?: string | null;
  @Field(() => JSONObject) @Property({ type: 'jsonb' }) metadata: Record<string, string> = {};

  @Field(() => Provider) @Enum({ items: () => Provider }) provider!: Provider;
  @Property({ type: 'uuid', nullable: true }) connectionId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) providerPaymentId?: string | null;
  /** The hosted checkout of a one-off payment; null on a subscription's collections (the mandate paid them). */
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) checkoutSessionId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ type: 'text', nullable: true }) checkoutUrl?: string | null;
  @Field(() => String, { nullable: true }) @Property({ type: 'text', nullable: true }) successUrl?: string | null;
  @Field(() => String, { nullable: true }) @Property({ type: 'text', nullable: true }) cancelUrl?: string | null;
  @Field(() => PaymentBillingReason, { description: 'one_time, or what the gateway collected for a subscription.' })
  @Enum({ items: () => PaymentBillingReason, default: PaymentBillingReason.ONE_TIME })
  billingReason: PaymentBillingReason = PaymentBillingReason.ONE_TIME;
  @Field(() => ID, { nullable: true, description: 'The subscription whose collection this is.' })
  @Property({ type: 'uuid', nullable: true })
  subscriptionId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) failureReason?: string | null;
  /** How the customer paid (card, upi, emandate) and through which bank, as the gateway reported. */
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) method?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) bank?: string | null;

  /** When reconciliation last read this payment's checkout back from the gateway. */
  @Property({ type: 'timestamptz', nullable: true }) reconciledAt?: Date | null;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

@Entity({ tableName: 'refunds' })
@ObjectType()
export class Refund extends TenantEntity {
  @Field()
  get object(): string {
    return 'refund';
  }

  @Field(() => ID)
  @ManyToOne(() => Payment, { mapToPk: true, fieldName: 'payment_id', index: true })
  paymentId!: string;
  @Field(() => Money, {
    description: "Money returned to the customer (GST included), counted against the payment's amount_total.",
  })
  @Property({ type: new BigIntType('number') })
  amount!: number;
  @Field(() => Money, {
    description: 'What the gateway refunds: always equal to amount (refund amounts are money returned).',
  })
  @Property({ type: new BigIntType('number') })
  gatewayAmount!: number;
  @Field() @Property({ length: 3 }) currency!: string;
  @Field(() => RefundStatus) @Enum({ items: () => RefundStatus }) status: RefundStatus = RefundStatus.PENDING;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) reason?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) providerRefundId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) failureReason?: string | null;
  /**
   * The gateway was told this refund's id (RefundInput.refundId), so its refund events name it. False for refunds
   * asked for before refunds carried it (their command is retried as first asked) and those recorded from the
   * gateway's own refunds.
   */
  @Property({ default: false }) namedAtGateway: boolean = false;
}

/** An inbound gateway event, kept once per (provider, gateway event id): a repeat delivery is a no-op. */
@Entity({ tableName: 'gateway_events' })
@Index({
  name: 'gateway_events_provider_event_unique',
  expression: 'create unique index "gateway_events_provider_event_unique" on "gateway_events" ("provider", "event_id")',
})
export class GatewayEventRecord extends TenantEntity {
  @Enum({ items: () => Provider }) provider!: Provider;
  @Property() eventId!: string;
  @Property() type!: string;
  @Property({ type: 'uuid' }) connectionId!: string;
  @Property({ type: 'jsonb' }) payload!: unknown;
}

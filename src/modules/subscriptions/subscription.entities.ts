import { BigIntType, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject, Money } from '../../core/scalars';
import { BillingFrequency, Plan, Price, Product, TaxBehavior, TrialEndAction } from '../catalog';
import { Customer } from '../customers';
import { Provider } from '../providers';
import { SubscriptionStatus } from './subscription.machine';

registerEnumType(SubscriptionStatus, { name: 'SubscriptionStatus' });

/** How GST applies to a subscription's invoices (src/money/gst.ts TaxTreatment), fixed when it is created. */
export enum SubscriptionTaxTreatment {
  /** No GST: a non-INR subscription (zero-rated export) or a merchant without a GSTIN then. */
  NONE = 'none',
  /** CGST + SGST: the customer in the merchant's state, or its state unknown. */
  INTRA = 'intra',
  /** IGST: the customer in another state. */
  INTER = 'inter',
}
registerEnumType(SubscriptionTaxTreatment, { name: 'SubscriptionTaxTreatment' });

/**
 * A plan change's adjustment invoice that Razorpay collects as an add-on with the subscription's next charge
 * (change-plan.ts): settled when that charge is reported (subscription.gateway-events.ts).
 */
export interface GatewayAddon {
  invoiceId: string;
  /** What the add-on charges: the adjustment invoice's amount due (subunits of the subscription's currency). */
  amount: number;
  /** The period invoice of the charge that carried it, once one failed (the add-on then follows its dunning). */
  chargeInvoiceId: string | null;
}

/** What the scheduler does next for a subscription, at `nextActionAt` (subscription.scheduler.ts). */
export enum ScheduledAction {
  /** A hosted checkout nobody completed: ended at the gateway and cancelled (SUBSCRIPTION_CHECKOUT_EXPIRY_SECONDS after creation). */
  CHECKOUT_EXPIRY = 'checkout_expiry',
  TRIAL_END_CANCEL = 'trial_end_cancel',
  PERIOD_END_CANCEL = 'period_end_cancel',
  COMPLETE = 'complete',
  /** A dunning retry: the gateway is asked to charge the open invoice again. */
  RETRY = 'retry',
}

/** What a scheduled plan change moves to (BillingSubscription.scheduledChangeData), and how the gateway was told. */
export interface ScheduledChangeData {
  planId: string;
  priceId: string;
  /** When the gateway applies it (ISO 8601): the end of the current period, or of the trial. */
  effectiveAt: string;
  /** The gateway price it moves to, at the amount the gateway charges from then on. */
  providerPriceId: string;
  gatewayAmount: number;
  /** The coupon applies to the new plan and goes on discounting; the gateway's new price is discounted. */
  couponFollows: boolean;
  gatewayDiscounted: boolean;
}

@ObjectType({ description: 'A plan change that takes effect at the end of the current period (or trial).' })
export class ScheduledChange {
  @Field(() => ID) planId!: string;
  @Field(() => ID) priceId!: string;
  @Field(() => DateTime, { description: 'When the renewal that bills the new plan starts.' }) effectiveAt!: Date;
}

/**
 * A customer's subscription to a plan at one price (docs/subscriptions.md). GraphQL calls it BillingSubscription: the
 * root `Subscription` type of GraphQL has the name. Periods and cycles are the service's own, aligned with the
 * gateway's by the periods its charge events report.
 */
@Entity({ tableName: 'subscriptions' })
@Index({ properties: ['merchantId', 'mode', 'customerId', 'status'] })
@Index({ properties: ['merchantId', 'mode', 'status', 'id'] })
@Index({ properties: ['merchantId', 'mode', 'planId', 'id'] })
@Index({ properties: ['providerSubscriptionId'] })
// Reconciliation finds the commands whose outcome is not known (subscription.pending.ts) without a scan.
@Index({
  name: 'subscriptions_pending_outcome_index',
  expression:
    'create index "subscriptions_pending_outcome_index" on "subscriptions" ("id") where "pending_outcome" is not null',
})
@Index({ properties: ['checkoutSessionId'] })
@Index({ properties: ['updatedAt'] })
@Index({
  name: 'subscriptions_next_action_index',
  expression:
    'create index "subscriptions_next_action_index" on "subscriptions" ("next_action_at") where "next_action_at" is not null',
})
// The pre-debit notices' due lookup (pre-debit.ts): INR renewals not yet announced, by their debit instant.
@Index({
  name: 'subscriptions_notice_due_index',
  expression:
    'create index "subscriptions_notice_due_index" on "subscriptions" ("current_period_end") where "status" in (\'active\', \'trialing\') and "currency" = \'INR\' and not "cancel_at_period_end" and "provider_subscription_id" is not null and "noticed_debit_at" is distinct from "current_period_end"',
})
// Reconciliation's lookup of overdue gateway events across merchants (subscription.store.ts overdueAtGateway).
@Index({
  name: 'subscriptions_gateway_overdue_index',
  expression:
    'create index "subscriptions_gateway_overdue_index" on "subscriptions" ((case when "status" = \'trialing\' then "trial_end" else "current_period_end" end)) where "status" in (\'trialing\', \'active\') and "provider_subscription_id" is not null',
})
@ObjectType('BillingSubscription', { description: "A customer's subscription to a plan (REST object `subscription`)." })
export class BillingSubscription extends TenantEntity {
  @Field()
  get object(): string {
    return 'subscription';
  }

  @Field(() => ID) @ManyToOne(() => Customer, { mapToPk: true, fieldName: 'customer_id' }) customerId!: string;
  @Field(() => ID) @ManyToOne(() => Product, { mapToPk: true, fieldName: 'product_id' }) productId!: string;
  @Field(() => ID) @ManyToOne(() => Plan, { mapToPk: true, fieldName: 'plan_id' }) planId!: string;
  @Field(() => ID) @ManyToOne(() => Price, { mapToPk: true, fieldName: 'price_id' }) priceId!: string;
  @Field(() => SubscriptionStatus) @Enum({ items: () => SubscriptionStatus }) status: SubscriptionStatus =
    SubscriptionStatus.CREATED;
  @Field() @Property({ length: 3 }) currency!: string;
  /** The recurring amount of the current price, tax-exclusive (subunits). */
  @Field(() => Money) @Property({ type: new BigIntType('number') }) amount!: number;
  @Field(() => Money) @Property({ type: new BigIntType('number') }) setupFee: number = 0;
  @Field(() => BillingFrequency) @Enum({ items: () => BillingFrequency }) billingFrequency!: BillingFrequency;
  @Field(() => Int) @Property() billingInterval: number = 1;
  @Field(() => Int) @Property() trialPeriodDays: number = 0;
  @Field(() => TrialEndAction) @Enum({ items: () => TrialEndAction }) trialEndAction: TrialEndAction =
    TrialEndAction.START_SUBSCRIPTION;

  @Field(() => Provider) @Enum({ items: () => Provider }) provider!: Provider;
  @Property({ type: 'uuid' }) connectionId!: string;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) providerSubscriptionId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) providerCustomerId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) checkoutSessionId?: string | null;
  @Field(() => String, { nullable: true }) @Property({ type: 'text', nullable: true }) checkoutUrl?: string | null;
  @Field() @Property({ type: 'text' }) successUrl!: string;
  @Field() @Property({ type: 'text' }) cancelUrl!: string;

  @Field() @Property() cancelAtPeriodEnd: boolean = false;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  currentPeriodStart?: Date | null;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  currentPeriodEnd?: Date | null;
  /** Periods are counted from here (calendar arithmetic keeping its day); a cadence change restarts it. */
  @Property({ type: 'timestamptz', nullable: true }) billingAnchor?: Date | null;
  /** The current period's index from `billingAnchor` (0: the first). */
  @Property() anchorCycle: number = 0;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  trialStart?: Date | null;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) trialEnd?: Date | null;
  /** Billed periods, the first included (docs/subscriptions.md, max_cycles). */
  @Field(() => Int) @Property() cyclesCompleted: number = 0;
  @Field(() => Int, { nullable: true }) @Property({ type: 'integer', nullable: true }) maxCycles?: number | null;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) pausedAt?: Date | null;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  cancelledAt?: Date | null;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) endedAt?: Date | null;
  /** The mandate the gateway debits (docs/india.md "Mandates"), as its authorisation and later events reported it. */
  @Field(() => String, {
    nullable: true,
    description:
      "The mandate's status: active once authorised, revoked when the gateway reports it revoked or expired (a new one is authorised through the portal or createMandateSetup); null before authorisation",
  })
  @Property({ type: 'text', nullable: true })
  mandateStatus?: string | null;
  @Field(() => String, { nullable: true, description: 'How the mandate debits: card, upi or emandate' })
  @Property({ type: 'text', nullable: true })
  mandateMethod?: string | null;
  @Field(() => String, { nullable: true, description: 'The bank behind the mandate, when the gateway names it' })
  @Property({ type: 'text', nullable: true })
  mandateBank?: string | null;
  @Field(() => DateTime, { nullable: true, description: 'When the current mandate was authorised' })
  @Property({ type: 'timestamptz', nullable: true })
  mandateAuthorizedAt?: Date | null;
  @Field(() => DateTime, { nullable: true, description: 'When the gateway reported the mandate revoked or expired' })
  @Property({ type: 'timestamptz', nullable: true })
  mandateRevokedAt?: Date | null;
  /** The terms the mandate is registered with (INR; docs/india.md "Mandates"), fixed at creation. */
  @Field(() => Money, {
    nullable: true,
    description:
      "The most one debit of the mandate may take (INR): the merchant's mandate_afa_limit, or the first debit when that is more",
  })
  @Property({ type: new BigIntType('number'), nullable: true })
  mandateMaxAmount?: number | null;
  @Field(() => String, {
    nullable: true,
    description: 'How often the mandate may be debited: as_presented (each debit as the merchant presents it)',
  })
  @Property({ type: 'text', nullable: true })
  mandateFrequency?: string | null;
  @Field(() => DateTime, {
    nullable: true,
    description: 'Until when the mandate may be debited (the end of a max_cycles term, else 10 years)',
  })
  @Property({ type: 'timestamptz', nullable: true })
  mandateValidUntil?: Date | null;
  /**
   * `currentPeriodEnd` once its renewal's pre-debit notice is sent (or found sent): the notices' due lookup reads
   * this instead of joining the notices (pre-debit.ts). Written only by the notices' own statement, so announcing a
   * debit never moves `updatedAt`.
   */
  @Property({ type: 'timestamptz', nullable: true })
  noticedDebitAt?: Date | null;
  /** The code of the coupon applied at creation, as the coupon spells it. */
  @Field(() => String, { nullable: true }) @Property({ nullable: true }) couponCode?: string | null;
  @Field(() => JSONObject) @Property({ type: 'jsonb' }) metadata: Record<string, string> = {};

  // The coupon's discount (subscription.discount.ts), fixed at creation: its invoices and gateway price follow it.
  @Field(() => ID, { nullable: true, description: 'The coupon applied at creation (its code in couponCode).' })
  @Property({ type: 'uuid', nullable: true })
  couponId?: string | null;
  /** Percent off in basis points; null for a fixed-amount coupon. */
  @Property({ type: 'integer', nullable: true }) discountPercentBps?: number | null;
  /** Fixed discount per period (subunits of `currency`); null for a percentage coupon. */
  @Property({ type: new BigIntType('number'), nullable: true }) discountAmountOff?: number | null;
  /** Billed periods the discount covers (null: every one, a forever coupon); set to the periods used when it ends early. */
  @Property({ type: 'integer', nullable: true }) discountCycles?: number | null;
  @Field(() => Int, { description: 'Billed periods discounted so far.' })
  @Property()
  discountCyclesUsed: number = 0;
  /** The discount taken off the current period's recurring amount (0: the period is not discounted). */
  @Field(() => Money, { description: "The discount taken off the current period's recurring amount (0: none)." })
  @Property({ type: new BigIntType('number') })
  periodDiscount: number = 0;
  /** The gateway charges a discounted price now: once the discount is over it is moved to the full price. */
  @Property() gatewayDiscounted: boolean = false;

  @Field(() => Int, {
    nullable: true,
    description:
      'Billed periods the coupon still discounts (null: no coupon, or a forever coupon still applying: every one).',
  })
  get discountCyclesRemaining(): number | null {
    if (!this.couponId || this.discountCycles == null) return null;
    return Math.max(0, this.discountCycles - this.discountCyclesUsed);
  }

  /** Dunning: failed retries of the open charge so far (0 right after the failed renewal). */
  @Field(() => Int) @Property() retryAttempt: number = 0;
  /**
   * GST of the subscription's invoices, fixed at creation from the merchant's settings and the customer's state then
   * (docs/invoices-and-gst.md): the gateway charges each invoice's total under it, so later settings changes cannot make
   * the two disagree. New subscriptions take the settings as they are.
   */
  @Field(() => SubscriptionTaxTreatment)
  @Enum({ items: () => SubscriptionTaxTreatment })
  taxTreatment: SubscriptionTaxTreatment = SubscriptionTaxTreatment.NONE;
  /** The GST rate of `taxTreatment` in basis points (1800 = 18%); 0 for `none`. */
  @Field(() => Int) @Property() taxRateBps: number = 0;
  /**
   * Its price's tax_behavior (docs/invoices-and-gst.md, "Tax-inclusive prices"): `inclusive`, its invoices' totals are
   * the price's amounts and the gateway charges exactly those; `exclusive`, GST is added on top.
   */
  @Field(() => TaxBehavior)
  @Enum({ items: () => TaxBehavior })
  taxBehavior: TaxBehavior = TaxBehavior.EXCLUSIVE;
  /** Razorpay add-ons of adjustment invoices not yet settled, oldest first. */
  @Property({ type: 'jsonb' }) gatewayAddons: GatewayAddon[] = [];
  /** Credit from credit notes not yet applied to an invoice (gross: credit note totals, subunits of `currency`). */
  @Field(() => Money) @Property({ type: new BigIntType('number') }) creditBalance: number = 0;
  /** When the charge that started dunning failed: retries are due 1, 3 and 5 days after it (docs/subscriptions.md). */
  @Property({ type: 'timestamptz', nullable: true }) pastDueSince?: Date | null;
  /** The invoice of the charge that failed, while dunning runs. */
  @Property({ type: 'uuid', nullable: true }) openInvoiceId?: string | null;

  /** The scheduler's next action and when it is due, in merchant time (a partial index finds due rows). */
  @Enum({ items: () => ScheduledAction, nullable: true }) nextAction?: ScheduledAction | null;
  @Property({ type: 'timestamptz', nullable: true }) nextActionAt?: Date | null;
  /** A command calling the gateway right now: another command meanwhile is refused (409). */
  @Property({ nullable: true }) pendingCommand?: string | null;
  @Property({ type: 'timestamptz', nullable: true }) pendingCommandAt?: Date | null;
  /**
   * A pause, resume or cancel whose gateway call got no answer (it timed out): what was asked, kept until the gateway's
   * own event or the reconciliation pass says whether it happened (subscription.pending.ts).
   */
  @Property({ type: 'jsonb', nullable: true }) pendingOutcome?: PendingOutcome | null;

  @Field(() => String, {
    nullable: true,
    description:
      "pause, resume or cancel: a command sent to the gateway whose outcome is not known yet (its call timed out); settled by the gateway's event or reconciliation.",
  })
  get pendingGatewayCommand(): string | null {
    return this.pendingOutcome?.command ?? null;
  }

  /**
   * A plan change scheduled for the end of the current period or trial (change-plan `effective: period_end`), as the
   * gateway was told it; applied by the renewal that starts at `effectiveAt` (docs/subscriptions.md).
   */
  @Property({ type: 'jsonb', nullable: true, fieldName: 'scheduled_change' })
  scheduledChangeData?: ScheduledChangeData | null;

  @Field(() => ScheduledChange, {
    nullable: true,
    description: 'A plan change scheduled for the end of the current period (or trial); null when none.',
  })
  get scheduledChange(): ScheduledChange | null {
    const d = this.scheduledChangeData;
    if (!d) return null;
    return Object.assign(new ScheduledChange(), {
      planId: d.planId,
      priceId: d.priceId,
      effectiveAt: new Date(d.effectiveAt),
    });
  }

  /** When the reconciliation job last read this subscription from the gateway. */
  @Property({ type: 'timestamptz', nullable: true }) reconciledAt?: Date | null;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** One state transition of a subscription (the API document's audit record), written with the change. */
@Entity({ tableName: 'subscription_events' })
@Index({ properties: ['subscriptionId', 'id'] })
@ObjectType({ description: 'A state transition of a subscription, as recorded when it happened.' })
export class SubscriptionEvent extends TenantEntity {
  @Field()
  get object(): string {
    return 'subscription_event';
  }

  @Field(() => ID) @Property({ type: 'uuid' }) subscriptionId!: string;
  @Field(() => SubscriptionStatus, { nullable: true })
  @Enum({ items: () => SubscriptionStatus, nullable: true })
  fromState?: SubscriptionStatus | null;
  @Field(() => SubscriptionStatus) @Enum({ items: () => SubscriptionStatus }) toState!: SubscriptionStatus;
  @Field() @Property({ length: 64 }) eventType!: string;
  @Field() @Property({ length: 16 }) triggeredBy!: string;
  @Field(() => JSONObject) @Property({ type: 'jsonb' }) metadataJson: Record<string, unknown> = {};
}

/**
 * How far the gateway sandbox's clock was moved for a merchant's test mode (subscription.time.ts): test-clock advances
 * only ask the sandbox for time it has not seen, so a renewal the gateway never reported cannot stall an advance.
 */
@Entity({ tableName: 'gateway_clock_syncs' })
export class GatewayClockSync {
  @PrimaryKey({ type: 'uuid' }) merchantId!: string;
  @Property({ type: 'timestamptz' }) syncedTo!: Date;
}

/** What an unanswered pause, resume or cancel asked for (BillingSubscription.pendingOutcome). */
export interface PendingOutcome {
  command: 'pause' | 'resume' | 'cancel';
  /** cancel: at the period's end rather than now. */
  atPeriodEnd?: boolean;
  /** When the call went unanswered (wall time, ISO 8601). */
  since: string;
}

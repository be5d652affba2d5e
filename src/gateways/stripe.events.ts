import type Stripe from 'stripe';
import { fromGatewayAmount } from './amounts';
import { bankFromVpa, normaliseBank } from './banks';
import type { GatewayEvent, RefundResult } from './port';

/**
 * Stripe's events as Cadence reads them: the ones it subscribes to, and each one's meaning as a GatewayEvent
 * (payment, refund and subscription outcomes). The adapter verifies the signature before anything here runs.
 */

/** The events Cadence needs from Stripe; registerWebhook subscribes to exactly these. */
export const STRIPE_EVENTS = [
  'checkout.session.completed',
  'checkout.session.expired',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'payment_intent.payment_failed',
  'charge.refunded',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
];

/** The id of an expandable field: the string itself, or the expanded object's id. */
export const idOf = (v: unknown): string | null =>
  v == null
    ? null
    : typeof v === 'string'
      ? v
      : typeof (v as { id?: unknown }).id === 'string'
        ? (v as { id: string }).id
        : null;

/** Stripe's refund status -> Cadence's; null: not one Cadence reads. */
export function refundStatus(status: string | null | undefined): RefundResult['status'] | null {
  if (status === 'succeeded') return 'succeeded';
  if (status === 'failed' || status === 'canceled') return 'failed';
  if (status === 'pending' || status === 'requires_action') return 'pending';
  return null;
}

type Obj = Record<string, any>;

/** Payment method, bank and failure reason from a PaymentIntent or Charge when the event carries them expanded. */
export function paymentDetails(pi: unknown): {
  method: string | null;
  bank: string | null;
  failureReason: string | null;
  providerPaymentId: string | null;
} {
  const out = {
    method: null as string | null,
    bank: null as string | null,
    failureReason: null as string | null,
    providerPaymentId: idOf(pi),
  };
  if (!pi || typeof pi !== 'object') return out;
  const p = pi as Obj;
  const err = p.last_payment_error ?? p.last_setup_error;
  if (err)
    out.failureReason =
      err.decline_code && err.decline_code !== 'generic_decline' ? err.decline_code : (err.code ?? null);
  const charge = typeof p.latest_charge === 'object' && p.latest_charge ? (p.latest_charge as Obj) : null;
  const pmd: Obj | null =
    charge?.payment_method_details ??
    (typeof p.payment_method === 'object' ? p.payment_method : null) ??
    err?.payment_method ??
    null;
  if (pmd?.type) {
    out.method = pmd.type;
    // The card's issuing bank; UPI names only the VPA, whose handle belongs to one PSP bank.
    const details = pmd[pmd.type] as Obj | undefined;
    out.bank = normaliseBank(details?.issuer) ?? (pmd.type === 'upi' ? bankFromVpa(details?.vpa) : null);
  }
  return out;
}

/** Unix seconds -> Date (null when absent). */
export const fromUnix = (v: unknown): Date | null =>
  typeof v === 'number' && Number.isFinite(v) ? new Date(v * 1000) : null;

/** A subscription's current period (on its first item since API 2025-03-31; on the subscription before). */
export function subscriptionPeriod(sub: Obj): { start: Date | null; end: Date | null } {
  const item = sub.items?.data?.[0] ?? {};
  return {
    start: fromUnix(item.current_period_start ?? sub.current_period_start),
    end: fromUnix(item.current_period_end ?? sub.current_period_end),
  };
}

/**
 * The period an invoice bills: its recurring line's (one-time lines such as a setup fee have start = end), else the
 * invoice's own period fields.
 */
export function invoicePeriod(invoice: Obj): { start: Date | null; end: Date | null } {
  const lines = (invoice.lines?.data ?? []) as Obj[];
  const line = lines.find((l) => l.period && Number(l.period.end) > Number(l.period.start)) ?? lines[0];
  return {
    start: fromUnix(line?.period?.start ?? invoice.period_start),
    end: fromUnix(line?.period?.end ?? invoice.period_end),
  };
}

/** Invoices that bill a subscription's period (the first, or a renewal). */
export const PERIOD_BILLING_REASONS = new Set(['subscription_create', 'subscription_cycle']);

/** The subscription fields every subscription kind carries, null unless the event says more. */
/** Collection paused only to keep the renewal's invoice as a draft until its debit may be asked for (docs/india.md). */
export const isRenewalHold = (pause: unknown): boolean =>
  (pause as { behavior?: string } | null)?.behavior === 'keep_as_draft';

const SUBSCRIPTION_FIELDS = { periodStart: null, periodEnd: null, trialEnd: null, attempt: null } as const;

/** Stripe's event -> GatewayEvent. Exported for tests; parseEvent verifies the signature first. */
export function normaliseStripeEvent(event: Stripe.Event): GatewayEvent {
  const obj = event.data.object as unknown as Obj;
  const base: GatewayEvent = {
    provider: 'stripe',
    eventId: event.id,
    rawType: event.type,
    kind: 'ignored',
    occurredAt: new Date(event.created * 1000),
    raw: event,
  };
  const money = (amount: unknown, currency: unknown) =>
    typeof amount === 'number' && typeof currency === 'string'
      ? { amount: fromGatewayAmount('stripe', amount, currency), currency: currency.toUpperCase() }
      : {};

  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      if (obj.mode === 'setup') {
        // A new mandate for a running subscription (the service's createMandateSetup).
        return {
          ...base,
          ...SUBSCRIPTION_FIELDS,
          kind: event.type === 'checkout.session.completed' ? 'subscription.mandate_setup' : 'ignored',
          subscriptionId: obj.metadata?.subscription_id ?? obj.client_reference_id ?? null,
          checkoutSessionId: obj.id,
          providerCustomerId: idOf(obj.customer),
          setupId: idOf(obj.setup_intent),
        };
      }
      if (obj.mode === 'subscription') {
        const d = paymentDetails(obj.setup_intent);
        // With the subscription expanded (the sandbox sends it so): its trial end, or its first period.
        const sub = typeof obj.subscription === 'object' && obj.subscription ? (obj.subscription as Obj) : null;
        const trialing = sub?.status === 'trialing';
        const period = sub && !trialing ? subscriptionPeriod(sub) : { start: null, end: null };
        return {
          ...base,
          ...SUBSCRIPTION_FIELDS,
          kind: event.type === 'checkout.session.completed' ? 'subscription.authorized' : 'ignored',
          subscriptionId: obj.metadata?.subscription_id ?? obj.client_reference_id ?? null,
          checkoutSessionId: obj.id,
          providerSubscriptionId: idOf(obj.subscription),
          providerCustomerId: idOf(obj.customer),
          method: d.method,
          bank: d.bank,
          periodStart: period.start,
          periodEnd: period.end,
          trialEnd: trialing ? fromUnix(sub!.trial_end) : null,
        };
      }
      // A completed session whose payment is still processing (bank debits) is settled by async_payment_*.
      if (obj.payment_status !== 'paid' && obj.payment_status !== 'no_payment_required') return base;
      const d = paymentDetails(obj.payment_intent);
      return {
        ...base,
        kind: 'payment.succeeded',
        paymentId: obj.metadata?.payment_id ?? obj.client_reference_id ?? null,
        checkoutSessionId: obj.id,
        providerPaymentId: d.providerPaymentId,
        providerCustomerId: idOf(obj.customer),
        ...money(obj.amount_total, obj.currency),
        method: d.method,
        bank: d.bank,
      };
    }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed': {
      const expired = event.type === 'checkout.session.expired';
      // A new mandate's page left without one: the subscription keeps the mandate it has.
      if (obj.mode === 'setup') return base;
      if (obj.mode === 'subscription') {
        const d = paymentDetails(obj.setup_intent);
        return {
          ...base,
          ...SUBSCRIPTION_FIELDS,
          kind: 'subscription.cancelled',
          subscriptionId: obj.metadata?.subscription_id ?? obj.client_reference_id ?? null,
          checkoutSessionId: obj.id,
          failureReason: d.failureReason,
          method: d.method,
          bank: d.bank,
          // The subscription checkout ended without a mandate (declined, failed, cancelled or timed out).
          checkoutFailed: true,
        };
      }
      const d = paymentDetails(obj.payment_intent);
      return {
        ...base,
        kind: expired ? 'payment.expired' : 'payment.failed',
        paymentId: obj.metadata?.payment_id ?? obj.client_reference_id ?? null,
        checkoutSessionId: obj.id,
        providerPaymentId: d.providerPaymentId,
        ...money(obj.amount_total, obj.currency),
        failureReason: expired ? null : (d.failureReason ?? 'payment_failed'),
        method: d.method,
        bank: d.bank,
      };
    }
    case 'payment_intent.payment_failed': {
      const d = paymentDetails(obj);
      const paymentId = obj.metadata?.payment_id ?? null;
      // Renewal PaymentIntents belong to invoices: invoice.payment_failed reports those. A declined attempt at a
      // subscription-mode Checkout names nothing of Cadence's either: Checkout refuses payment_intent_data (and
      // setup_intent_data) in that mode, and since API 2025-03-31.basil creates the subscription and its invoice only
      // once a payment succeeds, so neither the intent nor an invoice leads to the subscription.
      if (!paymentId) return base;
      return {
        ...base,
        kind: 'payment.failed',
        paymentId,
        providerPaymentId: obj.id,
        ...money(obj.amount, obj.currency),
        failureReason: d.failureReason ?? 'payment_failed',
        method: d.method,
        bank: d.bank,
      };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const status = event.type === 'refund.failed' ? 'failed' : refundStatus(obj.status);
      if (status !== 'succeeded' && status !== 'failed') return base;
      return {
        ...base,
        kind: status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
        paymentId: obj.metadata?.payment_id ?? null,
        refundId: obj.metadata?.refund_id ?? null,
        creditInvoiceId: obj.metadata?.credit_invoice_id ?? null,
        providerPaymentId: idOf(obj.payment_intent),
        providerRefundId: obj.id,
        ...money(obj.amount, obj.currency),
        failureReason: obj.failure_reason ?? null,
      };
    }
    // charge.refunded carries the cumulative refunded amount, not one refund: refund.* events report each refund.
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const sd = obj.parent?.subscription_details;
      const providerSubscriptionId = idOf(sd?.subscription ?? obj.subscription);
      if (!providerSubscriptionId) return base;
      const pi = obj.payments?.data?.[0]?.payment?.payment_intent ?? obj.payment_intent ?? null;
      const d = paymentDetails(pi);
      const paid = event.type === 'invoice.paid';
      // Only a period's invoice renews or duns a subscription. A one-off invoice of it (manual: a plan change's
      // adjustment that Cadence collects itself) is no period's charge; paid, it settles the Cadence invoice it names,
      // which waited for the customer's authentication when the debit was above the mandate's limit.
      if (typeof obj.billing_reason === 'string' && !PERIOD_BILLING_REASONS.has(obj.billing_reason)) {
        const invoiceId = obj.metadata?.invoice_id;
        if (!paid || typeof invoiceId !== 'string') return base;
        return {
          ...base,
          ...SUBSCRIPTION_FIELDS,
          kind: 'subscription.collection_paid',
          invoiceId,
          subscriptionId: sd?.metadata?.subscription_id ?? null,
          providerSubscriptionId,
          providerCustomerId: idOf(obj.customer),
          providerPaymentId: d.providerPaymentId,
          ...money(obj.amount_paid, obj.currency),
          method: d.method,
          bank: d.bank,
        };
      }
      const period = invoicePeriod(obj);
      return {
        ...base,
        ...SUBSCRIPTION_FIELDS,
        kind: paid ? 'subscription.charged' : 'subscription.charge_failed',
        periodStart: period.start,
        periodEnd: period.end,
        attempt: typeof obj.attempt_count === 'number' ? obj.attempt_count : null,
        subscriptionId: sd?.metadata?.subscription_id ?? obj.subscription_details?.metadata?.subscription_id ?? null,
        providerSubscriptionId,
        providerCustomerId: idOf(obj.customer),
        providerPaymentId: d.providerPaymentId,
        ...money(paid ? obj.amount_paid : obj.amount_due, obj.currency),
        failureReason: paid ? null : (d.failureReason ?? 'payment_failed'),
        authenticationUrl:
          !paid && d.failureReason === 'authentication_required' ? (obj.hosted_invoice_url ?? null) : null,
        method: d.method,
        bank: d.bank,
      };
    }
    case 'customer.subscription.updated': {
      const prev = (event.data as { previous_attributes?: Obj }).previous_attributes ?? {};
      // The payment method behind the mandate went (the customer revoked the mandate, or it expired): Stripe clears it
      // from the subscription, which has nothing left to debit.
      if (prev.default_payment_method && !obj.default_payment_method) {
        return {
          ...base,
          ...SUBSCRIPTION_FIELDS,
          kind: 'subscription.mandate_revoked',
          subscriptionId: obj.metadata?.subscription_id ?? null,
          providerSubscriptionId: obj.id,
          providerCustomerId: idOf(obj.customer),
        };
      }
      if (!('pause_collection' in prev)) return base;
      // A renewal held for its pre-debit notice (keep_as_draft, Cadence's hold_renewal) is no pause of the service.
      if (isRenewalHold(obj.pause_collection) || isRenewalHold(prev.pause_collection)) return base;
      return {
        ...base,
        ...SUBSCRIPTION_FIELDS,
        kind: obj.pause_collection ? 'subscription.paused' : 'subscription.resumed',
        subscriptionId: obj.metadata?.subscription_id ?? null,
        providerSubscriptionId: obj.id,
        providerCustomerId: idOf(obj.customer),
      };
    }
    case 'customer.subscription.deleted': {
      const period = subscriptionPeriod(obj);
      return {
        ...base,
        ...SUBSCRIPTION_FIELDS,
        kind: 'subscription.cancelled',
        subscriptionId: obj.metadata?.subscription_id ?? null,
        providerSubscriptionId: obj.id,
        providerCustomerId: idOf(obj.customer),
        periodStart: period.start,
        periodEnd: period.end,
        trialEnd: fromUnix(obj.trial_end),
        // A subscription only exists once its checkout completed: this ends a running one.
        checkoutFailed: false,
      };
    }
    default:
      return base;
  }
}

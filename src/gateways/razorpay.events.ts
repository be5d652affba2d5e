import { fromGatewayAmount } from './amounts';
import { bankFromVpa, normaliseBank } from './banks';
import type { GatewayEvent, RefundResult } from './port';

/**
 * Razorpay's events as Cadence reads them: the ones it subscribes to, and each one's meaning as a GatewayEvent
 * (payment link, refund and subscription outcomes). The adapter verifies the signature before anything here runs.
 */

type Obj = Record<string, any>;

/** The events Cadence needs from Razorpay; registerWebhook subscribes to exactly these. */
export const RAZORPAY_EVENTS = [
  'payment_link.paid',
  'payment_link.cancelled',
  'payment_link.expired',
  'payment.failed',
  'refund.processed',
  'refund.failed',
  'subscription.authenticated',
  'subscription.activated',
  'subscription.charged',
  'subscription.pending',
  'subscription.halted',
  'subscription.cancelled',
  'subscription.completed',
  'subscription.paused',
  'subscription.resumed',
];

/** Razorpay's refund status -> Cadence's; null: not one Cadence reads. */
export function refundStatus(status: string | null | undefined): RefundResult['status'] | null {
  if (status === 'processed') return 'succeeded';
  if (status === 'failed') return 'failed';
  if (status === 'pending' || status === 'created') return 'pending';
  return null;
}

/**
 * What a payment entity says about how it was paid and why it failed. The bank: `bank` (netbanking, e-mandate),
 * else the card's `issuer`, else the PSP bank of the UPI VPA's handle (Razorpay names none for UPI).
 */
function paymentDetails(p: Obj | undefined) {
  if (!p) return { method: null, bank: null, failureReason: null, providerPaymentId: null };
  return {
    method: (p.method as string) ?? null,
    bank: normaliseBank(p.bank) ?? normaliseBank(p.card?.issuer) ?? bankFromVpa(p.vpa ?? p.upi?.vpa),
    failureReason: (p.error_reason as string) ?? (p.error_code as string) ?? null,
    providerPaymentId: (p.id as string) ?? null,
  };
}

/** Razorpay's webhook body -> GatewayEvent. Exported for tests; parseEvent verifies the signature first. */
export function normaliseRazorpayEvent(body: Obj, eventId: string): GatewayEvent {
  const type = String(body.event ?? '');
  const payload = (body.payload ?? {}) as Obj;
  const link = payload.payment_link?.entity as Obj | undefined;
  const payment = payload.payment?.entity as Obj | undefined;
  const refund = payload.refund?.entity as Obj | undefined;
  const sub = payload.subscription?.entity as Obj | undefined;
  const base: GatewayEvent = {
    provider: 'razorpay',
    eventId,
    rawType: type,
    kind: 'ignored',
    occurredAt: new Date((Number(body.created_at) || Math.floor(Date.now() / 1000)) * 1000),
    raw: body,
  };
  const money = (amount: unknown, currency: unknown) =>
    typeof amount === 'number' && typeof currency === 'string'
      ? { amount: fromGatewayAmount('razorpay', amount, currency), currency: currency.toUpperCase() }
      : {};
  const d = paymentDetails(payment);

  switch (type) {
    case 'payment_link.paid':
      return {
        ...base,
        kind: 'payment.succeeded',
        paymentId: link?.reference_id ?? link?.notes?.payment_id ?? null,
        checkoutSessionId: link?.id ?? null,
        providerPaymentId: d.providerPaymentId,
        providerCustomerId: payment?.customer_id ?? null,
        ...money(payment?.amount ?? link?.amount_paid, payment?.currency ?? link?.currency),
        method: d.method,
        bank: d.bank,
      };
    case 'payment_link.cancelled':
    case 'payment_link.expired':
      return {
        ...base,
        kind: 'payment.expired',
        paymentId: link?.reference_id ?? link?.notes?.payment_id ?? null,
        checkoutSessionId: link?.id ?? null,
        ...money(link?.amount, link?.currency),
      };
    case 'payment.failed': {
      const notes = (payment?.notes ?? {}) as Obj;
      if (notes.payment_id) {
        return {
          ...base,
          kind: 'payment.failed',
          paymentId: notes.payment_id,
          checkoutSessionId: notes.payment_link_id ?? null,
          providerPaymentId: d.providerPaymentId,
          ...money(payment?.amount, payment?.currency),
          failureReason: d.failureReason ?? 'payment_failed',
          method: d.method,
          bank: d.bank,
        };
      }
      // A subscription's payment: the payment entity names its subscription (`subscription_id`, as the official SDK
      // types it), and its notes carry Cadence's id when they are the subscription's. While the subscription is
      // `created` this is a declined attempt to authorise its mandate (the hosted page stays open for another); a
      // renewal's failure is reported again by subscription.pending / .halted, which move the subscription.
      const providerSubscriptionId = (payment?.subscription_id as string) ?? null;
      if (providerSubscriptionId || notes.subscription_id) {
        return {
          ...base,
          kind: 'subscription.authorization_failed',
          subscriptionId: notes.subscription_id ?? null,
          checkoutSessionId: providerSubscriptionId,
          providerSubscriptionId,
          providerCustomerId: payment?.customer_id ?? null,
          providerPaymentId: d.providerPaymentId,
          ...money(payment?.amount, payment?.currency),
          failureReason: d.failureReason ?? 'payment_failed',
          method: d.method,
          bank: d.bank,
          periodStart: null,
          periodEnd: null,
          trialEnd: null,
          attempt: null,
        };
      }
      return base;
    }
    case 'refund.processed':
    case 'refund.failed':
      return {
        ...base,
        kind: type === 'refund.processed' ? 'refund.succeeded' : 'refund.failed',
        paymentId: payment?.notes?.payment_id ?? null,
        refundId: refund?.notes?.refund_id ?? null,
        creditInvoiceId: refund?.notes?.credit_invoice_id ?? null,
        providerPaymentId: refund?.payment_id ?? d.providerPaymentId,
        providerRefundId: refund?.id ?? null,
        ...money(refund?.amount, refund?.currency),
      };
  }

  if (type.startsWith('subscription.') && sub) {
    const at = (v: unknown) => (typeof v === 'number' && v > 0 ? new Date(v * 1000) : null);
    const period = { periodStart: at(sub.current_start), periodEnd: at(sub.current_end) };
    // auth_attempts: the charge attempts of the current cycle.
    const attempt = typeof sub.auth_attempts === 'number' && sub.auth_attempts > 0 ? sub.auth_attempts : null;
    const common = {
      ...base,
      subscriptionId: sub.notes?.subscription_id ?? null,
      checkoutSessionId: sub.id ?? null,
      providerSubscriptionId: sub.id ?? null,
      providerCustomerId: sub.customer_id ?? null,
      providerPaymentId: d.providerPaymentId,
      method: d.method ?? sub.payment_method ?? null,
      bank: d.bank,
      failureReason: null,
      periodStart: null,
      periodEnd: null,
      trialEnd: null,
      attempt: null,
    };
    switch (type) {
      case 'subscription.authenticated':
      case 'subscription.activated': {
        // Authorised with a later start (start_at): a trial until the first charge.
        const trial = sub.status === 'authenticated' && sub.current_start == null;
        return {
          ...common,
          kind: 'subscription.authorized',
          ...(trial ? { trialEnd: at(sub.start_at ?? sub.charge_at) } : period),
        };
      }
      case 'subscription.charged':
        return {
          ...common,
          kind: 'subscription.charged',
          ...period,
          attempt,
          ...money(payment?.amount, payment?.currency),
        };
      case 'subscription.pending':
      case 'subscription.halted':
        return {
          ...common,
          kind: 'subscription.charge_failed',
          ...period,
          attempt,
          ...money(payment?.amount, payment?.currency),
          failureReason: d.failureReason ?? 'payment_failed',
          // The page where the customer authenticates the debit: the invoice's short_url, when the event carries it.
          authenticationUrl:
            d.failureReason === 'authentication_required'
              ? ((payload.invoice?.entity as Obj | undefined)?.short_url ?? null)
              : null,
        };
      case 'subscription.cancelled':
        return {
          ...common,
          kind: 'subscription.cancelled',
          failureReason: d.failureReason,
          // Never authorised (no customer yet, nothing paid): the checkout failed or was abandoned.
          checkoutFailed: !sub.customer_id && !Number(sub.paid_count) && sub.current_start == null,
        };
      case 'subscription.completed':
        return { ...common, kind: 'subscription.completed' };
      case 'subscription.paused':
        return { ...common, kind: 'subscription.paused' };
      case 'subscription.resumed':
        return { ...common, kind: 'subscription.resumed' };
    }
  }
  return base;
}

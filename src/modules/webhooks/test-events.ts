import crypto from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { make, Mode } from '../../core/entity';
import type { Serializer } from '../../core/serialize';
import { Payment, PaymentStatus } from '../payments';
import { Provider } from '../providers';

/**
 * The event kinds the test trigger can simulate (docs/webhooks.md, "Test events"): every kind the service sends, each
 * with a sample object in the shape `GET /<resource>/{id}` answers. The samples are never stored.
 */
export const TEST_EVENT_TYPES = [
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'subscription.created',
  'subscription.activated',
  'subscription.trial_started',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'subscription.cancellation_removed',
  'subscription.payment_failed',
  'subscription.payment_succeeded',
  'subscription.halted',
  'subscription.completed',
  'subscription.plan_changed',
  'subscription.plan_change_scheduled',
  'subscription.scheduled_change_removed',
  'subscription.mandate_updated',
  'subscription.mandate_revoked',
  'invoice.created',
  'invoice.paid',
  'invoice.upcoming',
  'invoice.payment_action_required',
  'credit_note.created',
  'e_invoice.registered',
  'e_invoice.failed',
  'e_invoice.cancelled',
  'webhook_endpoint.disabled',
] as const;
export type TestEventType = (typeof TEST_EVENT_TYPES)[number];

export const isTestEventType = (t: string): t is TestEventType => (TEST_EVENT_TYPES as readonly string[]).includes(t);

const DAY = 86_400_000;
const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

/** The sample object of an event kind, as REST shows it (snake_case, every field present). */
export function sampleObject(
  type: TestEventType,
  merchantId: string,
  now: Date,
  serializer: Serializer,
): Record<string, unknown> {
  const [resource] = type.split('.');
  if (resource === 'payment') return serializer.toRest(samplePayment(type, merchantId, now));
  if (resource === 'subscription') {
    // As real subscription events carry it (docs/subscriptions.md, "Scheduled changes").
    const change = type === 'subscription.plan_change_scheduled' ? sampleScheduledChange(now) : null;
    return {
      ...serializer.toRest(sampleSubscription(type, now), 'BillingSubscription'),
      scheduled_change: change && serializer.toRest(change, 'ScheduledChange'),
    };
  }
  if (resource === 'webhook_endpoint') return serializer.toRest(sampleEndpoint(now), 'WebhookEndpoint');
  const invoice = sampleInvoice(type, now);
  return {
    ...serializer.toRest(invoice, 'Invoice'),
    supplier: serializer.toRest(invoice.supplier, 'InvoiceSupplier'),
    recipient: serializer.toRest(invoice.recipient, 'InvoiceRecipient'),
    line_items: invoice.lineItems.map((l) => serializer.toRest(l, 'InvoiceLineItem')),
  };
}

/** A payment as the REST API shows it: what merchants' receivers see on a real payment event. */
function samplePayment(type: TestEventType, merchantId: string, now: Date): Payment {
  const id = uuidv7();
  const session = `cs_test_${hex(12)}`;
  const failed = type === 'payment.failed';
  const refunded = type === 'payment.refunded';
  return make(Payment, {
    id,
    createdAt: new Date(now.getTime() - 60_000),
    updatedAt: now,
    merchantId,
    mode: Mode.TEST,
    amount: 49900,
    amountTotal: 49900,
    amountRefunded: refunded ? 49900 : 0,
    currency: 'INR',
    status: failed ? PaymentStatus.FAILED : refunded ? PaymentStatus.REFUNDED : PaymentStatus.SUCCEEDED,
    customerId: uuidv7(),
    customerEmail: 'jenny.rosen@example.com',
    customerName: 'Jenny Rosen',
    customerPhone: '+919876543210',
    referenceId: 'order_test_1001',
    metadata: { cadence_test_event: 'true' },
    provider: Provider.STRIPE,
    providerPaymentId: `pi_test_${hex(12)}`,
    checkoutSessionId: session,
    checkoutUrl: `https://checkout.example.com/pay/${session}`,
    successUrl: `https://merchant.example.com/orders/order_test_1001/success?payment_id=${id}`,
    cancelUrl: 'https://merchant.example.com/orders/order_test_1001/cancel',
    failureReason: failed ? 'card_declined' : null,
    method: 'card',
    bank: null,
  });
}

/** The status a subscription is in after each subscription event. */
const SUBSCRIPTION_STATUS: Record<string, string> = {
  created: 'created',
  trial_started: 'trialing',
  paused: 'paused',
  cancelled: 'cancelled',
  payment_failed: 'past_due',
  halted: 'halted',
  completed: 'completed',
};

/** A move to another plan at the sample subscription's period end. */
function sampleScheduledChange(now: Date): Record<string, unknown> {
  return { planId: uuidv7(), priceId: uuidv7(), effectiveAt: new Date(now.getTime() + 20 * DAY) };
}

/** A monthly INR subscription (GraphQL field names; the serializer writes them as REST does). */
function sampleSubscription(type: TestEventType, now: Date): Record<string, unknown> {
  const kind = type.slice('subscription.'.length);
  const status = SUBSCRIPTION_STATUS[kind] ?? 'active';
  const start = new Date(now.getTime() - 10 * DAY);
  const end = new Date(start.getTime() + 30 * DAY);
  const trialing = status === 'trialing';
  const ended = status === 'cancelled' || status === 'completed' || status === 'halted';
  return {
    id: uuidv7(),
    object: 'subscription',
    livemode: false,
    createdAt: new Date(now.getTime() - 40 * DAY),
    updatedAt: now,
    status,
    customerId: uuidv7(),
    productId: uuidv7(),
    planId: uuidv7(),
    priceId: uuidv7(),
    amount: 49900,
    currency: 'INR',
    billingFrequency: 'monthly',
    billingInterval: 1,
    setupFee: 0,
    trialPeriodDays: trialing ? 14 : 0,
    trialStart: trialing ? now : null,
    trialEnd: trialing ? new Date(now.getTime() + 14 * DAY) : null,
    trialEndAction: 'start_subscription',
    currentPeriodStart: status === 'created' ? null : start,
    currentPeriodEnd: status === 'created' ? null : end,
    cancelAtPeriodEnd: false,
    cancelledAt: status === 'cancelled' ? now : null,
    pausedAt: status === 'paused' ? now : null,
    endedAt: ended ? now : null,
    cyclesCompleted: status === 'created' || trialing ? 0 : 2,
    maxCycles: status === 'completed' ? 2 : null,
    retryAttempt: 0,
    creditBalance: 0,
    periodDiscount: 0,
    discountCyclesUsed: 0,
    taxRateBps: 1800,
    taxTreatment: 'intra',
    provider: Provider.RAZORPAY,
    providerCustomerId: `cust_test_${hex(7)}`,
    providerSubscriptionId: `sub_test_${hex(7)}`,
    metadata: { cadence_test_event: 'true' },
    successUrl: 'https://merchant.example.com/billing/success',
    cancelUrl: 'https://merchant.example.com/billing/cancel',
  };
}

interface SampleInvoice extends Record<string, unknown> {
  supplier: Record<string, unknown>;
  recipient: Record<string, unknown>;
  lineItems: Record<string, unknown>[];
}

/** An INR tax invoice (CGST + SGST at 18%) or a refund's credit note against one. */
function sampleInvoice(type: TestEventType, now: Date): SampleInvoice {
  const creditNote = type === 'credit_note.created';
  const paid = type === 'invoice.paid';
  const draft = type === 'invoice.upcoming';
  const start = draft ? new Date(now.getTime() + 2 * DAY) : now;
  const end = new Date(start.getTime() + 30 * DAY);
  const subtotal = 49900;
  const half = Math.round((subtotal * 1800) / 10000 / 2);
  const total = subtotal + 2 * half;
  const fy = now.getUTCMonth() >= 3 ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  const series = `${fy}-${String((fy + 1) % 100).padStart(2, '0')}`;
  return {
    id: uuidv7(),
    object: creditNote ? 'credit_note' : 'invoice',
    livemode: false,
    createdAt: now,
    issuedAt: now,
    type: creditNote ? 'credit_note' : 'invoice',
    number: draft ? null : creditNote ? `CN/${series}/000001` : `INV/${series}/000042`,
    status: creditNote ? 'issued' : paid ? 'paid' : 'open',
    billingReason: creditNote ? 'refund' : 'subscription_cycle',
    customerId: uuidv7(),
    subscriptionId: creditNote ? null : uuidv7(),
    paymentId: paid || creditNote ? uuidv7() : null,
    relatedInvoiceId: creditNote ? uuidv7() : null,
    refundId: creditNote ? uuidv7() : null,
    currency: 'INR',
    subtotal,
    discountAmount: 0,
    taxRateBps: 1800,
    cgstAmount: half,
    sgstAmount: half,
    igstAmount: 0,
    taxAmount: 2 * half,
    total,
    creditApplied: 0,
    amountPaid: paid ? total : 0,
    amountDue: paid || creditNote ? 0 : total,
    amountCredited: 0,
    paidAt: paid ? now : null,
    periodStart: creditNote ? null : start,
    periodEnd: creditNote ? null : end,
    placeOfSupply: '29',
    supplierGstin: '29ABCDE1234F1Z5',
    customerGstin: null,
    supplier: { name: 'Acme Software Pvt Ltd', gstin: '29ABCDE1234F1Z5', stateCode: '29', address: 'Bengaluru' },
    recipient: { name: 'Jenny Rosen', email: 'jenny.rosen@example.com', gstin: null, stateCode: '29', address: null },
    lineItems: [
      {
        description: creditNote ? 'Refund: Pro (monthly)' : 'Pro (monthly)',
        quantity: 1,
        unitAmount: subtotal,
        amount: subtotal,
        cgstAmount: half,
        sgstAmount: half,
        igstAmount: 0,
        hsnSac: '998314',
        proration: false,
        periodStart: creditNote ? null : start,
        periodEnd: creditNote ? null : end,
      },
    ],
    ...(draft ? { nextPaymentAttempt: new Date(now.getTime() + 2 * DAY) } : {}),
    ...(type === 'invoice.payment_action_required'
      ? { hostedAuthenticationUrl: 'https://checkout.example.com/authenticate/inv_test' }
      : {}),
    ...(type.startsWith('e_invoice.') ? sampleEInvoice(type, now) : {}),
  };
}

/** An e-invoice's registration as its events carry it (docs/india.md, "E-invoicing"). */
function sampleEInvoice(type: TestEventType, now: Date): Record<string, unknown> {
  if (type === 'e_invoice.failed')
    return { customerGstin: '27AAPFU0939F1ZV', eInvoiceStatus: 'failed', eInvoiceError: 'portal unreachable' };
  return {
    customerGstin: '27AAPFU0939F1ZV',
    eInvoiceStatus: type === 'e_invoice.cancelled' ? 'cancelled' : 'registered',
    irn: hex(32),
    ackNo: '112600000000042',
    ackDate: now,
    signedQr: 'eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl',
    eInvoiceCancelledAt: type === 'e_invoice.cancelled' ? now : null,
  };
}

function sampleEndpoint(now: Date): Record<string, unknown> {
  return {
    id: uuidv7(),
    object: 'webhook_endpoint',
    livemode: false,
    createdAt: new Date(now.getTime() - 30 * DAY),
    updatedAt: now,
    url: 'https://merchant.example.com/webhooks/cadence',
    mode: Mode.TEST,
    description: 'Order fulfilment',
    enabled: false,
    enabledEvents: ['*'],
    disabledReason: 'failing',
    previousSecretExpiresAt: null,
  };
}

import type Stripe from 'stripe';
import { normaliseRazorpayEvent } from '../../src/gateways/razorpay.events';
import { normaliseStripeEvent } from '../../src/gateways/stripe.events';
import { mandateOutcome } from '../../src/modules/analytics/autopay.service';
import { SubscriptionStatus } from '../../src/modules/subscriptions/subscription.machine';

/**
 * A declined attempt to authorise a subscription's mandate, as the real gateways report it (payload shapes from their
 * documentation and official SDK types): which subscription it belongs to, the method, bank and decline reason, and
 * the attempt id that several events about one attempt share.
 */

const SUB_ID = '0193a5b0-7c1e-7000-8000-000000000001';

/** Razorpay's payment entity (docs: Payments API / webhook payloads), as payment.failed carries it. */
function razorpayPayment(over: Record<string, unknown> = {}) {
  return {
    id: 'pay_29QQoUBi66xm2f',
    entity: 'payment',
    amount: 0,
    currency: 'INR',
    status: 'failed',
    order_id: 'order_DGoUOaUvWLGnEO',
    invoice_id: 'inv_DGoUOZNF6uGBcA',
    subscription_id: 'sub_00000000000001',
    international: false,
    method: 'upi',
    amount_refunded: 0,
    refund_status: null,
    captured: false,
    description: 'Mandate authorisation',
    card_id: null,
    bank: null,
    wallet: null,
    vpa: 'gaurav.kumar@okhdfcbank',
    email: 'gaurav.kumar@example.com',
    contact: '+919000090000',
    customer_id: null,
    token_id: null,
    notes: { subscription_id: SUB_ID },
    fee: null,
    tax: null,
    error_code: 'BAD_REQUEST_ERROR',
    error_description: 'Payment was unsuccessful as the UPI app is not responding.',
    error_source: 'customer',
    error_step: 'payment_authorization',
    error_reason: 'payment_cancelled',
    acquirer_data: { rrn: null },
    created_at: 1567674599,
    ...over,
  };
}

const razorpayBody = (event: string, entities: Record<string, unknown>) => ({
  entity: 'event',
  account_id: 'acc_BFQ7uQEaa7j2z7',
  event,
  contains: Object.keys(entities),
  payload: Object.fromEntries(Object.entries(entities).map(([k, v]) => [k, { entity: v }])),
  created_at: 1567674606,
});

describe('Razorpay payment.failed of a subscription', () => {
  it('is a declined authorisation attempt of that subscription: method, bank from the VPA handle, reason', () => {
    const e = normaliseRazorpayEvent(razorpayBody('payment.failed', { payment: razorpayPayment() }), 'evt_1');
    expect(e).toMatchObject({
      provider: 'razorpay',
      eventId: 'evt_1',
      rawType: 'payment.failed',
      kind: 'subscription.authorization_failed',
      subscriptionId: SUB_ID,
      providerSubscriptionId: 'sub_00000000000001',
      checkoutSessionId: 'sub_00000000000001',
      providerPaymentId: 'pay_29QQoUBi66xm2f',
      method: 'upi',
      bank: 'HDFC',
      failureReason: 'payment_cancelled',
      amount: 0,
      currency: 'INR',
    });
  });

  it('reads a card issuer and an e-mandate bank by their IFSC codes; without error_reason, the error code', () => {
    const card = normaliseRazorpayEvent(
      razorpayBody('payment.failed', {
        payment: razorpayPayment({
          method: 'card',
          vpa: null,
          card_id: 'card_1',
          card: { id: 'card_1', entity: 'card', last4: '1111', network: 'Visa', type: 'credit', issuer: 'KKBK' },
          error_reason: null,
        }),
      }),
      'evt_2',
    );
    expect(card).toMatchObject({
      kind: 'subscription.authorization_failed',
      method: 'card',
      bank: 'KOTAK',
      failureReason: 'BAD_REQUEST_ERROR',
    });
    const emandate = normaliseRazorpayEvent(
      razorpayBody('payment.failed', {
        payment: razorpayPayment({ method: 'emandate', vpa: null, bank: 'SBIN', error_reason: 'mandate_rejected' }),
      }),
      'evt_3',
    );
    expect(emandate).toMatchObject({
      kind: 'subscription.authorization_failed',
      method: 'emandate',
      bank: 'SBI',
      failureReason: 'mandate_rejected',
    });
  });

  it('is tied by either reference alone: the subscription on the payment, or Cadence id in its notes', () => {
    const byGateway = normaliseRazorpayEvent(
      razorpayBody('payment.failed', { payment: razorpayPayment({ notes: {} }) }),
      'evt_4',
    );
    expect(byGateway).toMatchObject({
      kind: 'subscription.authorization_failed',
      subscriptionId: null,
      providerSubscriptionId: 'sub_00000000000001',
    });
    const byNotes = normaliseRazorpayEvent(
      razorpayBody('payment.failed', { payment: razorpayPayment({ subscription_id: undefined }) }),
      'evt_5',
    );
    expect(byNotes).toMatchObject({
      kind: 'subscription.authorization_failed',
      subscriptionId: SUB_ID,
      providerSubscriptionId: null,
    });
  });

  it("leaves a payment link's failure to payments, and a payment naming nothing of Cadence's alone", () => {
    const link = normaliseRazorpayEvent(
      razorpayBody('payment.failed', {
        payment: razorpayPayment({
          subscription_id: undefined,
          notes: { payment_id: 'p-1', payment_link_id: 'plink_1' },
        }),
      }),
      'evt_6',
    );
    expect(link).toMatchObject({ kind: 'payment.failed', paymentId: 'p-1' });
    const other = normaliseRazorpayEvent(
      razorpayBody('payment.failed', { payment: razorpayPayment({ subscription_id: undefined, notes: {} }) }),
      'evt_7',
    );
    expect(other.kind).toBe('ignored');
  });

  it('reports the same decline as the subscription.cancelled that carries the same payment (the checkout ended after it)', () => {
    const payment = razorpayPayment({ error_reason: 'card_declined' });
    const failed = normaliseRazorpayEvent(razorpayBody('payment.failed', { payment }), 'evt_8');
    const subscription = {
      id: 'sub_00000000000001',
      entity: 'subscription',
      status: 'cancelled',
      customer_id: null,
      paid_count: 0,
      current_start: null,
      notes: payment.notes,
      payment_method: 'upi',
    };
    const cancelled = normaliseRazorpayEvent(
      razorpayBody('subscription.cancelled', { subscription, payment }),
      'evt_9',
    );
    expect(cancelled).toMatchObject({
      kind: 'subscription.cancelled',
      checkoutFailed: true,
      failureReason: 'card_declined',
    });
    expect(failed).toMatchObject({ failureReason: 'card_declined', subscriptionId: cancelled.subscriptionId });
  });
});

describe('mandateOutcome of a declined attempt', () => {
  const declined = normaliseRazorpayEvent(razorpayBody('payment.failed', { payment: razorpayPayment() }), 'evt_10');

  it('is a failed attempt while the subscription waits at its checkout', () => {
    expect(mandateOutcome(SubscriptionStatus.CREATED, declined)).toEqual({
      status: 'failed',
      failureReason: 'payment_cancelled',
    });
  });

  it("is none once the mandate is authorised: at Razorpay the same event reports a renewal's failed payment", () => {
    for (const status of [
      SubscriptionStatus.ACTIVE,
      SubscriptionStatus.PAST_DUE,
      SubscriptionStatus.TRIALING,
      SubscriptionStatus.CANCELLED,
    ]) {
      expect(mandateOutcome(status, declined)).toBeNull();
    }
  });
});

/** Stripe's events (API 2026-10-28.endive, the SDK's): the envelope around one object. */
const stripeEvent = (type: string, object: Record<string, unknown>) =>
  ({
    id: 'evt_1SaNf2',
    object: 'event',
    api_version: '2026-10-28.endive',
    created: 1795499681,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  }) as unknown as Stripe.Event;

/** A SetupIntent whose confirmation failed (docs: The SetupIntent object, last_setup_error), as a subscription-mode Checkout with a trial leaves it. */
const failedSetupIntent = {
  id: 'seti_1SaNf2Lz',
  object: 'setup_intent',
  customer: null,
  description: null,
  last_setup_error: {
    code: 'card_declined',
    decline_code: 'insufficient_funds',
    doc_url: 'https://stripe.com/docs/error-codes/card-declined',
    message: 'Your card has insufficient funds.',
    payment_method: {
      id: 'pm_1SaNf2',
      object: 'payment_method',
      type: 'card',
      card: { brand: 'visa', last4: '9995', country: 'IN', funding: 'credit', issuer: 'HDFC Bank' },
    },
    type: 'card_error',
  },
  latest_attempt: 'setatt_1SaNf2Lz',
  metadata: {},
  payment_method: null,
  status: 'requires_payment_method',
  usage: 'off_session',
};

/** A PaymentIntent whose first payment was declined (docs: The PaymentIntent object), as a subscription-mode Checkout leaves it. */
const failedPaymentIntent = {
  id: 'pi_3SaNf2',
  object: 'payment_intent',
  amount: 49900,
  currency: 'inr',
  customer: null,
  description: null,
  last_payment_error: {
    charge: 'ch_3SaNf2',
    code: 'card_declined',
    decline_code: 'generic_decline',
    message: 'Your card was declined.',
    payment_method: { id: 'pm_1SaNf3', object: 'payment_method', type: 'upi', upi: { vpa: 'asha@okicici' } },
    type: 'card_error',
  },
  latest_charge: 'ch_3SaNf2',
  metadata: {},
  payment_details: { customer_reference: null, order_reference: null },
  status: 'requires_payment_method',
};

describe('Stripe: a declined attempt at a subscription-mode Checkout', () => {
  it("names nothing of Cadence's, so it cannot be given to a subscription (setup_intent.setup_failed, payment_intent.payment_failed)", () => {
    expect(normaliseStripeEvent(stripeEvent('setup_intent.setup_failed', failedSetupIntent)).kind).toBe('ignored');
    expect(normaliseStripeEvent(stripeEvent('payment_intent.payment_failed', failedPaymentIntent)).kind).toBe(
      'ignored',
    );
  });

  it('ended by the checkout, carries the method, bank and reason of the expanded intent', () => {
    const session = {
      id: 'cs_test_a1',
      object: 'checkout.session',
      mode: 'subscription',
      status: 'expired',
      client_reference_id: SUB_ID,
      metadata: { subscription_id: SUB_ID },
      subscription: null,
      customer: null,
    };
    const expired = normaliseStripeEvent(
      stripeEvent('checkout.session.expired', { ...session, setup_intent: failedSetupIntent }),
    );
    expect(expired).toMatchObject({
      kind: 'subscription.cancelled',
      checkoutFailed: true,
      subscriptionId: SUB_ID,
      method: 'card',
      bank: 'HDFC',
      failureReason: 'insufficient_funds',
    });
    const completed = normaliseStripeEvent(
      stripeEvent('checkout.session.completed', {
        ...session,
        status: 'complete',
        setup_intent: { ...failedSetupIntent, status: 'succeeded', last_setup_error: null, latest_attempt: 'setatt_2' },
        subscription: 'sub_1',
      }),
    );
    expect(completed).toMatchObject({ kind: 'subscription.authorized', subscriptionId: SUB_ID });
  });
});

import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { request } from '../harness/app';
import { submitCheckout } from '../harness/checkout';
import { connect, Connected, countRows, postEvent, razorpayEvent, signedHeaders } from '../payments/helpers';
import { createSubscription, events, ok, recurringPlan, sandboxEventsAbout } from '../subscriptions/helpers';

/**
 * Autopay (docs/analytics.md): an autopay attempt is one mandate checkout completed or failed at the
 * gateway. A declined try whose checkout stays open (the sandbox's keep_open, as the real gateways do) is reported by
 * the gateway's own event through the verified webhook path and leaves the subscription `created`: the checkout counts
 * as failed until a later try on it succeeds, and then as authorised, one attempt either way.
 */

const h = useHarness();
jest.setTimeout(120_000);

const EMPTY = {
  attempts: 0,
  authorized: 0,
  failed: 0,
  success_rate: null,
  by_method: [],
  failure_reasons: [],
  banks: [],
  pre_debit_notices: { sent: 0, renewals: 0, retries: 0, collections: 0, declined: 0 },
  authentication: { required: 0, completed: 0 },
};

/** The autopay answer for exactly one attempt: authorised, or failed for `reason`. */
function oneAttempt(
  a: { method: string; bank: string | null } & ({ authorized: true } | { authorized: false; reason: string }),
) {
  const won = a.authorized ? 1 : 0;
  return {
    attempts: 1,
    authorized: won,
    failed: 1 - won,
    success_rate: won,
    by_method: [{ method: a.method, attempts: 1, authorized: won, success_rate: won }],
    failure_reasons: a.authorized ? [] : [{ reason: a.reason, count: 1 }],
    banks: [{ bank: a.bank, attempts: 1, authorized: won, success_rate: won }],
    pre_debit_notices: { sent: 0, renewals: 0, retries: 0, collections: 0, declined: 0 },
    authentication: { required: 0, completed: 0 },
  };
}

async function autopay(m: TestMerchant) {
  const { from: _f, to: _t, ...rest } = await ok(m.test.get('/analytics/autopay'));
  return rest;
}

describe('Razorpay: a declined UPI attempt, then a successful one on the same checkout', () => {
  let m: TestMerchant;
  let rp: Connected;
  let sub: any;
  let declinedAt: string;

  /** After the decline and then the success on the same checkout, by hand: one attempt, authorised by UPI (HDFC). */
  const BOTH = oneAttempt({ method: 'upi', bank: 'HDFC', authorized: true });

  beforeAll(async () => {
    m = await h.merchant();
    rp = await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    sub = await createSubscription(m.test, plan.id, { provider: 'razorpay' });
  });

  it('the decline keeps the checkout open: back to its page, the subscription still created and its trail unchanged', async () => {
    const trail = await events(m.test, sub.id);
    const r = await submitCheckout(sub.checkout_url, {
      outcome: 'success',
      method: 'upi',
      vpa: 'declined@sandbox',
      keep_open: 'true',
    });
    expect(r.status).toBe(303);
    declinedAt = r.location!;
    expect(declinedAt).toBe(`${sub.checkout_url}?declined=card_declined`);
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'created' });
    expect(await events(m.test, sub.id)).toEqual(trail);
    // The gateway reported the attempt with its own event, delivered (and answered) before the redirect.
    expect((await sandboxEventsAbout(h.app, sub)).map((e) => [e.type, e.delivered])).toEqual([
      ['payment.failed', true],
    ]);
    const page = await request(declinedAt);
    expect(page.status).toBe(200);
    expect(page.text).toContain('The last attempt was declined (card_declined)');
    expect(page.text).toContain('<form method="post"');
  });

  it('counts the declined attempt at once', async () => {
    expect(await autopay(m)).toEqual(
      oneAttempt({ method: 'upi', bank: null, authorized: false, reason: 'card_declined' }),
    );
  });

  it('a successful try on the same checkout authorises the mandate: still one attempt, now authorised', async () => {
    const r = await submitCheckout(sub.checkout_url, { outcome: 'success', method: 'upi', vpa: 'ravi@okhdfcbank' });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`https://merchant.example/welcome?sub=${sub.id}`);
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'active' });
    expect(await autopay(m)).toEqual(BOTH);
    const g = await m.test.gql('{ autopay { attempts authorized failed successRate } }');
    expect(g.data.autopay).toEqual({ attempts: 1, authorized: 1, failed: 0, successRate: 1 });
  });

  it('the decline reported again after the success (the same event, or under another event id) changes nothing', async () => {
    const [failed] = (await sandboxEventsAbout(h.app, sub)).filter((e) => e.type === 'payment.failed');
    const same = await postEvent(rp.connection.webhook_url, {
      payload: failed.body,
      headers: signedHeaders('razorpay', rp.webhookSecret, failed.body, failed.id),
    });
    expect(same.body).toEqual({ received: true, duplicate: true });
    const id = `evt_${crypto.randomBytes(7).toString('hex')}`;
    const again = await postEvent(rp.connection.webhook_url, {
      payload: failed.body,
      headers: signedHeaders('razorpay', rp.webhookSecret, failed.body, id),
    });
    expect(again.body).toEqual({ received: true, duplicate: false });
    expect(await autopay(m)).toEqual(BOTH);
    expect(await countRows(h.app, 'mandate_attempts', 'subscription_id = ?', [sub.id])).toBe(1);
  });

  it("a failed payment of the authorised subscription (a renewal's) is no authorisation attempt and changes nothing", async () => {
    const before = await ok(m.test.get(`/subscriptions/${sub.id}`));
    const trail = await events(m.test, sub.id);
    const payment = {
      id: `pay_${crypto.randomBytes(7).toString('hex')}`,
      entity: 'payment',
      amount: 49900,
      currency: 'INR',
      status: 'failed',
      method: 'upi',
      vpa: 'ravi@okhdfcbank',
      subscription_id: sub.provider_subscription_id,
      invoice_id: 'inv_renewal',
      notes: { subscription_id: sub.id },
      error_code: 'BAD_REQUEST_ERROR',
      error_reason: 'insufficient_funds',
      created_at: Math.floor(Date.now() / 1000),
    };
    const r = await postEvent(
      rp.connection.webhook_url,
      razorpayEvent(rp.webhookSecret, 'payment.failed', { payment }),
    );
    expect(r.body).toEqual({ received: true, duplicate: false });
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toEqual(before);
    expect(await events(m.test, sub.id)).toEqual(trail);
    expect(await autopay(m)).toEqual(BOTH);
  });

  it('an event signed with another secret is refused and records nothing; other merchants see none of it', async () => {
    const payment = {
      id: `pay_${crypto.randomBytes(7).toString('hex')}`,
      entity: 'payment',
      status: 'failed',
      method: 'upi',
      subscription_id: sub.provider_subscription_id,
      notes: { subscription_id: sub.id },
      error_reason: 'card_declined',
    };
    const forged = razorpayEvent(crypto.randomBytes(16).toString('hex'), 'payment.failed', { payment });
    const r = await postEvent(rp.connection.webhook_url, forged);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'signature_invalid' });
    expect(await autopay(m)).toEqual(BOTH);
    const other = await h.merchant();
    expect(await autopay(other)).toEqual(EMPTY);
  });
});

describe('Razorpay: several declined tries on one checkout', () => {
  it('a declined card, a failed e-mandate, then a UPI success: one attempt, failed with the latest decline until the success', async () => {
    const m = await h.merchant();
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id, { provider: 'razorpay' });
    const declines: Record<string, string>[] = [
      { outcome: 'success', method: 'card', card_number: '4000000000000002', keep_open: 'on' },
      { outcome: 'failure', method: 'emandate', bank: 'SBI', keep_open: 'true' },
    ];
    for (const form of declines) {
      const r = await submitCheckout(sub.checkout_url, form);
      expect(r.status).toBe(303);
      expect(r.location).toMatch(/\?declined=/);
    }
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'created' });
    expect(await autopay(m)).toEqual(
      oneAttempt({ method: 'emandate', bank: 'SBI', authorized: false, reason: 'payment_failed' }),
    );
    await submitCheckout(sub.checkout_url, { outcome: 'success', method: 'upi', vpa: 'asha@oksbi' });
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'active' });
    // The VPA handle's bank (@oksbi).
    expect(await autopay(m)).toEqual(oneAttempt({ method: 'upi', bank: 'SBI', authorized: true }));
  });

  it('without keep_open the decline still ends the checkout, counted once though two events report it', async () => {
    const m = await h.merchant();
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id, { provider: 'razorpay' });
    const r = await submitCheckout(sub.checkout_url, { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' });
    expect(r.location).toBe('https://merchant.example/pricing');
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'cancelled' });
    // Both stored in one transaction (their stored order is arbitrary); delivered in this order.
    expect((await sandboxEventsAbout(h.app, sub)).map((e) => e.type).sort()).toEqual([
      'payment.failed',
      'subscription.cancelled',
    ]);
    expect(await autopay(m)).toMatchObject({
      attempts: 1,
      authorized: 0,
      failed: 1,
      failure_reasons: [{ reason: 'card_declined', count: 1 }],
    });
  });
});

describe('Stripe: a declined attempt on a checkout that stays open', () => {
  it('is reported as Stripe does (payment_intent.payment_failed, naming nothing of the merchant): the subscription stays created, the attempt cannot be counted; the success is', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id, { provider: 'stripe' });
    const trail = await events(m.test, sub.id);
    const r = await submitCheckout(sub.checkout_url, {
      outcome: 'success',
      method: 'card',
      card_number: '4000000000000002',
      keep_open: 'true',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`${sub.checkout_url}?declined=card_declined`);
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'created' });
    expect(await events(m.test, sub.id)).toEqual(trail);
    // Received and acknowledged through the webhook path, but it leads to no subscription.
    expect(
      await countRows(h.app, 'gateway_events', "merchant_id = ? and type = 'payment_intent.payment_failed'", [m.id]),
    ).toBe(1);
    expect(await autopay(m)).toEqual(EMPTY);

    const done = await submitCheckout(sub.checkout_url, { outcome: 'success', method: 'card' });
    expect(done.location).toMatch(/^https:\/\/merchant\.example\//);
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'active' });
    expect(await autopay(m)).toEqual(oneAttempt({ method: 'card', bank: 'HDFC', authorized: true }));
  });
});

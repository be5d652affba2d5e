import crypto from 'node:crypto';
import { createGateway, GatewayEvent, GatewayPort } from '../../src/gateways';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { closedPortUrl, randomKey, SandboxEnv, startSandboxEnv, submitCheckout } from './helpers';

let env: SandboxEnv;
let gw: GatewayPort;
const credentials = { key_id: randomKey('rzp_test_'), key_secret: randomKey(''), webhook_secret: randomKey('') };
const filter = () => ({ accountKey: sandboxAccountKey('razorpay', credentials) });

beforeAll(async () => {
  env = await startSandboxEnv();
  gw = createGateway('razorpay', credentials, { sandboxUrl: env.sandbox.url });
  await gw.verifyCredentials();
  await gw.registerWebhook(env.receiver.url);
});
afterAll(async () => {
  await env?.close();
});

function events(): GatewayEvent[] {
  return env.receiver.take().map((r) => gw.parseEvent(r.body, r.headers as Record<string, string>));
}

const paymentInput = (over: Partial<Parameters<GatewayPort['createPaymentCheckout']>[0]> = {}) => {
  const paymentId = crypto.randomUUID();
  return {
    paymentId,
    amount: 49900,
    currency: 'INR',
    customer: { email: 'buyer@example.com', name: 'Buyer', phone: '+919999999999' },
    description: 'Pro pack',
    successUrl: `https://merchant.example/ok?payment=${paymentId}`,
    cancelUrl: 'https://merchant.example/cancelled',
    idempotencyKey: crypto.randomUUID(),
    ...over,
  };
};

describe('Razorpay adapter against the sandbox', () => {
  it('pays a payment link: payment_link.paid delivered before the redirect, refunds partial and full', async () => {
    const input = paymentInput();
    const c = await gw.createPaymentCheckout(input);
    expect(c.checkoutSessionId).toMatch(/^plink_/);
    expect(c.checkoutUrl).toBe(`${env.sandbox.url}/checkout/${c.checkoutSessionId}`);
    expect(await (await fetch(c.checkoutUrl)).text()).toContain('INR 499.00');

    const r = await submitCheckout(c.checkoutUrl, { outcome: 'success', method: 'upi', vpa: 'buyer@okhdfc', bank: 'HDFC' });
    expect(r.status).toBe(303);
    const loc = new URL(r.location!);
    expect(`${loc.origin}${loc.pathname}`).toBe('https://merchant.example/ok');
    expect(loc.searchParams.get('payment')).toBe(input.paymentId);
    expect(loc.searchParams.get('razorpay_payment_link_status')).toBe('paid');
    const [e, ...rest] = events();
    expect(rest).toHaveLength(0);
    expect(e).toMatchObject({
      provider: 'razorpay',
      rawType: 'payment_link.paid',
      kind: 'payment.succeeded',
      paymentId: input.paymentId,
      checkoutSessionId: c.checkoutSessionId,
      amount: 49900,
      currency: 'INR',
      method: 'upi',
      bank: 'HDFC',
    });
    expect(e.providerPaymentId).toMatch(/^pay_/);
    expect(loc.searchParams.get('razorpay_payment_id')).toBe(e.providerPaymentId);

    const partial = await gw.refund({ providerPaymentId: e.providerPaymentId!, amount: 9900, currency: 'INR', idempotencyKey: crypto.randomUUID() });
    expect(partial).toEqual({ providerRefundId: expect.stringMatching(/^rfnd_/), status: 'succeeded' });
    await expect(
      gw.refund({ providerPaymentId: e.providerPaymentId!, amount: 40100, currency: 'INR', idempotencyKey: crypto.randomUUID() }),
    ).rejects.toMatchObject({ code: 'gateway_rejected', message: expect.stringMatching(/greater than amount captured/) });
    await gw.refund({ providerPaymentId: e.providerPaymentId!, amount: 40000, currency: 'INR', idempotencyKey: crypto.randomUUID() });
    await env.sandbox.sandbox.settle();
    expect(events()).toEqual([
      expect.objectContaining({ kind: 'refund.succeeded', providerRefundId: partial.providerRefundId, providerPaymentId: e.providerPaymentId, amount: 9900 }),
      expect.objectContaining({ kind: 'refund.succeeded', amount: 40000 }),
    ]);
  });

  it('declined VPA and failure go to the cancel URL with payment.failed; cancel sends payment_link.cancelled', async () => {
    const a = paymentInput();
    const ca = await gw.createPaymentCheckout(a);
    const ra = await submitCheckout(ca.checkoutUrl, { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' });
    expect(ra.location!.startsWith(a.cancelUrl)).toBe(true);
    expect(events()).toEqual([expect.objectContaining({ rawType: 'payment.failed', kind: 'payment.failed', paymentId: a.paymentId, failureReason: 'card_declined', method: 'upi' })]);

    const b = paymentInput();
    const cb = await gw.createPaymentCheckout(b);
    const rb = await submitCheckout(cb.checkoutUrl, { outcome: 'cancel' }, true);
    expect(rb.location!.startsWith(b.cancelUrl)).toBe(true);
    expect(events()).toEqual([expect.objectContaining({ rawType: 'payment_link.cancelled', kind: 'payment.expired', paymentId: b.paymentId })]);
  });

  it('replays an idempotent create (X-Idempotency-Key) and refuses the key with other parameters', async () => {
    const input = paymentInput();
    const [first, second] = await Promise.all([gw.createPaymentCheckout(input), gw.createPaymentCheckout(input)]);
    expect(second.checkoutSessionId).toBe(first.checkoutSessionId);
    await expect(gw.createPaymentCheckout({ ...input, amount: 100000 })).rejects.toMatchObject({ code: 'gateway_rejected' });
  });

  it('rejects bad credentials, bad signatures; a down sandbox is gateway_unavailable', async () => {
    for (const key_id of ['rzp_prod_x', 'sk_test_abc', '']) {
      const bad = createGateway('razorpay', { ...credentials, key_id }, { sandboxUrl: env.sandbox.url });
      await expect(bad.verifyCredentials()).rejects.toMatchObject({ name: 'GatewayError', code: 'gateway_rejected' });
    }
    const c = await gw.createPaymentCheckout(paymentInput());
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const [delivery] = env.receiver.take();
    const headers = delivery.headers as Record<string, string>;
    expect(headers['x-razorpay-event-id']).toBeTruthy();
    expect(gw.parseEvent(delivery.body, headers).eventId).toBe(headers['x-razorpay-event-id']);
    expect(() => gw.parseEvent(Buffer.from(delivery.body.toString().replace('49900', '1')), headers)).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
    expect(() => gw.parseEvent(delivery.body, { ...headers, 'x-razorpay-signature': 'abc' })).toThrow(expect.objectContaining({ code: 'signature_invalid' }));

    const down = createGateway('razorpay', credentials, { sandboxUrl: await closedPortUrl(), timeoutMs: 2000 });
    const t0 = Date.now();
    await expect(down.createPaymentCheckout(paymentInput())).rejects.toMatchObject({ code: 'gateway_unavailable' });
    await expect(down.verifyCredentials()).rejects.toMatchObject({ code: 'gateway_unavailable' });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  describe('subscriptions', () => {
    let planId: string;
    beforeAll(async () => {
      ({ providerPriceId: planId } = await gw.registerPrice({
        priceId: crypto.randomUUID(),
        productName: 'Cadence Pro',
        planName: 'Monthly',
        amount: 99900,
        currency: 'INR',
        frequency: 'monthly',
        interval: 1,
        idempotencyKey: crypto.randomUUID(),
      }));
      expect(planId).toMatch(/^plan_/);
    });

    const subInput = (over: Partial<Parameters<GatewayPort['createSubscriptionCheckout']>[0]> = {}) => ({
      subscriptionId: crypto.randomUUID(),
      providerPriceId: planId,
      amount: 99900,
      currency: 'INR',
      setupFee: 0,
      trialDays: 0,
      maxCycles: null,
      customer: { email: 'sub@example.com' },
      successUrl: 'https://merchant.example/sub/ok',
      cancelUrl: 'https://merchant.example/sub/cancel',
      idempotencyKey: crypto.randomUUID(),
      ...over,
    });

    it('with a trial: authenticated now, charged at start_at; pause, resume, cancel', async () => {
      const input = subInput({ trialDays: 7 });
      const c = await gw.createSubscriptionCheckout(input);
      expect(c.providerSubscriptionId).toMatch(/^sub_/);
      const r = await submitCheckout(c.checkoutUrl, { outcome: 'success', method: 'emandate', bank: 'SBI' });
      expect(r.location).toBe(input.successUrl);
      expect(events()).toEqual([
        expect.objectContaining({ rawType: 'subscription.authenticated', kind: 'subscription.authorized', subscriptionId: input.subscriptionId, providerSubscriptionId: c.providerSubscriptionId, method: 'emandate', bank: 'SBI' }),
      ]);
      expect(await env.sandbox.chargeDueRenewals(new Date(Date.now() + 6 * 86_400_000), filter())).toEqual([]);
      expect(await env.sandbox.chargeDueRenewals(new Date(Date.now() + 8 * 86_400_000), filter())).toEqual([
        { provider: 'razorpay', providerSubscriptionId: c.providerSubscriptionId, events: ['subscription.charged'] },
      ]);
      expect(events()).toEqual([expect.objectContaining({ kind: 'subscription.charged', subscriptionId: input.subscriptionId, amount: 99900, currency: 'INR', method: 'emandate' })]);

      // Plan changes are refused for e-mandate subscriptions (as Razorpay does).
      await expect(
        gw.changeSubscriptionPrice({ providerSubscriptionId: c.providerSubscriptionId!, providerPriceId: planId, amount: 99900, currency: 'INR', idempotencyKey: crypto.randomUUID() }),
      ).rejects.toMatchObject({ code: 'gateway_rejected' });

      await gw.pauseSubscription(c.providerSubscriptionId!);
      await gw.resumeSubscription(c.providerSubscriptionId!);
      await gw.cancelSubscription(c.providerSubscriptionId!, { atPeriodEnd: false });
      await env.sandbox.sandbox.settle();
      expect(events().map((e) => e.kind)).toEqual(['subscription.paused', 'subscription.resumed', 'subscription.cancelled']);
    });

    it('VPA failure@sandbox: authorised and charged once, every renewal fails; 9979 halts at once; max cycles complete', async () => {
      const a = subInput();
      const ca = await gw.createSubscriptionCheckout(a);
      await submitCheckout(ca.checkoutUrl, { outcome: 'success', method: 'upi', vpa: 'failure@sandbox' });
      expect(events().map((e) => e.kind)).toEqual(['subscription.authorized', 'subscription.charged']);
      await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter());
      expect(events()).toEqual([expect.objectContaining({ rawType: 'subscription.pending', kind: 'subscription.charge_failed', failureReason: 'insufficient_funds' })]);
      await env.sandbox.retryCharge(ca.providerSubscriptionId!);
      expect(events()).toEqual([expect.objectContaining({ kind: 'subscription.charge_failed', failureReason: 'insufficient_funds' })]);
      await gw.cancelSubscription(ca.providerSubscriptionId!, { atPeriodEnd: false });
      await env.sandbox.sandbox.settle();
      events();

      const b = subInput({ maxCycles: 2 });
      const cb = await gw.createSubscriptionCheckout(b);
      await submitCheckout(cb.checkoutUrl, { outcome: 'success', card_number: '4000000000009979' });
      events();
      await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter());
      expect(events()).toEqual([expect.objectContaining({ rawType: 'subscription.halted', kind: 'subscription.charge_failed', failureReason: 'stolen_card' })]);
      await env.sandbox.retryCharge(cb.providerSubscriptionId!);
      expect(events().map((e) => e.rawType)).toEqual(['subscription.charged', 'subscription.completed']);
    });

    it('declined card cancels the subscription and redirects to the cancel URL', async () => {
      const d = subInput();
      const cd = await gw.createSubscriptionCheckout(d);
      expect(await submitCheckout(cd.checkoutUrl, { outcome: 'success', card_number: '4000000000000002', bank: 'AXIS' })).toEqual({ status: 303, location: d.cancelUrl });
      expect(events()).toEqual([expect.objectContaining({ kind: 'subscription.cancelled', subscriptionId: d.subscriptionId, failureReason: 'card_declined', method: 'card', bank: 'AXIS' })]);
    });
  });
});

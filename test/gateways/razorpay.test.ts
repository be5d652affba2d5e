import crypto from 'node:crypto';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { submitCheckout } from '../harness';
import { RAZORPAY, useAdapter } from './adapters';

/** What only the Razorpay adapter and the sandbox's Razorpay API do; the behaviour both adapters share is in port-contract.test.ts. */
const adapter = useAdapter(RAZORPAY);
const gw = () => adapter.gw;
const { env, credentials, events, paymentInput } = adapter;
const filter = () => ({ accountKey: sandboxAccountKey('razorpay', credentials) });

describe('Razorpay adapter against the sandbox', () => {
  it('pays a payment link: payment_link.paid delivered before the redirect, refunds partial and full', async () => {
    const input = paymentInput();
    const c = await gw().createPaymentCheckout(input);
    expect(c.checkoutSessionId).toMatch(/^plink_/);
    expect(c.checkoutUrl).toBe(`${env.sandbox.url}/checkout/${c.checkoutSessionId}`);
    expect(await (await fetch(c.checkoutUrl)).text()).toContain('₹499.00');

    const r = await submitCheckout(c.checkoutUrl, {
      outcome: 'success',
      method: 'upi',
      vpa: 'buyer@okhdfc',
      bank: 'HDFC',
    });
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

    const partial = await gw().refund({
      providerPaymentId: e.providerPaymentId!,
      amount: 9900,
      currency: 'INR',
      idempotencyKey: crypto.randomUUID(),
    });
    expect(partial).toEqual({ providerRefundId: expect.stringMatching(/^rfnd_/), status: 'succeeded' });
    await expect(
      gw().refund({
        providerPaymentId: e.providerPaymentId!,
        amount: 40100,
        currency: 'INR',
        idempotencyKey: crypto.randomUUID(),
      }),
    ).rejects.toMatchObject({
      code: 'gateway_rejected',
      message: expect.stringMatching(/greater than amount captured/),
    });
    await gw().refund({
      providerPaymentId: e.providerPaymentId!,
      amount: 40000,
      currency: 'INR',
      idempotencyKey: crypto.randomUUID(),
    });
    await env.sandbox.sandbox.settle();
    expect(events()).toEqual([
      expect.objectContaining({
        kind: 'refund.succeeded',
        providerRefundId: partial.providerRefundId,
        providerPaymentId: e.providerPaymentId,
        amount: 9900,
      }),
      expect.objectContaining({ kind: 'refund.succeeded', amount: 40000 }),
    ]);
  });

  it('declined VPA and failure go to the cancel URL with payment.failed; cancel sends payment_link.cancelled', async () => {
    const a = paymentInput();
    const ca = await gw().createPaymentCheckout(a);
    const ra = await submitCheckout(ca.checkoutUrl, { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' });
    expect(ra.location!.startsWith(a.cancelUrl)).toBe(true);
    expect(events()).toEqual([
      expect.objectContaining({
        rawType: 'payment.failed',
        kind: 'payment.failed',
        paymentId: a.paymentId,
        failureReason: 'card_declined',
        method: 'upi',
      }),
    ]);

    const b = paymentInput();
    const cb = await gw().createPaymentCheckout(b);
    const rb = await submitCheckout(cb.checkoutUrl, { outcome: 'cancel' }, 'json');
    expect(rb.location!.startsWith(b.cancelUrl)).toBe(true);
    expect(events()).toEqual([
      expect.objectContaining({ rawType: 'payment_link.cancelled', kind: 'payment.expired', paymentId: b.paymentId }),
    ]);
  });

  it('names the event in X-Razorpay-Event-Id and checks X-Razorpay-Signature', async () => {
    const c = await gw().createPaymentCheckout(paymentInput());
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const [delivery] = env.receiver.take();
    const headers = delivery.headers;
    expect(headers['x-razorpay-event-id']).toBeTruthy();
    expect(gw().parseEvent(delivery.raw, headers).eventId).toBe(headers['x-razorpay-event-id']);
    expect(() => gw().parseEvent(delivery.raw, { ...headers, 'x-razorpay-signature': 'abc' })).toThrow(
      expect.objectContaining({ code: 'signature_invalid' }),
    );
  });

  describe('subscriptions', () => {
    let planId: string;
    beforeAll(async () => {
      planId = await adapter.registerPrice();
    });
    const subInput = adapter.subscriptionInput;

    it('knows the subscription id at checkout; refuses plan changes for e-mandate subscriptions', async () => {
      const input = subInput({ trialDays: 7 });
      const c = await gw().createSubscriptionCheckout(input);
      expect(c.providerSubscriptionId).toMatch(/^sub_/);
      await submitCheckout(c.checkoutUrl, { outcome: 'success', method: 'emandate', bank: 'SBI' });
      expect(events()).toEqual([
        expect.objectContaining({ kind: 'subscription.authorized', providerSubscriptionId: c.providerSubscriptionId }),
      ]);

      // Plan changes are refused for e-mandate subscriptions (as Razorpay does).
      await expect(
        gw().changeSubscriptionPrice({
          providerSubscriptionId: c.providerSubscriptionId!,
          providerPriceId: planId,
          amount: 99900,
          currency: 'INR',
          idempotencyKey: crypto.randomUUID(),
        }),
      ).rejects.toMatchObject({ code: 'gateway_rejected' });

      await gw().cancelSubscription(c.providerSubscriptionId!, { atPeriodEnd: false });
      await env.sandbox.sandbox.settle();
      events();
    });

    it('VPA failure@sandbox: authorised and charged once, every renewal fails; 9979 halts at once; max cycles complete', async () => {
      const a = subInput();
      const ca = await gw().createSubscriptionCheckout(a);
      await submitCheckout(ca.checkoutUrl, { outcome: 'success', method: 'upi', vpa: 'failure@sandbox' });
      expect(events().map((e) => e.kind)).toEqual(['subscription.authorized', 'subscription.charged']);
      await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter());
      expect(events()).toEqual([
        expect.objectContaining({
          rawType: 'subscription.pending',
          kind: 'subscription.charge_failed',
          failureReason: 'insufficient_funds',
        }),
      ]);
      await env.sandbox.retryCharge(ca.providerSubscriptionId!);
      expect(events()).toEqual([
        expect.objectContaining({ kind: 'subscription.charge_failed', failureReason: 'insufficient_funds' }),
      ]);
      await gw().cancelSubscription(ca.providerSubscriptionId!, { atPeriodEnd: false });
      await env.sandbox.sandbox.settle();
      events();

      const b = subInput({ maxCycles: 2 });
      const cb = await gw().createSubscriptionCheckout(b);
      await submitCheckout(cb.checkoutUrl, { outcome: 'success', card_number: '4000000000009979' });
      events();
      await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter());
      expect(events()).toEqual([
        expect.objectContaining({
          rawType: 'subscription.halted',
          kind: 'subscription.charge_failed',
          failureReason: 'stolen_card',
        }),
      ]);
      await env.sandbox.retryCharge(cb.providerSubscriptionId!);
      expect(events().map((e) => e.rawType)).toEqual(['subscription.charged', 'subscription.completed']);
    });
  });
});

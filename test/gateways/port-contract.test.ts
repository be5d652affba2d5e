import crypto from 'node:crypto';
import { createGateway, GatewayError } from '../../src/gateways';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { closedPortUrl, submitCheckout, redirectOf } from '../harness';
import { ADAPTERS, useAdapter } from './adapters';

/**
 * The gateway port (src/gateways/port.ts) as the service relies on it, the same for every adapter: run against
 * each adapter and the sandbox. What only one provider does lives in its own file (stripe.test.ts, razorpay.test.ts).
 */
describe.each(ADAPTERS)('$provider adapter: the gateway port', (profile) => {
  const a = useAdapter(profile);
  const filter = () => ({ accountKey: sandboxAccountKey(profile.provider, a.credentials) });

  it('replays an idempotent create and refuses the key with other parameters', async () => {
    const input = a.paymentInput();
    const [first, second] = await Promise.all([a.gw.createPaymentCheckout(input), a.gw.createPaymentCheckout(input)]);
    expect(second.checkoutSessionId).toBe(first.checkoutSessionId);
    await expect(a.gw.createPaymentCheckout({ ...input, amount: 100000 })).rejects.toMatchObject({ code: 'gateway_rejected' });
  });

  it('rejects bad credentials', async () => {
    for (const credentials of profile.badCredentials(a.credentials)) {
      const bad = createGateway(profile.provider, credentials, { sandboxUrl: a.env.sandbox.url });
      await expect(bad.verifyCredentials()).rejects.toMatchObject({ name: 'GatewayError', code: 'gateway_rejected' });
      await expect(bad.createPaymentCheckout(a.paymentInput())).rejects.toMatchObject({ code: 'gateway_rejected' });
    }
  });

  it('rejects an event whose body was changed or that another webhook secret signed', async () => {
    const c = await a.gw.createPaymentCheckout(a.paymentInput());
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const [delivery] = a.env.receiver.take();
    const tampered = Buffer.from(profile.tamper(delivery.body));
    expect(() => a.gw.parseEvent(tampered, delivery.headers)).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
    const other = createGateway(profile.provider, { ...a.credentials, webhook_secret: `whsec_${crypto.randomBytes(8).toString('hex')}` }, { sandboxUrl: a.env.sandbox.url });
    expect(() => other.parseEvent(delivery.raw, delivery.headers)).toThrow(GatewayError);
  });

  it('reports a sandbox that is down as gateway_unavailable, quickly', async () => {
    const down = createGateway(profile.provider, a.credentials, { sandboxUrl: await closedPortUrl(), timeoutMs: 2000 });
    const t0 = Date.now();
    await expect(down.createPaymentCheckout(a.paymentInput())).rejects.toMatchObject({ code: 'gateway_unavailable' });
    await expect(down.verifyCredentials()).rejects.toMatchObject({ code: 'gateway_unavailable' });
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  describe('subscriptions', () => {
    beforeAll(async () => {
      expect(await a.registerPrice()).toMatch(profile.priceId);
    });

    it('with a trial: authorised now, charged at trial end by chargeDueRenewals; pause, resume, cancel', async () => {
      const input = a.subscriptionInput({ trialDays: 7 });
      const c = await a.gw.createSubscriptionCheckout(input);
      const r = await submitCheckout(c.checkoutUrl, { outcome: 'success', ...profile.mandateForm });
      expect(r.location).toBe(profile.subscriptionSuccess.location(c.checkoutSessionId));
      const [auth, ...none] = a.events();
      expect(none).toHaveLength(0);
      expect(auth).toMatchObject({ rawType: profile.authorizedRawType, kind: 'subscription.authorized', subscriptionId: input.subscriptionId, ...profile.mandateForm });
      expect(auth.providerSubscriptionId).toMatch(/^sub_/);

      expect(await a.env.sandbox.chargeDueRenewals(new Date(Date.now() + 6 * 86_400_000), filter())).toEqual([]);
      expect(await a.env.sandbox.chargeDueRenewals(new Date(Date.now() + 8 * 86_400_000), filter())).toEqual([
        { provider: profile.provider, providerSubscriptionId: auth.providerSubscriptionId, events: profile.renewalEvents },
      ]);
      expect(a.events()).toEqual([
        expect.objectContaining({
          kind: 'subscription.charged',
          subscriptionId: input.subscriptionId,
          providerSubscriptionId: auth.providerSubscriptionId,
          amount: 99900,
          currency: 'INR',
          method: profile.mandateForm.method,
        }),
      ]);

      // Pause, resume and cancel reach the gateway and come back as events.
      await a.gw.pauseSubscription(auth.providerSubscriptionId!);
      await a.gw.resumeSubscription(auth.providerSubscriptionId!);
      await a.gw.cancelSubscription(auth.providerSubscriptionId!, { atPeriodEnd: false });
      await a.env.sandbox.sandbox.settle();
      expect(a.events().map((e) => e.kind)).toEqual(['subscription.paused', 'subscription.resumed', 'subscription.cancelled']);
    });

    it('declined card cancels the subscription and redirects to the cancel URL', async () => {
      const d = a.subscriptionInput();
      const cd = await a.gw.createSubscriptionCheckout(d);
      expect(redirectOf(await submitCheckout(cd.checkoutUrl, { outcome: 'success', card_number: '4000000000000002', bank: 'AXIS' }))).toEqual({
        status: 303,
        location: d.cancelUrl,
      });
      expect(a.events()).toEqual([expect.objectContaining({ kind: 'subscription.cancelled', subscriptionId: d.subscriptionId, failureReason: 'card_declined', method: 'card', bank: 'AXIS' })]);
    });
  });
});

import crypto from 'node:crypto';
import { createGateway } from '../../src/gateways';
import { sandboxAccountKey, startSandbox } from '../../src/gateways/sandbox';
import { redirectOf, submitCheckout } from '../harness';
import { SANDBOX_SECRETS } from '../harness/sandbox';
import { STRIPE, useAdapter } from './adapters';

/** What only the Stripe adapter and the sandbox's Stripe API do; the behaviour both adapters share is in port-contract.test.ts. */
const adapter = useAdapter(STRIPE);
const gw = () => adapter.gw;
const { env, credentials, events, paymentInput } = adapter;

describe('Stripe adapter against the sandbox', () => {
  it('serves a hosted checkout page with the amount and description', async () => {
    const c = await gw().createPaymentCheckout(
      paymentInput({ amount: 500, currency: 'JPY', description: 'Tea <set>' }),
    );
    expect(c.checkoutSessionId).toMatch(/^cs_test_/);
    expect(c.checkoutUrl).toBe(`${env.sandbox.url}/checkout/${c.checkoutSessionId}`);
    const html = await (await fetch(c.checkoutUrl)).text();
    expect(html).toContain('<form');
    expect(html).toContain('¥500');
    expect(html).toContain('Tea &lt;set&gt;');
    expect(html).not.toMatch(/https?:\/\/(?!merchant)[^"]*\.(js|css)/); // self-contained
  });

  it('completes a payment: signed webhook delivered before the 303, normalised to payment.succeeded', async () => {
    const input = paymentInput();
    const c = await gw().createPaymentCheckout(input);
    const r = await submitCheckout(c.checkoutUrl, {
      outcome: 'success',
      method: 'card',
      bank: 'HDFC',
      card_number: '4242424242424242',
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`https://merchant.example/ok?payment=${input.paymentId}&session=${c.checkoutSessionId}`);
    const [e, ...rest] = events();
    expect(rest).toHaveLength(0);
    expect(e).toMatchObject({
      provider: 'stripe',
      rawType: 'checkout.session.completed',
      kind: 'payment.succeeded',
      paymentId: input.paymentId,
      checkoutSessionId: c.checkoutSessionId,
      amount: 49900,
      currency: 'INR',
      method: 'card',
      bank: 'HDFC',
    });
    expect(e.eventId).toMatch(/^evt_/);
    expect(e.providerPaymentId).toMatch(/^pi_/);

    // The form again (double submit) lands on the same page and sends nothing new.
    const again = await submitCheckout(c.checkoutUrl, { outcome: 'failure' });
    expect(again.location).toBe(r.location);
    expect(events()).toHaveLength(0);

    // Refunds: partial, then the rest; more than what is left is the gateway's "no".
    const partial = await gw().refund({
      providerPaymentId: e.providerPaymentId!,
      amount: 10000,
      currency: 'INR',
      idempotencyKey: crypto.randomUUID(),
    });
    expect(partial).toEqual({ providerRefundId: expect.stringMatching(/^re_/), status: 'succeeded' });
    await env.sandbox.sandbox.settle();
    const refundEvents = events().filter((x) => x.kind !== 'ignored');
    expect(refundEvents).toEqual([
      expect.objectContaining({
        kind: 'refund.succeeded',
        providerRefundId: partial.providerRefundId,
        providerPaymentId: e.providerPaymentId,
        amount: 10000,
        currency: 'INR',
      }),
    ]);
    await expect(
      gw().refund({
        providerPaymentId: e.providerPaymentId!,
        amount: 40000,
        currency: 'INR',
        idempotencyKey: crypto.randomUUID(),
      }),
    ).rejects.toMatchObject({ code: 'gateway_rejected', message: expect.stringMatching(/greater than unrefunded/) });
    const rest2 = await gw().refund({
      providerPaymentId: e.providerPaymentId!,
      amount: 39900,
      currency: 'INR',
      idempotencyKey: crypto.randomUUID(),
    });
    expect(rest2.status).toBe('succeeded');
    await expect(
      gw().refund({
        providerPaymentId: e.providerPaymentId!,
        amount: 1,
        currency: 'INR',
        idempotencyKey: crypto.randomUUID(),
      }),
    ).rejects.toMatchObject({ code: 'gateway_rejected' });
    await env.sandbox.sandbox.settle();
    events();
  });

  it('declines card 4000000000000002 at checkout: payment.failed (card_declined), redirect to cancel_url', async () => {
    const input = paymentInput();
    const c = await gw().createPaymentCheckout(input);
    const r = await submitCheckout(c.checkoutUrl, { outcome: 'success', card_number: '4000 0000 0000 0002' }, 'json');
    expect(redirectOf(r)).toEqual({ status: 303, location: input.cancelUrl });
    expect(events()).toEqual([
      expect.objectContaining({
        rawType: 'payment_intent.payment_failed',
        kind: 'payment.failed',
        paymentId: input.paymentId,
        failureReason: 'card_declined',
        method: 'card',
      }),
    ]);
  });

  it('failure and cancel outcomes', async () => {
    const a = paymentInput();
    const ca = await gw().createPaymentCheckout(a);
    expect(
      redirectOf(await submitCheckout(ca.checkoutUrl, { outcome: 'failure', method: 'upi', vpa: 'someone@okbank' })),
    ).toEqual({ status: 303, location: a.cancelUrl });
    expect(events()).toEqual([
      expect.objectContaining({
        kind: 'payment.failed',
        paymentId: a.paymentId,
        failureReason: 'payment_failed',
        method: 'upi',
      }),
    ]);

    const b = paymentInput();
    const cb = await gw().createPaymentCheckout(b);
    expect(redirectOf(await submitCheckout(cb.checkoutUrl, { outcome: 'cancel' }))).toEqual({
      status: 303,
      location: b.cancelUrl,
    });
    expect(events()).toEqual([
      expect.objectContaining({ rawType: 'checkout.session.expired', kind: 'payment.expired', paymentId: b.paymentId }),
    ]);
  });

  it('answers raw creates idempotently: racing requests make one session, replays say so, errors store nothing', async () => {
    const key = crypto.randomUUID();
    const name = `Race ${key}`;
    const post = (body: Record<string, string>) =>
      fetch(`${env.sandbox.url}/v1/checkout/sessions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${credentials.secret_key}`,
          'content-type': 'application/x-www-form-urlencoded',
          'idempotency-key': key,
        },
        body: new URLSearchParams(body).toString(),
      });
    const form = {
      mode: 'payment',
      success_url: 'https://merchant.example/ok',
      'line_items[0][quantity]': '2',
      'line_items[0][price_data][currency]': 'inr',
      'line_items[0][price_data][unit_amount]': '1000',
      'line_items[0][price_data][product_data][name]': name,
    };
    // Invalid parameters answer their error and keep nothing: the key is still free afterwards.
    const invalid = await post({ ...form, mode: 'bogus' });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as any).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      param: 'mode',
    });

    const answers = await Promise.all(Array.from({ length: 8 }, () => post(form)));
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as any[];
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    expect(bodies[0]).toMatchObject({
      object: 'checkout.session',
      amount_total: 2000,
      currency: 'inr',
      status: 'open',
      url: `${env.sandbox.url}/checkout/${bodies[0].id}`,
    });
    expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(7);
    const [{ products, prices, sessions }] = await env.sandbox.sandbox.orm.em.getConnection().execute(
      `select (select count(*) from sandbox_objects where type = 'product' and data->>'name' = ?)::int as products,
              (select count(*) from sandbox_objects price join sandbox_objects product on product.id = price.data->>'product'
                where price.type = 'price' and product.data->>'name' = ?)::int as prices,
              (select count(*) from sandbox_objects where type = 'checkout_session' and internal->'lineItems'->0->>'name' = ?)::int as sessions`,
      [name, name, name],
    );
    expect({ products, prices, sessions }).toEqual({ products: 1, prices: 1, sessions: 1 });

    // The key with other parameters, valid or not, is the idempotency error.
    for (const other of [
      { ...form, 'line_items[0][quantity]': '3' },
      { ...form, mode: 'bogus' },
    ]) {
      const r = await post(other);
      expect(r.status).toBe(400);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
      expect(((await r.json()) as any).error).toMatchObject({
        type: 'idempotency_error',
        code: 'idempotency_key_in_use',
      });
    }
  });

  it('refuses a webhook secret without whsec_, and an event without its Stripe-Signature', async () => {
    const noWhsec = createGateway(
      'stripe',
      { secret_key: credentials.secret_key, webhook_secret: 'secret' },
      { sandboxUrl: env.sandbox.url },
    );
    await expect(noWhsec.verifyCredentials()).rejects.toMatchObject({ code: 'gateway_rejected' });

    const c = await gw().createPaymentCheckout(paymentInput());
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const [delivery] = env.receiver.take();
    expect(() => gw().parseEvent(delivery.raw, {})).toThrow(expect.objectContaining({ code: 'signature_invalid' }));
  });

  it('retries a failing webhook, then keeps it for redelivery', async () => {
    env.receiver.failNext = 1; // first attempt 500, the retry succeeds
    const c1 = await gw().createPaymentCheckout(paymentInput());
    await submitCheckout(c1.checkoutUrl, { outcome: 'success' });
    expect(events()).toHaveLength(1);

    env.receiver.failNext = 10; // every quick retry fails: the redirect still happens
    const c2 = await gw().createPaymentCheckout(paymentInput());
    expect((await submitCheckout(c2.checkoutUrl, { outcome: 'success' })).status).toBe(303);
    expect(events()).toHaveLength(0);
    env.receiver.failNext = 0;
    expect(await env.sandbox.redeliverPending()).toBe(1);
    expect(events()).toEqual([
      expect.objectContaining({ kind: 'payment.succeeded', checkoutSessionId: c2.checkoutSessionId }),
    ]);
  });

  it('keeps its state across a restart (checkout created before, completed after)', async () => {
    const input = paymentInput();
    const c = await gw().createPaymentCheckout(input);
    const second = await startSandbox({ databaseUrl: env.databaseUrl, port: 0, secrets: SANDBOX_SECRETS });
    try {
      const url = c.checkoutUrl.replace(env.sandbox.url, second.url);
      expect(await submitCheckout(url, { outcome: 'success' })).toMatchObject({ status: 303 });
      expect(events()).toEqual([expect.objectContaining({ kind: 'payment.succeeded', paymentId: input.paymentId })]);
    } finally {
      await second.close();
    }
  });

  describe('subscriptions', () => {
    beforeAll(async () => {
      await adapter.registerPrice();
    });
    const subInput = adapter.subscriptionInput;

    it('starts periods on the sandbox clock (a merchant test clock ahead of the wall clock)', async () => {
      const ahead = new Date(Date.now() + 40 * 86_400_000);
      const clocked = await startSandbox({
        databaseUrl: env.databaseUrl,
        port: 0,
        clock: () => ahead,
        secrets: SANDBOX_SECRETS,
      });
      try {
        const gw2 = createGateway('stripe', credentials, { sandboxUrl: clocked.url });
        const input = subInput({ trialDays: 7 });
        const c = await gw2.createSubscriptionCheckout(input);
        await submitCheckout(c.checkoutUrl, { outcome: 'success' });
        const [auth] = events();
        const filter = { accountKey: sandboxAccountKey('stripe', credentials) };
        expect(await clocked.chargeDueRenewals(new Date(ahead.getTime() + 6 * 86_400_000), filter)).toEqual([]);
        expect(await clocked.chargeDueRenewals(new Date(ahead.getTime() + 7 * 86_400_000 + 1000), filter)).toEqual([
          { provider: 'stripe', providerSubscriptionId: auth.providerSubscriptionId, events: ['invoice.paid'] },
        ]);
        events();
        await gw2.cancelSubscription(auth.providerSubscriptionId!, { atPeriodEnd: false });
        await clocked.sandbox.settle();
        events();
      } finally {
        await clocked.close();
      }
    });

    it('without a trial: first charge at checkout; card 0119 fails its first renewal, the retry succeeds', async () => {
      const input = subInput();
      const c = await gw().createSubscriptionCheckout(input);
      await submitCheckout(c.checkoutUrl, { outcome: 'success', card_number: '4000000000000119' });
      const [auth, charged] = events();
      expect(auth.kind).toBe('subscription.authorized');
      expect(charged).toMatchObject({ kind: 'subscription.charged', amount: 99900 });
      const subId = auth.providerSubscriptionId!;

      const filter = { accountKey: sandboxAccountKey('stripe', credentials) };
      const due = await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter);
      expect(due.map((d) => d.events)).toEqual([['invoice.payment_failed']]);
      expect(events()).toEqual([
        expect.objectContaining({
          kind: 'subscription.charge_failed',
          providerSubscriptionId: subId,
          failureReason: 'processing_error',
        }),
      ]);

      expect(await env.sandbox.retryCharge(subId)).toMatchObject({ events: ['invoice.paid'] });
      expect(events()).toEqual([
        expect.objectContaining({ kind: 'subscription.charged', providerSubscriptionId: subId }),
      ]);
    });

    it('card 4000000000000341 authorises but every renewal fails with insufficient_funds', async () => {
      const input = subInput();
      const c = await gw().createSubscriptionCheckout(input);
      await submitCheckout(c.checkoutUrl, { outcome: 'success', card_number: '4000000000000341' });
      const [auth] = events();
      const filter = { accountKey: sandboxAccountKey('stripe', credentials) };
      await env.sandbox.chargeDueRenewals(new Date(Date.now() + 32 * 86_400_000), filter);
      expect(events()).toEqual([
        expect.objectContaining({
          kind: 'subscription.charge_failed',
          providerSubscriptionId: auth.providerSubscriptionId,
          failureReason: 'insufficient_funds',
        }),
      ]);
      await env.sandbox.retryCharge(auth.providerSubscriptionId!);
      expect(events()).toEqual([
        expect.objectContaining({ kind: 'subscription.charge_failed', failureReason: 'insufficient_funds' }),
      ]);
      await gw().cancelSubscription(auth.providerSubscriptionId!, { atPeriodEnd: false });
      await env.sandbox.sandbox.settle();
      events();
    });
  });
});

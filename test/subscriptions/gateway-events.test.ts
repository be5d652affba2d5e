import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { connect, Connected, postEvent, PROVIDERS, ProviderName, signedHeaders } from '../payments/helpers';
import {
  authorise,
  captureGatewayEvents,
  createSubscription,
  invoicesOf,
  ok,
  recurringPlan,
  sandboxEventsAbout,
  trail,
} from './helpers';

/**
 * Gateway events about subscriptions arrive more than once, out of order, forged, or at the wrong connection's URL:
 * each is applied at most once, a period is billed at most once, and a forged or misdirected one changes nothing.
 * The events are the sandbox's real ones (read from its table, or captured on their way), re-signed where needed.
 */

const h = useHarness();
jest.setTimeout(60_000);

/** A stored event's body with a new event id (as a gateway re-sending it under another id would). */
function withNewId(provider: ProviderName, body: string): { id: string; body: string } {
  if (provider === 'razorpay') return { id: `evt_${crypto.randomBytes(7).toString('hex')}`, body };
  const id = `evt_${crypto.randomBytes(12).toString('hex')}`;
  return { id, body: JSON.stringify({ ...JSON.parse(body), id }) };
}

const post = (c: Connected, provider: ProviderName, ev: { id: string; body: string }) =>
  postEvent(c.connection.webhook_url, {
    payload: ev.body,
    headers: signedHeaders(provider, c.webhookSecret, ev.body, ev.id),
  });

/** What must not change: the subscription, its audit trail and its invoices. */
async function snapshot(m: TestMerchant, id: string) {
  return {
    sub: await ok(m.test.get(`/subscriptions/${id}`)),
    trail: await trail(m.test, id),
    invoices: (await invoicesOf(m.test, id)).map((i) => `${i.number}:${i.billing_reason}:${i.status}:${i.amount_due}`),
  };
}

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  let other: TestMerchant;
  let otherConn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
    other = await h.merchant();
    otherConn = await connect(other.test, provider);
  });

  it('a delivered event re-posted byte for byte is a duplicate and changes nothing', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(subscription.status).toBe('active');
    const before = await snapshot(m, subscription.id);
    expect(before.trail).toHaveLength(2);
    expect(before.invoices).toHaveLength(1);
    const delivered = (await sandboxEventsAbout(h.app, subscription)).filter((e) => e.delivered);
    expect(delivered.length).toBeGreaterThan(0);
    for (const e of delivered) {
      const r = await post(conn, provider, e);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ received: true, duplicate: true });
    }
    expect(await snapshot(m, subscription.id)).toEqual(before);
  });

  it('a renewal event delivered five times at once: applied once, the others answered as duplicates', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    // Capture the renewal's events on their way, then deliver each five times concurrently.
    const received = await captureGatewayEvents(h.app, await h.receiver(), conn.connection, () =>
      h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000)),
    );
    expect(received.length).toBeGreaterThan(0);
    for (const got of received) {
      const answers = await Promise.all(
        Array.from({ length: 5 }, () =>
          postEvent(conn.connection.webhook_url, { payload: got.body, headers: got.headers }),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect(answers.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    }
    expect((await invoicesOf(m.test, subscription.id)).map((i) => i.billing_reason)).toEqual([
      'subscription_create',
      'subscription_cycle',
    ]);
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).cycles_completed).toBe(2);
  });

  it('renewal events again under new ids, and an older period after a newer one: each period billed once', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const seen = new Set((await sandboxEventsAbout(h.app, subscription)).map((e) => e.id));
    // Two renewals, one advance each.
    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000));
    const once = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    await h.clock.advance(m, new Date(new Date(once.current_period_end).getTime() + 1000));
    const before = await snapshot(m, subscription.id);
    expect(before.sub.cycles_completed).toBe(3);
    expect(before.invoices).toHaveLength(3);
    const renewals = (await sandboxEventsAbout(h.app, subscription)).filter((e) => !seen.has(e.id));
    const charges = renewals.filter(
      (e) => e.type === (provider === 'stripe' ? 'invoice.paid' : 'subscription.charged'),
    );
    expect(charges).toHaveLength(2);
    // The newer renewal's charge again, then the older one's after it, each under a fresh event id: not duplicates
    // by id, so the period rule alone keeps them from billing again.
    for (const e of [charges[1], charges[0], ...renewals]) {
      const r = await post(conn, provider, withNewId(provider, e.body));
      expect(r.status).toBe(200);
      expect(r.body.duplicate).toBe(false);
    }
    expect(await snapshot(m, subscription.id)).toEqual(before);
  });

  it('a bad signature is 400 and changes nothing', async () => {
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    // Capture the checkout's real events instead of letting them reach the service.
    const received = await captureGatewayEvents(h.app, await h.receiver(), conn.connection, () =>
      h.sandbox.submitCheckout(sub.checkout_url, { outcome: 'success' }),
    );
    expect(received.length).toBeGreaterThan(0);
    const before = await snapshot(m, sub.id);
    expect(before.sub.status).toBe('created');
    for (const got of received) {
      const headers = { ...got.headers };
      delete headers['content-length'];
      delete headers.host;
      // Signed with another secret, and the right signature over a tampered body.
      const wrong = signedHeaders(
        provider,
        provider === 'stripe' ? `whsec_${crypto.randomBytes(16).toString('hex')}` : 'not-the-secret',
        got.body,
        headers['x-razorpay-event-id'] ?? 'evt_x',
      );
      for (const attempt of [
        { payload: got.body, headers: { ...headers, ...wrong } },
        { payload: got.body.replace('"active"', '"activ3"').replace(/}$/, ' }'), headers },
      ]) {
        const r = await postEvent(conn.connection.webhook_url, attempt);
        expect(r.status).toBe(400);
        expect(r.body.error.code).toBe('signature_invalid');
      }
    }
    expect(await snapshot(m, sub.id)).toEqual(before);
    // The genuine events, forwarded as captured, still apply: the subscription ends active with one invoice.
    for (const got of received) {
      const r = await postEvent(conn.connection.webhook_url, { payload: got.body, headers: got.headers });
      expect(r.status).toBe(200);
    }
    const after = await snapshot(m, sub.id);
    expect(after.sub.status).toBe('active');
    expect(after.invoices).toHaveLength(1);
  });

  it("an event posted to another merchant's connection cannot touch this merchant's subscription", async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000));
    const before = await snapshot(m, subscription.id);
    const otherBefore = await ok(other.test.get('/subscriptions'));
    for (const e of await sandboxEventsAbout(h.app, subscription)) {
      // Signed with this merchant's secret at the other's URL: refused.
      const mine = await postEvent(otherConn.connection.webhook_url, {
        payload: e.body,
        headers: signedHeaders(provider, conn.webhookSecret, e.body, e.id),
      });
      expect(mine.status).toBe(400);
      // Signed with the other's own secret (its gateway account forged or confused): accepted there, applied to nothing.
      const fresh = withNewId(provider, e.body);
      const theirs = await post(otherConn, provider, fresh);
      expect(theirs.status).toBe(200);
    }
    expect(await snapshot(m, subscription.id)).toEqual(before);
    expect(await ok(other.test.get('/subscriptions'))).toEqual(otherBefore);
    expect(await ok(other.test.get('/invoices'))).toMatchObject({ data: [] });
  });
});

describe('stripe: invoice.paid before checkout.session.completed', () => {
  it('the subscription still ends active with one invoice', async () => {
    const m = await h.merchant();
    const conn = await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    const received = await captureGatewayEvents(h.app, await h.receiver(), conn.connection, async () =>
      expect((await h.sandbox.submitCheckout(sub.checkout_url, { outcome: 'success' })).status).toBe(303),
    );
    const types = received.map((r) => JSON.parse(r.body).type);
    expect(types).toEqual(expect.arrayContaining(['checkout.session.completed', 'invoice.paid']));
    expect(types.indexOf('invoice.paid')).toBeGreaterThan(types.indexOf('checkout.session.completed'));
    // Delivered newest first: invoice.paid reaches the service before the checkout's completion.
    for (const got of [...received].reverse()) {
      const r = await postEvent(conn.connection.webhook_url, { payload: got.body, headers: got.headers });
      expect(r.status).toBe(200);
      expect(r.body.duplicate).toBe(false);
    }
    const after = await snapshot(m, sub.id);
    expect(after.sub.status).toBe('active');
    expect(after.sub.cycles_completed).toBe(1);
    expect(after.invoices).toHaveLength(1);
    expect(after.invoices[0]).toMatch(/:subscription_create:paid:/);
    expect(after.trail).toEqual([
      'none>created:subscription.created:api',
      'created>active:subscription.activated:webhook',
    ]);
    // And the normal order again (as duplicates): nothing more.
    for (const got of received) {
      const r = await postEvent(conn.connection.webhook_url, { payload: got.body, headers: got.headers });
      expect(r.body.duplicate).toBe(true);
    }
    expect(await snapshot(m, sub.id)).toEqual(after);
  });
});

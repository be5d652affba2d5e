import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan, subscriptionBody, trail } from './helpers';
import { allInvoices, collectedAt, gatewayPriceAmountsOf, gatewayPriceObjects, invoicesOf } from './helpers';
import { gst } from '../../src/money';

/**
 * Races on the subscription engine, through the real HTTP server on PostgreSQL and the gateway sandbox: lazy price
 * registration, Idempotency-Key under concurrency, two commands racing on one subscription, and invoice numbering
 * when many subscriptions are billed at once.
 */

const h = useHarness();
jest.setTimeout(120_000);

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });

  it('10 concurrent creates on a fresh price: all 201, the price registered at the gateway exactly once', async () => {
    const { plan, price } = await recurringPlan(m.test);
    expect(price.provider_price_ids).toEqual({});
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => m.test.post('/subscriptions', subscriptionBody(plan.id))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(answers.map((r) => r.body.id)).size).toBe(10);

    const after = await ok(m.test.get(`/prices/${price.id}`));
    expect(Object.keys(after.provider_price_ids)).toEqual([provider]);
    const gatewayId = after.provider_price_ids[provider];
    expect(gatewayId).toEqual(expect.any(String));
    // The gateway's own records: one price (Stripe) / plan (Razorpay) for this price, and every checkout used it.
    const objects = await gatewayPriceObjects(h.app, price.id);
    expect(objects.map((o) => o.id)).toEqual([gatewayId]);
  });

  it('12 concurrent creates of intra- and inter-state customers on a fresh price: one registration per gateway amount', async () => {
    // A GSTIN merchant: the gateway charges amount + GST, which differs by treatment for 49950 (intra 2 x 4496, inter 8991).
    const g = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(g.test, provider);
    const { plan, price } = await recurringPlan(g.test, {}, { amount: 49950 });
    const states = Array.from({ length: 12 }, (_, i) => (i % 2 ? '27' : '29'));
    const answers = await Promise.all(
      states.map((s) => g.test.post('/subscriptions', subscriptionBody(plan.id, { customer_state_code: s }))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(answers.map((r) => r.body.tax_treatment)).toEqual(states.map((s) => (s === '29' ? 'intra' : 'inter')));
    const total = (s: string) =>
      gst({
        subtotal: 49950,
        currency: 'INR',
        rateBps: 1800,
        merchantGstin: 'x',
        merchantState: '29',
        customerState: s,
      }).total;
    expect(total('29')).not.toBe(total('27'));
    // The gateway holds exactly one price (plan) per amount, and our table one row each.
    expect(await gatewayPriceAmountsOf(h.app, price.id)).toEqual([total('27'), total('29')].sort((a, b) => a - b));
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ gateway_amount: string; provider_price_id: string }[]>(
        'select gateway_amount, provider_price_id from gateway_prices where price_id = ? and provider = ? order by gateway_amount',
        [price.id, provider],
      );
    expect(rows.map((r) => Number(r.gateway_amount))).toEqual([total('27'), total('29')].sort((a, b) => a - b));
    expect((await gatewayPriceObjects(h.app, price.id)).map((o) => o.id).sort()).toEqual(
      rows.map((r) => r.provider_price_id).sort(),
    );
    // provider_price_ids names one of them, set once by whichever registration came first.
    const ids = (await ok(g.test.get(`/prices/${price.id}`))).provider_price_ids;
    expect(Object.keys(ids)).toEqual([provider]);
    expect(rows.map((r) => r.provider_price_id)).toContain(ids[provider]);
    // Each checkout used its own treatment's price: the first charge is the first invoice's total.
    const active = await Promise.all(answers.map((r) => authorise(g.test, r.body)));
    for (const [i, a] of active.entries()) {
      expect(a.subscription.status).toBe('active');
      const [first] = await invoicesOf(g.test, a.subscription.id);
      expect(first.total).toBe(total(states[i]));
      expect(await collectedAt(h.app, provider, a.subscription)).toBe(first.amount_paid);
    }
  });

  it('10 concurrent creates with the same Idempotency-Key and body: one subscription, the rest replays or 409 in flight', async () => {
    const { plan } = await recurringPlan(m.test);
    const body = subscriptionBody(plan.id);
    const key = `race-${crypto.randomBytes(6).toString('hex')}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => m.test.post('/subscriptions', body, { 'Idempotency-Key': key })),
    );
    const created = answers.filter((r) => r.status === 201);
    const inFlight = answers.filter((r) => r.status === 409);
    expect(created.length + inFlight.length).toBe(10);
    for (const r of inFlight) expect(r.body.error.code).toBe('idempotency_key_in_use');
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    // Exactly one non-replayed answer; every other 201 is a byte-for-byte replay.
    expect(created.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    for (const r of created) expect(r.text).toBe(created[0].text);
    const list = await ok(m.test.get(`/subscriptions?plan_id=${plan.id}&limit=100`));
    expect(list.data.map((s: any) => s.id)).toEqual([created[0].body.id]);
    // A retry after the race replays it too.
    const again = await m.test.post('/subscriptions', body, { 'Idempotency-Key': key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(created[0].body.id);
  });

  it('pause and cancel racing on one active subscription: one wins, the other 409s, one transition each win', async () => {
    const { plan } = await recurringPlan(m.test);
    let exactlyOne = 0;
    for (let i = 0; i < 10; i++) {
      const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
      expect(subscription.status).toBe('active');
      const before = await trail(m.test, subscription.id);
      const [pause, cancel] = await Promise.all([
        m.test.post(`/subscriptions/${subscription.id}/pause`),
        m.test.post(`/subscriptions/${subscription.id}/cancel`),
      ]);
      for (const r of [pause, cancel]) {
        expect([200, 409]).toContain(r.status);
        if (r.status === 409) expect(r.body.error.code).toBe('invalid_state_transition');
      }
      const added = (await trail(m.test, subscription.id)).slice(before.length);
      const final = await ok(m.test.get(`/subscriptions/${subscription.id}`));
      const wins = [pause, cancel].filter((r) => r.status === 200).length;
      expect(wins).toBeGreaterThanOrEqual(1);
      // Every win is exactly one transition, and nothing else moved.
      expect(added).toHaveLength(wins);
      if (wins === 1) {
        exactlyOne++;
        const winner = pause.status === 200 ? 'paused' : 'cancelled';
        expect(final.status).toBe(winner);
        expect(added).toEqual([
          winner === 'paused' ? 'active>paused:subscription.paused:api' : 'active>cancelled:subscription.cancelled:api',
        ]);
      } else {
        // Both succeeded only because they did not overlap: pause first, then cancel of the paused one (allowed).
        expect(added).toEqual(['active>paused:subscription.paused:api', 'paused>cancelled:subscription.cancelled:api']);
        expect(final.status).toBe('cancelled');
      }
      expect(final.pending_command ?? null).toBeNull();
    }
    // Sent together, the two overlap nearly always: the claim makes the second one 409.
    expect(exactlyOne).toBeGreaterThanOrEqual(7);
  });
});

describe('invoice numbering under concurrent billing', () => {
  it('20 subscriptions authorised at once and renewed by one advance: numbers unique, gap-free, sequential', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const subs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        createSubscription(m.test, plan.id, { provider: i % 2 ? 'razorpay' : 'stripe' }),
      ),
    );
    // All mandates at once: 20 first invoices issued by concurrent webhooks.
    const active = await Promise.all(subs.map((s) => authorise(m.test, s)));
    for (const a of active) expect(a.subscription.status).toBe('active');
    const lastEnd = Math.max(...active.map((a) => new Date(a.subscription.current_period_end).getTime()));
    await h.clock.advance(m, new Date(lastEnd + 60_000));
    for (const s of subs) expect((await ok(m.test.get(`/subscriptions/${s.id}`))).cycles_completed).toBe(2);

    const invoices = await allInvoices(m.test);
    expect(invoices).toHaveLength(40);
    const numbers = invoices.map((i: any) => i.number as string);
    expect(new Set(numbers).size).toBe(40);
    const seqs = numbers.map((n) => Number(n.split('-').at(-1))).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    // Issued in number order: a later number is never issued before an earlier one.
    const byNumber = [...invoices].sort((a: any, b: any) => a.number.localeCompare(b.number));
    for (const s of subs) {
      const own = byNumber.filter((i: any) => i.subscription_id === s.id);
      expect(own.map((i: any) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
    }
  });
});

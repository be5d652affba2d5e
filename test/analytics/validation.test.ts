import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { analytics, planAt, subscribed } from './helpers';

/**
 * The analytics endpoints' arguments (analytics.window.ts): bad `currency`, `from`, `to`, `interval` answer 400
 * parameter_invalid naming the parameter, unknown ones 400 parameter_unknown, on REST and GraphQL alike; and a
 * merchant's movements are seen by its own key and mode only.
 */

const h = useHarness();
jest.setTimeout(120_000);

let a: TestMerchant;
let b: TestMerchant;
beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
  await connect(a.test, 'stripe');
  const plan = await planAt(a.test, {}, { amount: 49900 });
  expect((await subscribed(a.test, plan.id)).status).toBe('active');
});

const PATHS = ['mrr', 'churn', 'quick-ratio'] as const;

describe.each(PATHS)('/analytics/%s', (path) => {
  it.each([
    ['currency=XYZ', 'currency'],
    ['currency=US', 'currency'],
    ['currency=', 'currency'],
    ['currency=usdollars', 'currency'],
    ['from=yesterday', 'from'],
    ['from=2026-02-30', 'from'],
    ['from=2026-13-01', 'from'],
    ['from=2026-01-01T10:00:00', 'from'], // a date-time needs its zone
    ['from=2026-01-01T25:00:00Z', 'from'],
    ['to=2026-01-01T10:00:00%2B25:00', 'to'],
    ['to=1700000000', 'to'],
    ['to=', 'to'],
    ['from=2026-03-01&to=2026-02-01', 'from'], // from after to
    ['from=2026-03-01T00:00:00Z&to=2026-03-01T00:00:00Z', 'from'], // empty window
    ['from=2020-01-01&to=2024-01-01', 'from'], // longer than 1096 days
    ['interval=year', 'interval'],
    ['interval=', 'interval'],
  ])('%s: 400 parameter_invalid on %s', async (qs, param) => {
    const r = await a.test.get(`/analytics/${path}?${qs}`);
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'parameter_invalid', param]);
  });

  it('an unknown parameter: 400 parameter_unknown', async () => {
    const r = await a.test.get(`/analytics/${path}?bogus=1`);
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'parameter_unknown', 'bogus']);
  });

  it('accepts dates, offsets and any case', async () => {
    const r = await a.test.get(
      `/analytics/${path}?currency=inr&from=2026-01-01&to=2026-01-31T05:30:00%2B05:30&interval=WEEK`,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ currency: 'INR', interval: 'week' });
    const to = path === 'mrr' ? r.body.as_of : r.body.to;
    expect([r.body.from, to]).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-31T00:00:00.000Z']);
  });
});

describe('/analytics/ltv', () => {
  it('takes currency, from and to: to ends the churn window (ARPU is read there), from starts it (default to less 90 days)', async () => {
    for (const [qs, param] of [
      ['currency=XYZ', 'currency'],
      ['to=2026-02-30', 'to'],
      ['to=yesterday', 'to'],
      ['from=2026-13-01', 'from'],
      ['from=2026-03-01&to=2026-02-01', 'from'],
      ['from=2020-01-01&to=2024-01-01', 'from'],
    ]) {
      const r = await a.test.get(`/analytics/ltv?${qs}`);
      expect([qs, r.status, r.body.error?.code, r.body.error?.param]).toEqual([qs, 400, 'parameter_invalid', param]);
    }
    expect((await a.test.get('/analytics/ltv?interval=week')).body.error).toMatchObject({
      code: 'parameter_unknown',
      param: 'interval',
    });
    expect((await a.test.get('/analytics/ltv?currency=inr')).status).toBe(200);
    const byTo = await analytics(a.test, 'ltv', { currency: 'inr', to: '2026-01-31' });
    // 90 days before 2026-01-31: 31 (January) + 30 (December) + 29 (November) days.
    expect(byTo).toMatchObject({
      currency: 'INR',
      from: '2025-11-02T00:00:00.000Z',
      to: '2026-01-31T00:00:00.000Z',
      as_of: '2026-01-31T00:00:00.000Z',
    });
    // Long before the subscription: nothing there, nothing churned.
    expect(byTo).toMatchObject({ arpu: 0, monthly_logo_churn_rate: 0, ltv: null, expected_lifetime_months: null });
    const both = await analytics(a.test, 'ltv', { from: '2026-01-01', to: '2026-01-31T05:30:00+05:30' });
    expect([both.from, both.to]).toEqual(['2026-01-01T00:00:00.000Z', '2026-01-31T00:00:00.000Z']);
    const g = await a.test.gql('{ ltv(from: "2026-01-01", to: "2026-01-31") { currency from to asOf ltv } }');
    expect(g.errors).toBeUndefined();
    expect(g.data.ltv).toEqual({
      currency: 'INR',
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-31T00:00:00.000Z',
      asOf: '2026-01-31T00:00:00.000Z',
      ltv: null,
    });
  });
});

it('GraphQL answers bad arguments with the same codes and params', async () => {
  const cases: [string, string, string][] = [
    ['{ mrr(currency: "XYZ") { mrr } }', 'parameter_invalid', 'currency'],
    ['{ churn(from: "2026-02-30") { logoChurnRate } }', 'parameter_invalid', 'from'],
    ['{ quickRatio(from: "2026-03-01", to: "2026-02-01") { quickRatio } }', 'parameter_invalid', 'from'],
    ['{ ltv(currency: "U") { ltv } }', 'parameter_invalid', 'currency'],
    ['{ ltv(to: "2026-02-30") { ltv } }', 'parameter_invalid', 'to'],
    ['{ autopay(currency: "XYZ") { attempts } }', 'parameter_invalid', 'currency'],
  ];
  for (const [query, code, param] of cases) {
    const r = await a.test.gql(query);
    expect([query, r.errors?.[0]?.extensions?.code, r.errors?.[0]?.extensions?.param]).toEqual([query, code, param]);
  }
  const bad = await a.test.gql('{ mrr(interval: YEAR) { mrr } }');
  expect(bad.errors?.[0]?.extensions?.code).toBe('parameter_invalid');
});

it("defaults: the reporting currency, the 30 days ending at the merchant's (test clock) now", async () => {
  const before = await h.clock.now(a);
  const r = await analytics(a.test, 'mrr');
  const asOf = new Date(r.as_of).getTime();
  expect(asOf).toBeGreaterThanOrEqual(before.getTime());
  expect(asOf - new Date(r.from).getTime()).toBe(30 * 86_400_000);
  expect(r).toMatchObject({ currency: 'INR', interval: 'month', mrr: 49900 });
  // Moving the test clock moves "now".
  await h.clock.advance(a, 10 * 86_400);
  const later = await analytics(a.test, 'mrr');
  expect(new Date(later.as_of).getTime() - asOf).toBeGreaterThanOrEqual(10 * 86_400_000);
});

it('another merchant, and the other mode, see none of the movements', async () => {
  expect(await analytics(a.test, 'mrr')).toMatchObject({
    mrr: 49900,
    active_subscriptions: 1,
    movements: { new: 49900 },
  });
  for (const c of [b.test, b.live, a.live]) {
    const mrr = await analytics(c, 'mrr');
    expect(mrr).toMatchObject({
      mrr: 0,
      active_subscriptions: 0,
      paying_customers: 0,
      movements: { new: 0, net_new: 0 },
    });
    expect(mrr.series.every((p: any) => p.mrr === 0 && p.new === 0)).toBe(true);
    expect(await analytics(c, 'churn')).toMatchObject({
      subscriptions_at_start: 0,
      mrr_at_start: 0,
      churned_subscriptions: 0,
    });
    expect(await analytics(c, 'quick-ratio')).toMatchObject({ new_mrr: 0, quick_ratio: null, healthy: false });
    expect(await analytics(c, 'ltv')).toMatchObject({ arpu: 0, ltv: null });
    const g = await c.gql('{ mrr { mrr activeSubscriptions } }');
    expect(g.data.mrr).toEqual({ mrr: 0, activeSubscriptions: 0 });
  }
});

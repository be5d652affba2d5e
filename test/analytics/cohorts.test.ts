import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * Retention cohorts (docs/analytics.md `GET /analytics/cohorts`, GraphQL `cohorts`) from the MRR movements ledger,
 * built through the API on the test clock. Customers activate in different months; one churns in its second month and
 * comes back later (a reactivation: it stays in its first cohort); one churns in its cohort's next month; one pays in
 * another currency. The tables are computed by hand below.
 */

const h = useHarness();
jest.setTimeout(180_000);

const at = (iso: string) => new Date(iso);

let m: TestMerchant;
let inr: string;
let usd: string;
const subs: Record<string, any> = {};

async function subscribe(name: string, planId: string, extra: Record<string, unknown> = {}) {
  const sub = await createSubscription(m.test, planId, {
    customer_email: `${name.toLowerCase()}@example.com`,
    ...extra,
  });
  const { subscription } = await authorise(m.test, sub);
  expect(subscription.status).toBe('active');
  return subscription;
}

async function cancel(sub: any) {
  const r = await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, {}));
  expect(r.status).toBe('cancelled');
}

/**
 * The story (2031, merchant time; monthly plans, renewals charged as the clock passes them):
 *   Jan 10  A subscribes (INR)                     Jan 12  B subscribes (INR)
 *   Jan 15  F subscribes (USD)
 *   Feb 15  C subscribes (INR)                     Feb 16  D subscribes (INR)
 *   Feb 20  B cancels (churns in its 2nd month)    Mar 03  D cancels
 *   Apr 05  B subscribes again (reactivation)      Apr 20  E subscribes (INR)
 *   now: May 10, 12:00
 */
beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
  inr = (await recurringPlan(m.test)).plan.id;
  usd = (await recurringPlan(m.test, {}, { currency: 'USD', amount: 1500 })).plan.id;
  await h.clock.advance(m, at('2031-01-10T12:00:00Z'));
  subs.A = await subscribe('A', inr);
  await h.clock.advance(m, at('2031-01-12T12:00:00Z'));
  subs.B = await subscribe('B', inr);
  await h.clock.advance(m, at('2031-01-15T12:00:00Z'));
  subs.F = await subscribe('F', usd);
  await h.clock.advance(m, at('2031-02-15T12:00:00Z'));
  subs.C = await subscribe('C', inr);
  await h.clock.advance(m, at('2031-02-16T12:00:00Z'));
  subs.D = await subscribe('D', inr);
  await h.clock.advance(m, at('2031-02-20T12:00:00Z'));
  await cancel(subs.B);
  await h.clock.advance(m, at('2031-03-03T12:00:00Z'));
  await cancel(subs.D);
  await h.clock.advance(m, at('2031-04-05T12:00:00Z'));
  subs.B2 = await subscribe('B', inr);
  expect(subs.B2.customer_id).toBe(subs.B.customer_id);
  await h.clock.advance(m, at('2031-04-20T12:00:00Z'));
  subs.E = await subscribe('E', inr);
  await h.clock.advance(m, at('2031-05-10T12:00:00Z'));
});

/** A cohort's retention as [period, active_customers, rate] triples. */
const table = (c: any) => c.retention.map((p: any) => [p.period, p.active_customers, p.rate]);

it('monthly cohorts from January: sizes and retention by hand', async () => {
  const r = await ok(m.test.get('/analytics/cohorts?granularity=month&from=2031-01-01T00:00:00Z'));
  expect(r.granularity).toBe('month');
  expect(r.currency).toBe('INR');
  expect(r.cohorts.map((c: any) => [c.cohort_start, c.customers])).toEqual([
    ['2031-01-01T00:00:00.000Z', 2], // A, B
    ['2031-02-01T00:00:00.000Z', 2], // C, D
    ['2031-03-01T00:00:00.000Z', 0],
    ['2031-04-01T00:00:00.000Z', 1], // E (B's return is a reactivation: B stays in January)
    ['2031-05-01T00:00:00.000Z', 0], // the running month
  ]);
  const [jan, feb, mar, apr, may] = r.cohorts;
  // January: paying at the end of Jan (A, B), Feb (A; B left on Feb 20), Mar (A), Apr (A, B back on Apr 5), and now.
  expect(table(jan)).toEqual([
    [0, 2, 1],
    [1, 1, 0.5],
    [2, 1, 0.5],
    [3, 2, 1],
    [4, 2, 1],
  ]);
  // February: end of Feb (C, D), Mar (C; D left on Mar 3), Apr (C), and now.
  expect(table(feb)).toEqual([
    [0, 2, 1],
    [1, 1, 0.5],
    [2, 1, 0.5],
    [3, 1, 0.5],
  ]);
  expect(table(mar)).toEqual([
    [0, 0, null],
    [1, 0, null],
    [2, 0, null],
  ]);
  expect(table(apr)).toEqual([
    [0, 1, 1],
    [1, 1, 1],
  ]);
  expect(table(may)).toEqual([[0, 0, null]]);
  // Period bounds: calendar months; the running one is measured at the merchant's now.
  expect(jan.retention[1]).toMatchObject({
    period_start: '2031-02-01T00:00:00.000Z',
    period_end: '2031-03-01T00:00:00.000Z',
  });
  const now = await h.clock.now(m);
  expect(new Date(jan.retention[4].period_end).getTime()).toBeLessThanOrEqual(now.getTime());
  expect(new Date(jan.retention[4].period_end).getTime()).toBeGreaterThanOrEqual(at('2031-05-10T12:00:00Z').getTime());
  expect(r.as_of).toBe(jan.retention[4].period_end);
});

it('by default: the last 12 months ending with the running one', async () => {
  const r = await ok(m.test.get('/analytics/cohorts'));
  expect(r.granularity).toBe('month');
  expect(r.cohorts.map((c: any) => c.cohort_start)).toEqual(
    [
      '2030-06',
      '2030-07',
      '2030-08',
      '2030-09',
      '2030-10',
      '2030-11',
      '2030-12',
      '2031-01',
      '2031-02',
      '2031-03',
      '2031-04',
      '2031-05',
    ].map((x) => `${x}-01T00:00:00.000Z`),
  );
  expect(r.cohorts.slice(0, 7).every((c: any) => c.customers === 0)).toBe(true);
  expect(table(r.cohorts[7])).toEqual([
    [0, 2, 1],
    [1, 1, 0.5],
    [2, 1, 0.5],
    [3, 2, 1],
    [4, 2, 1],
  ]);
  // The cohorts before January have a period per month up to now, all empty.
  expect(r.cohorts[0].retention).toHaveLength(12);
});

it('weekly cohorts start on Monday 00:00 UTC', async () => {
  // Jan 10 2031 is a Friday and Jan 12 a Sunday: A and B both belong to the week of Monday Jan 6.
  const r = await ok(
    m.test.get('/analytics/cohorts?granularity=week&from=2031-01-06T00:00:00Z&to=2031-01-27T00:00:00Z'),
  );
  expect(r.granularity).toBe('week');
  expect(r.cohorts.map((c: any) => [c.cohort_start, c.cohort_end, c.customers])).toEqual([
    ['2031-01-06T00:00:00.000Z', '2031-01-13T00:00:00.000Z', 2],
    ['2031-01-13T00:00:00.000Z', '2031-01-20T00:00:00.000Z', 0], // F pays in USD
    ['2031-01-20T00:00:00.000Z', '2031-01-27T00:00:00.000Z', 0],
  ]);
  for (const c of r.cohorts) expect(new Date(c.cohort_start).getUTCDay()).toBe(1);
  // Week k of the Jan 6 cohort ends on Jan 13 + 7k. B left on Thu Feb 20 (week 6: Feb 17..24) and came back on Sat
  // Apr 5 (week 12: Mar 31..Apr 7). Weeks up to now (Sat May 10 is in week 17: May 5..12).
  const weeks = r.cohorts[0].retention;
  expect(weeks).toHaveLength(18);
  expect(weeks[6]).toMatchObject({
    period: 6,
    period_start: '2031-02-17T00:00:00.000Z',
    period_end: '2031-02-24T00:00:00.000Z',
  });
  const expected = Array.from({ length: 18 }, (_, k) => (k >= 6 && k <= 11 ? 1 : 2));
  expect(weeks.map((p: any) => p.active_customers)).toEqual(expected);
  expect(weeks.map((p: any) => p.rate)).toEqual(expected.map((n) => n / 2));
});

it('counts one currency at a time', async () => {
  const r = await ok(m.test.get('/analytics/cohorts?currency=usd&from=2031-01-01T00:00:00Z&to=2031-02-01T00:00:00Z'));
  expect(r.currency).toBe('USD');
  expect(r.cohorts).toHaveLength(1);
  expect(r.cohorts[0]).toMatchObject({ cohort_start: '2031-01-01T00:00:00.000Z', customers: 1 }); // F
  expect(table(r.cohorts[0])).toEqual([
    [0, 1, 1],
    [1, 1, 1],
    [2, 1, 1],
    [3, 1, 1],
    [4, 1, 1],
  ]);
});

it('answers the same through GraphQL', async () => {
  const g = await m.test.gql(`{ cohorts(granularity: MONTH, from: "2031-01-01", to: "2031-03-01") {
    granularity cohorts { cohortStart customers retention { period activeCustomers rate } } } }`);
  expect(g.errors).toBeUndefined();
  expect(g.data.cohorts.granularity).toBe('MONTH');
  expect(
    g.data.cohorts.cohorts.map((c: any) => [
      c.cohortStart,
      c.customers,
      c.retention.map((p: any) => p.activeCustomers),
    ]),
  ).toEqual([
    ['2031-01-01T00:00:00.000Z', 2, [2, 1, 1, 2, 2]],
    ['2031-02-01T00:00:00.000Z', 2, [2, 1, 1, 1]],
  ]);
});

it('validates granularity, currency and the window', async () => {
  for (const [q, param] of [
    ['granularity=year', 'granularity'],
    ['granularity=', 'granularity'],
    ['currency=XX', 'currency'],
    ['from=2031-13-01', 'from'],
    ['from=2031-05-01&to=2031-04-01', null],
  ] as const) {
    const r = await m.test.get(`/analytics/cohorts?${q}`);
    expect([q, r.status, r.body.error?.code]).toEqual([q, 400, 'parameter_invalid']);
    if (param) expect(r.body.error.param).toBe(param);
  }
});

it("is the merchant's and the mode's own", async () => {
  const other = await h.merchant();
  const r = await ok(other.test.get('/analytics/cohorts'));
  expect(r.cohorts).toHaveLength(12);
  expect(r.cohorts.every((c: any) => c.customers === 0)).toBe(true);
  const live = await ok(m.live.get('/analytics/cohorts'));
  expect(live.cohorts.every((c: any) => c.customers === 0)).toBe(true);
});

it("every movement carries its customer's cohort instant: the first time it became paying in the currency", async () => {
  // Written by the ledger's writer (B's churn and its return in April keep January's instant), to the microsecond.
  const rows: { customer_id: string; currency: string; kind: string; same: boolean; first: Date }[] = await h.app.orm.em
    .getConnection()
    .execute(
      `select customer_id, currency, kind, customer_first_at = min(occurred_at) filter (where customer_delta = 1) over (partition by customer_id, currency) as same,
       customer_first_at as first
     from mrr_movements where merchant_id = ? and mode = 'test' order by occurred_at`,
      [m.id],
    );
  expect(rows.length).toBeGreaterThanOrEqual(9);
  expect(rows.filter((r) => !r.same)).toEqual([]);
  const b = rows.filter((r) => r.customer_id === subs.B.customer_id);
  expect(b.map((r) => r.kind)).toEqual(['new', 'churn', 'reactivation']);
  for (const r of b) expect(new Date(r.first).toISOString().slice(0, 10)).toBe('2031-01-12');
});

it('a movement inserted without its cohort instant gets it from the ledger (a bulk load)', async () => {
  const merchant = await h.merchant();
  const customer = crypto.randomUUID();
  const conn = h.app.orm.em.getConnection();
  const insert = (delta: number, kind: string, t: string) =>
    conn.execute(
      `insert into mrr_movements (id, merchant_id, mode, subscription_id, customer_id, currency, kind, amount, mrr_before, mrr_after,
         subscription_delta, customer_delta, reporting_currency, fx_rate, cause, occurred_at)
       values (?, ?, 'test', ?, ?, 'INR', ?, ?, 0, 0, ?, ?, 'INR', 1, 'test', ?)`,
      [crypto.randomUUID(), merchant.id, crypto.randomUUID(), customer, kind, delta * 1000, delta, delta, at(t)],
    );
  await insert(1, 'new', '2031-02-01T00:00:00.000Z'); // its first +1: its own instant (January's cohort: (start, end])
  await insert(-1, 'churn', '2031-03-10T00:00:00.000Z');
  await insert(1, 'reactivation', '2031-04-10T00:00:00.000Z');
  const got: { first: Date }[] = await conn.execute(
    `select customer_first_at as first from mrr_movements where merchant_id = ? order by occurred_at`,
    [merchant.id],
  );
  expect(got.map((r) => new Date(r.first).toISOString())).toEqual(Array(3).fill('2031-02-01T00:00:00.000Z'));
  await h.clock.advance(merchant, at('2031-05-10T12:00:00Z'));
  const r = await ok(
    merchant.test.get('/analytics/cohorts?granularity=month&from=2031-01-01T00:00:00Z&to=2031-02-01T00:00:00Z'),
  );
  expect(r.cohorts.map((c: any) => [c.cohort_start, c.customers, table(c).map((p: any) => p[1])])).toEqual([
    ['2031-01-01T00:00:00.000Z', 1, [1, 1, 0, 1, 1]],
  ]);
});

describe('against a per-customer, per-period count on a random ledger', () => {
  /** A small deterministic generator (mulberry32), so a failure reproduces. */
  function random(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const MONTH_STARTS = Array.from({ length: 25 }, (_, i) => Date.UTC(2030, i, 1));

  it.each([1, 2, 3])(
    'seed %i: monthly and weekly tables equal the brute-force count (instants on period boundaries included)',
    async (seed) => {
      const rnd = random(seed);
      const merchant = await h.merchant();
      const now = at('2032-01-15T00:00:00Z');
      await h.clock.advance(merchant, now);
      // Customers alternate +1 / -1 (paying, stopped), as the ledger's customer_delta does; a third of the instants sit
      // exactly on a month start.
      const customers: { id: string; times: number[] }[] = [];
      for (let c = 0; c < 60; c++) {
        const n = 1 + Math.floor(rnd() * 4);
        const times = new Set<number>();
        while (times.size < n) {
          times.add(
            rnd() < 0.33
              ? MONTH_STARTS[Math.floor(rnd() * 24)]
              : Date.UTC(2030, 0, 1) + Math.floor(rnd() * 730) * 86_400_000 + Math.floor(rnd() * 86_400) * 1000,
          );
        }
        customers.push({ id: crypto.randomUUID(), times: [...times].sort((a, b) => a - b) });
      }
      const values: unknown[] = [];
      const rows: string[] = [];
      for (const c of customers) {
        c.times.forEach((t, i) => {
          const delta = i % 2 === 0 ? 1 : -1;
          const kind = delta < 0 ? 'churn' : i === 0 ? 'new' : 'reactivation';
          rows.push(`(?, ?, 'test', ?, ?, 'INR', ?, ?, 0, 0, ?, ?, 'INR', 1, 'test', ?)`);
          values.push(
            crypto.randomUUID(),
            merchant.id,
            crypto.randomUUID(),
            c.id,
            kind,
            delta * 1000,
            delta,
            delta,
            new Date(t),
          );
        });
      }
      await h.app.orm.em.getConnection().execute(
        `insert into mrr_movements (id, merchant_id, mode, subscription_id, customer_id, currency, kind, amount, mrr_before, mrr_after,
         subscription_delta, customer_delta, reporting_currency, fx_rate, cause, occurred_at) values ${rows.join(', ')}`,
        values,
      );

      for (const [unit, from, to] of [
        ['month', '2030-01-01T00:00:00Z', '2032-01-15T00:00:00Z'],
        ['week', '2030-01-01T00:00:00Z', '2032-01-15T00:00:00Z'],
        // Cohorts of a window in the middle: earlier customers' later movements must not count.
        ['month', '2031-03-01T00:00:00Z', '2031-09-01T00:00:00Z'],
        ['week', '2031-03-04T12:00:00Z', '2031-06-01T00:00:00Z'],
      ] as const) {
        const r = await ok(merchant.test.get(`/analytics/cohorts?granularity=${unit}&from=${from}&to=${to}`));
        // Brute force: a bucket is (start, end]; a customer is paying at T when it has more +1 than -1 at or before T.
        const startOf = (t: number) => {
          const d = new Date(t - 1);
          if (unit === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
          const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
          return midnight - ((d.getUTCDay() + 6) % 7) * 86_400_000;
        };
        const next = (t: number) =>
          unit === 'month'
            ? Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1)
            : t + 7 * 86_400_000;
        const paying = (c: { times: number[] }, T: number) => c.times.filter((t) => t <= T).length % 2 === 1;
        const expected: [string, number, number[]][] = [];
        for (let start = startOf(at(from).getTime() + 1); start <= startOf(at(to).getTime()); start = next(start)) {
          const members = customers.filter((c) => startOf(c.times[0]) === start);
          const active: number[] = [];
          for (let p = start; p <= startOf(now.getTime()); p = next(p))
            active.push(members.filter((c) => paying(c, Math.min(next(p), now.getTime()))).length);
          expected.push([new Date(start).toISOString(), members.length, active]);
        }
        if (from.startsWith('2030')) {
          // Weekly, the first cohort (from Monday 2029-12-30) holds everyone; monthly, those activated at
          // 2030-01-01T00:00Z exactly are not: that instant ends December's period.
          expect(expected.reduce((n, [, size]) => n + size, 0)).toBe(
            customers.filter((c) => unit === 'week' || c.times[0] > Date.UTC(2030, 0, 1)).length,
          );
        }
        const got = r.cohorts.map((c: any) => [
          c.cohort_start,
          c.customers,
          c.retention.map((p: any) => p.active_customers),
        ]);
        expect([unit, from, got]).toEqual([unit, from, expected]);
      }
    },
  );
});

import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * Retention cohorts (contract 14 `GET /analytics/cohorts`, GraphQL `cohorts`) from the MRR movements ledger, built
 * through the API on the test clock. Customers activate in different months; one churns in its second month and comes
 * back later (a reactivation: it stays in its first cohort); one churns in its cohort's next month; one pays in another
 * currency. The tables are computed by hand below.
 */

const h = useHarness();
jest.setTimeout(180_000);

const at = (iso: string) => new Date(iso);

let m: TestMerchant;
let inr: string;
let usd: string;
const subs: Record<string, any> = {};

async function subscribe(name: string, planId: string, extra: Record<string, unknown> = {}) {
  const sub = await createSubscription(m.test, planId, { customer_email: `${name.toLowerCase()}@example.com`, ...extra });
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
  expect(table(jan)).toEqual([[0, 2, 1], [1, 1, 0.5], [2, 1, 0.5], [3, 2, 1], [4, 2, 1]]);
  // February: end of Feb (C, D), Mar (C; D left on Mar 3), Apr (C), and now.
  expect(table(feb)).toEqual([[0, 2, 1], [1, 1, 0.5], [2, 1, 0.5], [3, 1, 0.5]]);
  expect(table(mar)).toEqual([[0, 0, null], [1, 0, null], [2, 0, null]]);
  expect(table(apr)).toEqual([[0, 1, 1], [1, 1, 1]]);
  expect(table(may)).toEqual([[0, 0, null]]);
  // Period bounds: calendar months; the running one is measured at the merchant's now.
  expect(jan.retention[1]).toMatchObject({ period_start: '2031-02-01T00:00:00.000Z', period_end: '2031-03-01T00:00:00.000Z' });
  const now = await h.clock.now(m);
  expect(new Date(jan.retention[4].period_end).getTime()).toBeLessThanOrEqual(now.getTime());
  expect(new Date(jan.retention[4].period_end).getTime()).toBeGreaterThanOrEqual(at('2031-05-10T12:00:00Z').getTime());
  expect(r.as_of).toBe(jan.retention[4].period_end);
});

it('by default: the last 12 months ending with the running one', async () => {
  const r = await ok(m.test.get('/analytics/cohorts'));
  expect(r.granularity).toBe('month');
  expect(r.cohorts.map((c: any) => c.cohort_start)).toEqual(
    ['2030-06', '2030-07', '2030-08', '2030-09', '2030-10', '2030-11', '2030-12', '2031-01', '2031-02', '2031-03', '2031-04', '2031-05'].map((x) => `${x}-01T00:00:00.000Z`),
  );
  expect(r.cohorts.slice(0, 7).every((c: any) => c.customers === 0)).toBe(true);
  expect(table(r.cohorts[7])).toEqual([[0, 2, 1], [1, 1, 0.5], [2, 1, 0.5], [3, 2, 1], [4, 2, 1]]);
  // The cohorts before January have a period per month up to now, all empty.
  expect(r.cohorts[0].retention).toHaveLength(12);
});

it('weekly cohorts start on Monday 00:00 UTC', async () => {
  // Jan 10 2031 is a Friday and Jan 12 a Sunday: A and B both belong to the week of Monday Jan 6.
  const r = await ok(m.test.get('/analytics/cohorts?granularity=week&from=2031-01-06T00:00:00Z&to=2031-01-27T00:00:00Z'));
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
  expect(weeks[6]).toMatchObject({ period: 6, period_start: '2031-02-17T00:00:00.000Z', period_end: '2031-02-24T00:00:00.000Z' });
  const expected = Array.from({ length: 18 }, (_, k) => (k >= 6 && k <= 11 ? 1 : 2));
  expect(weeks.map((p: any) => p.active_customers)).toEqual(expected);
  expect(weeks.map((p: any) => p.rate)).toEqual(expected.map((n) => n / 2));
});

it('counts one currency at a time', async () => {
  const r = await ok(m.test.get('/analytics/cohorts?currency=usd&from=2031-01-01T00:00:00Z&to=2031-02-01T00:00:00Z'));
  expect(r.currency).toBe('USD');
  expect(r.cohorts).toHaveLength(1);
  expect(r.cohorts[0]).toMatchObject({ cohort_start: '2031-01-01T00:00:00.000Z', customers: 1 }); // F
  expect(table(r.cohorts[0])).toEqual([[0, 1, 1], [1, 1, 1], [2, 1, 1], [3, 1, 1], [4, 1, 1]]);
});

it('answers the same through GraphQL', async () => {
  const g = await m.test.gql(`{ cohorts(granularity: MONTH, from: "2031-01-01", to: "2031-03-01") {
    granularity cohorts { cohortStart customers retention { period activeCustomers rate } } } }`);
  expect(g.errors).toBeUndefined();
  expect(g.data.cohorts.granularity).toBe('MONTH');
  expect(g.data.cohorts.cohorts.map((c: any) => [c.cohortStart, c.customers, c.retention.map((p: any) => p.activeCustomers)])).toEqual([
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

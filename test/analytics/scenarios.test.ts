import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { ok } from '../subscriptions/helpers';
import { createCoupon } from '../coupons/helpers';
import { analytics, at, planAt, subscribed } from './helpers';

/**
 * Hand-worked analytics (docs/analytics.md): histories built through the API on the test clock, and the MRR,
 * movements, series, churn, quick ratio and LTV they must give, each expected number worked out by hand below.
 * Each scenario has its own merchant (its own clock and numbers), in a year two years ahead so dates are fixed.
 */

const h = useHarness();
jest.setTimeout(300_000);

const Y = new Date().getUTCFullYear() + 2;
/** `d('01-10')` = Y-01-10T00:00:00Z; `d('01-10T12:00:00')` likewise. */
const d = (s: string) => at(`${Y}-${s}`);
const iso = (s: string) => d(s).toISOString();

async function merchant(body: Record<string, unknown> = {}): Promise<TestMerchant> {
  const m = await h.merchant(body);
  await connect(m.test, 'stripe');
  return m;
}

const ZERO = { new: 0, expansion: 0, contraction: 0, churn: 0, reactivation: 0 };

it('monthly, quarterly, yearly, weekly and daily plans are normalised to months', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const plans = await Promise.all([
    planAt(m.test, { billing_frequency: 'monthly' }, { amount: 49900 }),
    planAt(m.test, { billing_frequency: 'monthly', billing_interval: 3 }, { amount: 30000 }),
    planAt(m.test, { billing_frequency: 'yearly' }, { amount: 120000 }),
    planAt(m.test, { billing_frequency: 'weekly' }, { amount: 1000 }),
    planAt(m.test, { billing_frequency: 'daily' }, { amount: 30 }),
  ]);
  for (const p of plans) expect((await subscribed(m.test, p.id)).status).toBe('active');

  const MONTHLY = 49900; // 49900 / 1
  const QUARTERLY = 10000; // 30000 / 3
  const YEARLY = 10000; // 120000 / 12
  const WEEKLY = 4333; // 1000 x 52 / 12 = 4333.33 -> 4333
  const DAILY = 913; // 30 x 365 / 12 = 912.5 -> 913 (half away from zero)
  const MRR = MONTHLY + QUARTERLY + YEARLY + WEEKLY + DAILY; // 75146
  expect(MRR).toBe(75146);

  const now = await h.clock.now(m);
  const a = await analytics(m.test, 'mrr', { from: iso('01-01') });
  expect(a).toEqual({
    currency: 'INR',
    from: d('01-01').toISOString(),
    as_of: expect.any(String), // to defaults to the merchant's now (checked below)
    interval: 'month',
    mrr: MRR,
    arr: 12 * MRR, // 901752
    active_subscriptions: 5,
    paying_customers: 5,
    arpu: 15029, // 75146 / 5 = 15029.2 -> 15029
    movements: { ...ZERO, new: MRR, net_new: MRR },
    series: [{ period_start: d('01-01').toISOString(), period_end: a.as_of, mrr: MRR, ...ZERO, new: MRR }],
  });
  // as_of is the test clock's now (read just before the request), not the wall clock.
  expect(Math.abs(new Date(a.as_of).getTime() - now.getTime())).toBeLessThan(5_000);
  // Nothing was lost: no quick ratio, and no ratio is not healthy (docs/analytics.md: `healthy` when > 4).
  expect(await analytics(m.test, 'quick-ratio', { from: iso('01-01') })).toMatchObject({
    new_mrr: MRR,
    expansion_mrr: 0,
    contraction_mrr: 0,
    churn_mrr: 0,
    quick_ratio: null,
    healthy: false,
  });
});

it('upgrade, downgrade, pause, resume, cancel and a customer coming back, month by month', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const basic = await planAt(m.test, {}, { amount: 10000 });
  const pro = await planAt(m.test, {}, { amount: 25000 });
  const plus = await planAt(m.test, {}, { amount: 20000 });

  const sub = await subscribed(m.test, basic.id); // Jan 10: new +10000
  await h.clock.advance(m, d('01-20'));
  await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: pro.id })); // Jan 20: expansion +15000 (25000 - 10000)
  await h.clock.advance(m, d('02-15')); // renews on Feb 10: no movement
  await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: plus.id })); // Feb 15: contraction -5000 (20000 - 25000)
  await h.clock.advance(m, d('02-20'));
  await ok(m.test.post(`/subscriptions/${sub.id}/pause`)); // Feb 20: churn -20000
  await h.clock.advance(m, d('03-05'));
  await ok(m.test.post(`/subscriptions/${sub.id}/resume`)); // Mar 5: reactivation +20000 (resumed)
  await h.clock.advance(m, d('03-08'));
  await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: false })); // Mar 8: churn -20000
  await h.clock.advance(m, d('03-12'));
  await subscribed(m.test, basic.id, { customer_id: sub.customer_id }); // Mar 12: reactivation +10000 (back after churn)
  await h.clock.advance(m, d('03-20'));

  const window = { from: iso('01-01'), to: iso('03-31') };
  const a = await analytics(m.test, 'mrr', window);
  expect(a).toEqual({
    currency: 'INR',
    from: iso('01-01'),
    as_of: iso('03-31'),
    interval: 'month',
    mrr: 10000,
    arr: 120000,
    active_subscriptions: 1,
    paying_customers: 1,
    arpu: 10000,
    // new 10000; expansion 15000; contraction 5000; churn 20000 + 20000; reactivation 20000 + 10000
    // net_new = 10000 + 15000 + 30000 - 5000 - 40000 = 10000
    movements: { new: 10000, expansion: 15000, contraction: 5000, churn: 40000, reactivation: 30000, net_new: 10000 },
    series: [
      // (Jan 1, Feb 1]: 10000 + 15000 = 25000 at its end
      { period_start: iso('01-01'), period_end: iso('02-01'), mrr: 25000, ...ZERO, new: 10000, expansion: 15000 },
      // (Feb 1, Mar 1]: 25000 - 5000 - 20000 = 0
      { period_start: iso('02-01'), period_end: iso('03-01'), mrr: 0, ...ZERO, contraction: 5000, churn: 20000 },
      // (Mar 1, Mar 31]: 0 + 20000 - 20000 + 10000 = 10000 (clipped to `to`)
      { period_start: iso('03-01'), period_end: iso('03-31'), mrr: 10000, ...ZERO, churn: 20000, reactivation: 30000 },
    ],
  });

  // Weeks start on Monday 00:00 UTC; the first and last are clipped to the window; their sums are the window's.
  const weeks = await analytics(m.test, 'mrr', { ...window, interval: 'week' });
  expect(weeks.movements).toEqual(a.movements);
  expect(weeks.series[0].period_start).toBe(iso('01-01'));
  expect(weeks.series.at(-1).period_end).toBe(iso('03-31'));
  for (const p of weeks.series.slice(1))
    expect([new Date(p.period_start).getUTCDay(), p.period_start.slice(11)]).toEqual([1, '00:00:00.000Z']);
  for (const [i, p] of weeks.series.entries()) if (i > 0) expect(p.period_start).toBe(weeks.series[i - 1].period_end);
  for (const k of ['new', 'expansion', 'contraction', 'churn', 'reactivation'] as const) {
    expect(weeks.series.reduce((s: number, p: any) => s + p[k], 0)).toBe(a.movements[k]);
  }
  expect(weeks.series.at(-1).mrr).toBe(10000);

  // Churn from Jan 31 (1 subscription, MRR 25000) to Mar 31: the pause and the cancellation churned.
  const churn = await analytics(m.test, 'churn', { from: iso('01-31'), to: iso('03-31') });
  expect(churn).toMatchObject({
    currency: 'INR',
    from: iso('01-31'),
    to: iso('03-31'),
    subscriptions_at_start: 1,
    churned_subscriptions: 2,
    logo_churn_rate: 2, // 2 / 1
    mrr_at_start: 25000,
    churned_mrr: 40000, // 20000 (pause) + 20000 (cancel)
    contraction_mrr: 5000,
    revenue_churn_rate: 1.8, // (40000 + 5000) / 25000
  });
  // From Jan 1 nothing was counted: losses from nothing have no rate.
  expect(await analytics(m.test, 'churn', window)).toMatchObject({
    subscriptions_at_start: 0,
    churned_subscriptions: 2,
    logo_churn_rate: null,
    revenue_churn_rate: null,
  });

  // Quick ratio over the quarter: (10000 + 15000) / (5000 + 40000) = 0.5555...
  const q = await analytics(m.test, 'quick-ratio', window);
  expect(q).toMatchObject({
    new_mrr: 10000,
    expansion_mrr: 15000,
    contraction_mrr: 5000,
    churn_mrr: 40000,
    healthy: false,
  });
  expect(q.quick_ratio).toBeCloseTo(25000 / 45000, 12);
  // January alone: gains only.
  expect(q.series[0]).toMatchObject({ new_mrr: 10000, expansion_mrr: 15000, quick_ratio: null, healthy: false });

  // GraphQL answers the same numbers, with chart-friendly series.
  const g = await m.test.gql(
    `query($from: String, $to: String) { mrr(from: $from, to: $to) { currency asOf mrr arr activeSubscriptions payingCustomers arpu
       movements { new expansion contraction churn reactivation netNew } series { periodStart periodEnd mrr new churn reactivation } }
     churn(from: "${iso('01-31')}", to: $to) { logoChurnRate revenueChurnRate churnedMrr }
     quickRatio(from: $from, to: $to) { quickRatio healthy } }`,
    window,
  );
  expect(g.errors).toBeUndefined();
  expect(g.data.mrr).toMatchObject({
    currency: 'INR',
    asOf: iso('03-31'),
    mrr: 10000,
    arr: 120000,
    activeSubscriptions: 1,
    payingCustomers: 1,
    arpu: 10000,
  });
  expect(g.data.mrr.movements).toEqual({
    new: 10000,
    expansion: 15000,
    contraction: 5000,
    churn: 40000,
    reactivation: 30000,
    netNew: 10000,
  });
  expect(g.data.mrr.series.map((p: any) => [p.periodStart, p.periodEnd, p.mrr])).toEqual(
    a.series.map((p: any) => [p.period_start, p.period_end, p.mrr]),
  );
  expect(g.data.churn).toEqual({ logoChurnRate: 2, revenueChurnRate: 1.8, churnedMrr: 40000 });
  expect(g.data.quickRatio).toEqual({ quickRatio: q.quick_ratio, healthy: false });
});

it('a forever coupon lowers MRR; repeating and once coupons do not, also when they end', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const monthly = await planAt(m.test, {}, { amount: 49900 });
  const yearly = await planAt(m.test, { billing_frequency: 'yearly' }, { amount: 132000 });
  const forever = await createCoupon(m.test, { percent_off: 20, duration: 'forever' });
  const foreverOff = await createCoupon(m.test, { amount_off: 12000, currency: 'INR', duration: 'forever' });
  const repeating = await createCoupon(m.test, { percent_off: 50, duration: 'repeating', duration_in_cycles: 2 });
  const once = await createCoupon(m.test, { percent_off: 10, duration: 'once' });
  await subscribed(m.test, monthly.id, { coupon_code: forever.code }); // 49900 - 20% (9980) = 39920
  await subscribed(m.test, yearly.id, { coupon_code: foreverOff.code }); // (132000 - 12000) / 12 = 10000
  const rep = await subscribed(m.test, monthly.id, { coupon_code: repeating.code }); // 49900: the discount is temporary
  await subscribed(m.test, monthly.id, { coupon_code: once.code }); // 49900
  const MRR = 39920 + 10000 + 49900 + 49900; // 149720

  const first = await analytics(m.test, 'mrr', { from: iso('01-01') });
  expect(first).toMatchObject({ mrr: MRR, active_subscriptions: 4, paying_customers: 4, arpu: 37430 }); // 149720 / 4
  // Three renewals later the repeating and once coupons have ended: MRR did not move, no movement but the four news.
  await h.clock.advance(m, d('04-15'));
  expect((await ok(m.test.get(`/subscriptions/${rep.id}`))).discount_cycles_remaining).toBe(0);
  const later = await analytics(m.test, 'mrr', { from: iso('01-01') });
  expect(later).toMatchObject({ mrr: MRR, movements: { ...ZERO, new: MRR, net_new: MRR } });
  expect(later.series.map((p: any) => p.mrr)).toEqual([MRR, MRR, MRR, MRR]);
});

it('a trial counts only once it is paid for', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const plan = await planAt(m.test, { trial_period_days: 7 }, { amount: 20000 });
  const sub = await subscribed(m.test, plan.id);
  expect(sub.status).toBe('trialing');
  expect(await analytics(m.test, 'mrr', { from: iso('01-01') })).toMatchObject({
    mrr: 0,
    active_subscriptions: 0,
    paying_customers: 0,
    arpu: 0,
    movements: { ...ZERO, net_new: 0 },
  });
  await h.clock.advance(m, d('01-18')); // the trial ends Jan 17: charged, active
  const a = await analytics(m.test, 'mrr', { from: iso('01-01'), interval: 'week' });
  expect(a).toMatchObject({
    mrr: 20000,
    active_subscriptions: 1,
    paying_customers: 1,
    movements: { ...ZERO, new: 20000, net_new: 20000 },
  });
  // The movement is in the week of Jan 17 (the trial's end), not of Jan 10 (its start).
  const inWeek = a.series.find((p: any) => p.new === 20000);
  // (The charge runs when the clock reaches the trial's end, a moment after it: the bucket (start, end] holding it.)
  const end = new Date(sub.trial_end).getTime();
  expect(new Date(inWeek.period_start).getTime()).toBeLessThanOrEqual(end);
  expect(new Date(inWeek.period_end).getTime()).toBeGreaterThan(end);
});

it('two currencies are answered apart, never converted', async () => {
  const m = await merchant(); // reporting currency INR
  await h.clock.advance(m, d('01-10'));
  const plan = await planAt(m.test, {}, { amount: 49900 });
  await ok(m.test.post(`/plans/${plan.id}/prices`, { currency: 'USD', amount: 1500, is_default: true }), 201);
  const x = await subscribed(m.test, plan.id); // INR 49900
  await subscribed(m.test, plan.id, { currency: 'USD' }); // customer Y: USD 1500, new
  await subscribed(m.test, plan.id, { currency: 'USD', customer_id: x.customer_id }); // X's first in USD: new too

  expect(await analytics(m.test, 'mrr', { from: iso('01-01') })).toMatchObject({
    currency: 'INR',
    mrr: 49900,
    active_subscriptions: 1,
    paying_customers: 1,
    arpu: 49900,
    movements: { new: 49900 },
  });
  expect(await analytics(m.test, 'mrr', { from: iso('01-01'), currency: 'usd' })).toMatchObject({
    currency: 'USD',
    mrr: 3000,
    active_subscriptions: 2,
    paying_customers: 2,
    arpu: 1500,
    movements: { new: 3000, net_new: 3000 },
  });
  expect(await analytics(m.test, 'mrr', { from: iso('01-01'), currency: 'EUR' })).toMatchObject({
    currency: 'EUR',
    mrr: 0,
    paying_customers: 0,
  });
  // The rate stored with each movement: 1 in the reporting currency, none (not converted) in another.
  const rows = await h.app.orm.em
    .getConnection()
    .execute<{ currency: string; reporting_currency: string; fx_rate: string | null }[]>(
      `select currency, reporting_currency, fx_rate::text as fx_rate from mrr_movements where merchant_id = ? order by currency`,
      [m.id],
    );
  expect(rows).toEqual([
    { currency: 'INR', reporting_currency: 'INR', fx_rate: '1' },
    { currency: 'USD', reporting_currency: 'INR', fx_rate: null },
    { currency: 'USD', reporting_currency: 'INR', fx_rate: null },
  ]);
  // A merchant reporting in USD gets USD by default.
  const u = await merchant({ reporting_currency: 'USD' });
  expect(await analytics(u.test, 'mrr')).toMatchObject({ currency: 'USD', mrr: 0 });
});

it('dunning: past_due still counts; a hard decline halts (churn); a recovered retry moves nothing', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const plan = await planAt(m.test, {}, { amount: 10000 });
  const halted = await subscribed(m.test, plan.id, {}, { outcome: 'success', card_number: '4000000000009979' }); // stolen_card at the first renewal
  const recovers = await subscribed(m.test, plan.id, {}, { outcome: 'success', card_number: '4000000000000119' }); // fails once, then pays
  await h.clock.advance(m, d('02-10T12:00:00')); // the first renewal (Feb 10)
  expect((await ok(m.test.get(`/subscriptions/${halted.id}`))).status).toBe('halted');
  expect((await ok(m.test.get(`/subscriptions/${recovers.id}`))).status).toBe('past_due');
  // past_due is counted: 10000 left.
  expect(await analytics(m.test, 'mrr', { from: iso('01-01') })).toMatchObject({
    mrr: 10000,
    active_subscriptions: 1,
    paying_customers: 1,
  });
  await h.clock.advance(m, d('02-12')); // the first retry (a day after the failure) succeeds
  expect((await ok(m.test.get(`/subscriptions/${recovers.id}`))).status).toBe('active');

  const window = { from: iso('01-01'), to: iso('02-28') };
  expect(await analytics(m.test, 'mrr', window)).toMatchObject({
    mrr: 10000, // 10000 + 10000 - 10000
    movements: { ...ZERO, new: 20000, churn: 10000, net_new: 10000 },
    series: [
      { period_start: iso('01-01'), period_end: iso('02-01'), mrr: 20000, new: 20000, churn: 0 },
      { period_start: iso('02-01'), period_end: iso('02-28'), mrr: 10000, new: 0, churn: 10000 },
    ],
  });
  // From Feb 1: 2 subscriptions (MRR 20000) at the start, 1 churned (10000).
  expect(await analytics(m.test, 'churn', { from: iso('02-01'), to: iso('02-28') })).toMatchObject({
    subscriptions_at_start: 2,
    churned_subscriptions: 1,
    logo_churn_rate: 0.5,
    mrr_at_start: 20000,
    churned_mrr: 10000,
    contraction_mrr: 0,
    revenue_churn_rate: 0.5,
  });
  // (20000 + 0) / (0 + 10000) = 2: not healthy.
  expect(await analytics(m.test, 'quick-ratio', window)).toMatchObject({
    new_mrr: 20000,
    churn_mrr: 10000,
    quick_ratio: 2,
    healthy: false,
  });
});

it('LTV from the last 90 days of logo churn', async () => {
  const m = await merchant();
  await h.clock.advance(m, d('01-10'));
  const yearly = await planAt(m.test, { billing_frequency: 'yearly' }, { amount: 120000 }); // 10000 a month
  const small = await planAt(m.test, { billing_frequency: 'yearly' }, { amount: 60000 }); // 5000 a month
  const subs = [];
  for (let i = 0; i < 4; i++) subs.push(await subscribed(m.test, yearly.id));
  await h.clock.advance(m, d('03-01'));
  await subscribed(m.test, small.id);

  // No churn yet: no LTV. ARPU = (4 x 10000 + 5000) / 5 = 9000.
  expect(await analytics(m.test, 'ltv')).toMatchObject({
    currency: 'INR',
    arpu: 9000,
    monthly_logo_churn_rate: 0,
    ltv: null,
    expected_lifetime_months: null,
  });

  await h.clock.advance(m, d('04-20')); // 90 days back is in late January: the four yearly subscriptions were counted then
  await ok(m.test.post(`/subscriptions/${subs[0].id}/cancel`, { cancel_at_period_end: false }));
  const l = await analytics(m.test, 'ltv');
  // 90-day logo churn = 1 / 4; monthly = 1/4 x 30 / 90 = 1/12.
  // ARPU = (3 x 10000 + 5000) / 4 customers = 8750; LTV = 8750 / (1/12) = 105000; lifetime = 12 months.
  expect(l).toMatchObject({ currency: 'INR', arpu: 8750, ltv: 105000 });
  expect(l.monthly_logo_churn_rate).toBeCloseTo(1 / 12, 12);
  expect(l.expected_lifetime_months).toBeCloseTo(12, 12);
  expect(Math.abs(new Date(l.as_of).getTime() - (await h.clock.now(m)).getTime())).toBeLessThan(5_000);
  expect(new Date(l.as_of).getTime() - new Date(l.from).getTime()).toBe(90 * 86_400_000);
  expect(l.to).toBe(l.as_of);

  // `to` ends the window: the 90 days to the day before the cancellation saw no churn.
  expect(await analytics(m.test, 'ltv', { to: iso('04-19') })).toMatchObject({
    from: new Date(d('04-19').getTime() - 90 * 86_400_000).toISOString(),
    to: iso('04-19'),
    as_of: iso('04-19'),
    arpu: 9000,
    monthly_logo_churn_rate: 0,
    ltv: null,
    expected_lifetime_months: null,
  });
  // `from` starts it: 30 days from 03-22 (5 subscriptions counted then, 1 churned): logo churn 1/5 over 30 days, so
  // monthly 1/5 x 30 / 30 = 0.2; ARPU at 04-21 = 8750; LTV = 8750 / 0.2 = 43750; lifetime 5 months.
  const month = await analytics(m.test, 'ltv', { from: iso('03-22'), to: iso('04-21') });
  expect(month).toMatchObject({ from: iso('03-22'), to: iso('04-21'), arpu: 8750, ltv: 43750 });
  expect(month.monthly_logo_churn_rate).toBeCloseTo(0.2, 12);
  expect(month.expected_lifetime_months).toBeCloseTo(5, 12);
  // 60 days to 04-21 (from late February: 4 counted then): 1/4 x 30 / 60 = 1/8 a month; LTV = 8750 x 8 = 70000.
  const two = await analytics(m.test, 'ltv', {
    from: new Date(d('04-21').getTime() - 60 * 86_400_000),
    to: iso('04-21'),
  });
  expect(two).toMatchObject({ arpu: 8750, ltv: 70000 });
  expect(two.monthly_logo_churn_rate).toBeCloseTo(1 / 8, 12);
  const g = await m.test.gql(
    `query($from: String, $to: String) { ltv(from: $from, to: $to) { from to ltv monthlyLogoChurnRate } }`,
    { from: iso('03-22'), to: iso('04-21') },
  );
  expect(g.data.ltv).toMatchObject({ from: iso('03-22'), to: iso('04-21'), ltv: 43750 });

  // Gains 40000 + 5000 against the churn of 10000: 4.5, healthy.
  expect(await analytics(m.test, 'quick-ratio', { from: iso('01-01'), to: iso('04-30') })).toMatchObject({
    new_mrr: 45000,
    churn_mrr: 10000,
    quick_ratio: 4.5,
    healthy: true,
  });
});

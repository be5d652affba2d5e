/**
 * Experiment results from real billing data (docs/growth.md): visitors enrolled through resolve,
 * then real subscriptions, trials, payments and renewals through the gateway sandbox and the test clock; and the
 * sample-ratio check on a skewed split.
 */
import { useHarness, TestMerchant } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';
import { authorise, createSubscription, recurringPlan } from '../subscriptions/helpers';
import { customers, offering, ok, resolve, running, sql, twoArms } from './helpers';

const h = useHarness();
let m: TestMerchant;
let o1: string;
let o2: string;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
  [o1, o2] = [await offering(m.test), await offering(m.test)];
});

const DAY = 86_400_000;
const results = (id: string) => ok(m.test.get(`/experiments/${id}/results`));
const emailOf = async (id: string) => (await ok(m.test.get(`/customers/${id}`))).email as string;

/** What a visitor contributes, as the test works it out from the API's own records. */
interface Outcome {
  converted: boolean;
  trial: boolean;
  revenue: number;
  mrr: number;
}
const nothing = (): Outcome => ({ converted: false, trial: false, revenue: 0, mrr: 0 });

/** What the subscription invoices of a customer collected, in INR (from GET /invoices). */
async function subscriptionInvoicesPaid(customerId: string): Promise<number> {
  const list = await ok(m.test.get(`/invoices?customer_id=${customerId}&limit=100`));
  return list.data
    .filter((i: any) => i.type === 'invoice' && i.subscription_id && i.currency === 'INR')
    .reduce((n: number, i: any) => n + i.amount_paid, 0);
}

/** Mean and sample variance, as the interval's inputs. */
function meanVar(xs: number[]) {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, variance };
}

it('counts visitors, conversions, trial starts, revenue and MRR per variant from what the visitors did after enrolment', async () => {
  const monthly = await recurringPlan(m.test);
  const trial = await recurringPlan(m.test, { trial_period_days: 7 }, { amount: 29900 });
  const yearly = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 120000 });
  const [early, ...ids] = await customers(h, m, 9);

  // Before enrolment: a paid payment that must not count.
  await pay(m.test, await createPayment(m.test, { customer_email: await emailOf(early), amount: 7000 }));

  const e = await running(m.test, twoArms(o1, o2));
  const variantOf = new Map<string, string>();
  for (const id of [early, ...ids]) variantOf.set(id, (await resolve(m.test, id))!.variant_id);

  const outcome = new Map<string, Outcome>([[early, nothing()]]);
  const [active, trialing, oneOff, abandoned, dollars, annual, declined, idle] = ids;
  // active monthly subscription: a conversion, its first invoice, MRR 49900
  await authorise(
    m.test,
    await createSubscription(m.test, monthly.plan.id, { customer_id: active, customer_email: undefined }),
  );
  outcome.set(active, { converted: true, trial: false, revenue: await subscriptionInvoicesPaid(active), mrr: 49900 });
  // a trial: a conversion and a trial start; trials have no MRR
  const trialSub = await createSubscription(m.test, trial.plan.id, {
    customer_id: trialing,
    customer_email: undefined,
  });
  expect((await authorise(m.test, trialSub)).subscription.status).toBe('trialing');
  outcome.set(trialing, { converted: true, trial: true, revenue: await subscriptionInvoicesPaid(trialing), mrr: 0 });
  // a one-off INR payment: a conversion and its amount
  await pay(m.test, await createPayment(m.test, { customer_email: await emailOf(oneOff), amount: 10000 }));
  outcome.set(oneOff, { converted: true, trial: false, revenue: 10000, mrr: 0 });
  // a subscription whose checkout never completes: nothing
  await createSubscription(m.test, monthly.plan.id, { customer_id: abandoned, customer_email: undefined });
  outcome.set(abandoned, nothing());
  // a USD payment: a conversion, but not revenue in the INR reporting currency
  await pay(
    m.test,
    await createPayment(m.test, { customer_email: await emailOf(dollars), amount: 2500, currency: 'USD' }),
  );
  outcome.set(dollars, { converted: true, trial: false, revenue: 0, mrr: 0 });
  // a yearly subscription: MRR 120000 / 12
  await authorise(
    m.test,
    await createSubscription(m.test, yearly.plan.id, { customer_id: annual, customer_email: undefined }),
  );
  outcome.set(annual, { converted: true, trial: false, revenue: await subscriptionInvoicesPaid(annual), mrr: 10000 });
  // a declined payment: nothing
  const failed = await pay(m.test, await createPayment(m.test, { customer_email: await emailOf(declined) }), {
    outcome: 'success',
    card_number: '4000000000000002',
  });
  expect(failed.payment.status).toBe('failed');
  outcome.set(declined, nothing());
  outcome.set(idle, nothing());
  expect(outcome.get(active)!.revenue).toBeGreaterThanOrEqual(49900);

  const check = async (status = 'running') => {
    const r = await results(e.id);
    expect(r).toMatchObject({ experiment_id: e.id, status, currency: 'INR', total_visitors: 9 });
    const perVisitorMrr = new Map<string, number[]>();
    for (const v of r.variants) {
      const mine = [...variantOf].filter(([, variant]) => variant === v.variant_id).map(([id]) => outcome.get(id)!);
      const conversions = mine.filter((o) => o.converted).length;
      expect(v).toMatchObject({
        visitors: mine.length,
        conversions,
        trial_starts: mine.filter((o) => o.trial).length,
        revenue: mine.reduce((n, o) => n + o.revenue, 0),
        mrr: mine.reduce((n, o) => n + o.mrr, 0),
        is_winner: false,
      });
      expect(v.conversion_rate).toBeCloseTo(mine.length ? conversions / mine.length : 0, 6);
      perVisitorMrr.set(
        v.variant_id,
        mine.map((o) => o.mrr),
      );
    }
    const control = r.variants.find((v: any) => v.is_control);
    const treatment = r.variants.find((v: any) => !v.is_control);
    expect(control.chance_to_win).toBeNull();
    expect(control.mrr_lift).toBeNull();
    expect(treatment.chance_to_win).toBeGreaterThan(0);
    expect(treatment.chance_to_win).toBeLessThan(1);
    const c = perVisitorMrr.get(control.variant_id)!;
    const t = perVisitorMrr.get(treatment.variant_id)!;
    if (c.length >= 2 && t.length >= 2) {
      const a = meanVar(c);
      const b = meanVar(t);
      const se = Math.sqrt(a.variance / c.length + b.variance / t.length);
      expect(treatment.mrr_lift.expected).toBeCloseTo(b.mean - a.mean, 3);
      expect(treatment.mrr_lift.ci_low).toBeCloseTo(b.mean - a.mean - 1.959963984540054 * se, 3);
      expect(treatment.mrr_lift.ci_high).toBeCloseTo(b.mean - a.mean + 1.959963984540054 * se, 3);
    } else {
      expect(treatment.mrr_lift).toBeNull();
    }
    expect(r.winner_variant_id).toBeNull();
    return r;
  };
  await check();

  // A month on the test clock: the monthly renews (a second invoice), the trial converts and is charged.
  await h.clock.advance(m, new Date((await h.clock.now(m)).getTime() + 32 * DAY));
  const trialNow = await ok(m.test.get(`/subscriptions/${trialSub.id}`));
  expect(trialNow.status).toBe('active');
  outcome.set(trialing, {
    converted: true,
    trial: true,
    revenue: await subscriptionInvoicesPaid(trialing),
    mrr: 29900,
  });
  outcome.set(active, { ...outcome.get(active)!, revenue: await subscriptionInvoicesPaid(active) });
  expect(outcome.get(active)!.revenue).toBeGreaterThanOrEqual(2 * 49900);
  expect(outcome.get(trialing)!.revenue).toBeGreaterThanOrEqual(29900);
  outcome.set(annual, { ...outcome.get(annual)!, revenue: await subscriptionInvoicesPaid(annual) });
  await check();

  // Stopped: still readable, same numbers.
  await ok(m.test.post(`/experiments/${e.id}/stop`));
  expect((await check('stopped')).stopped_at).toEqual(expect.any(String));
});

it('warns of a sample-ratio mismatch on a skewed split, and starts the check over when the split changes', async () => {
  const e = await running(m.test, twoArms(o1, o2));
  const ids = await customers(h, m, 500);
  const [a, b] = [...e.variants].sort((x: any, y: any) => (x.key < y.key ? -1 : 1));
  // Observed 300 / 200 under a 50/50 split: what a broken assignment would leave behind (written directly: the
  // engine itself cannot be made to skew).
  await sql(
    h,
    `insert into experiment_enrolments (id, created_at, merchant_id, mode, experiment_id, variant_id, customer_id, traffic_version)
     select gen_random_uuid(), now(), ?, 'test', ?, case when n <= 300 then ?::uuid else ?::uuid end, c, 1
     from unnest(?::uuid[]) with ordinality as t(c, n)`,
    [m.id, e.id, a.id, b.id, `{${ids.join(',')}}`],
  );
  const r = await results(e.id);
  expect(r.total_visitors).toBe(500);
  expect(r.sample_ratio_mismatch).toMatchObject({ degrees_of_freedom: 1, warning: true });
  expect(r.sample_ratio_mismatch.chi_square).toBeCloseTo(20, 6); // (50² + 50²) / 250
  expect(r.sample_ratio_mismatch.p_value).toBeLessThan(0.001);
  expect(r.sample_ratio_mismatch.p_value).toBeCloseTo(7.744216e-6, 10);

  // A new split while running: the earlier visitors were bucketed under the old one, so the check starts over.
  await ok(
    m.test.post(`/experiments/${e.id}`, {
      variants: [
        { key: 'a', traffic_percent: 60 },
        { key: 'b', traffic_percent: 40 },
      ],
    }),
  );
  const after = await results(e.id);
  expect(after.total_visitors).toBe(500);
  expect(after.sample_ratio_mismatch).toEqual({ chi_square: 0, p_value: 1, degrees_of_freedom: 1, warning: false });
  const [fresh] = await customers(h, m, 1);
  await resolve(m.test, fresh);
  expect((await results(e.id)).sample_ratio_mismatch.warning).toBe(false);
});

it("answers 404 for another merchant's experiment results", async () => {
  const e = await running(m.test, twoArms(o1, o2));
  const other = await h.merchant();
  const r = await other.test.get(`/experiments/${e.id}/results`);
  expect([r.status, r.body.error?.code]).toEqual([404, 'resource_not_found']);
});

it("counts MRR by the MRR ledger's one rule: each subscription normalised and rounded once, as GET /analytics/mrr shows it", async () => {
  // A merchant of its own, so its whole MRR is the visitors'.
  const n = await h.merchant();
  await connect(n.test, 'stripe');
  const [oa, ob] = [await offering(n.test), await offering(n.test)];
  // Weekly 1000 is 1000 x 52 / 12 = 4333.33 a month: the ledger rounds each subscription to 4333.
  const weeklyA = await recurringPlan(n.test, { billing_frequency: 'weekly' }, { amount: 1000 });
  const weeklyB = await recurringPlan(n.test, { billing_frequency: 'weekly' }, { amount: 1000 });
  const e = await running(n.test, twoArms(oa, ob));
  const [visitor] = await customers(h, n, 1);
  await resolve(n.test, visitor);
  // Two weekly subscriptions: 4333 + 4333 = 8666 (normalising their sum instead would give 8666.67 -> 8667).
  for (const { plan } of [weeklyA, weeklyB]) {
    const sub = await createSubscription(n.test, plan.id, { customer_id: visitor, customer_email: undefined });
    expect((await authorise(n.test, sub)).subscription.status).toBe('active');
  }

  const r = await ok(n.test.get(`/experiments/${e.id}/results`));
  const total = r.variants.reduce((sum: number, v: any) => sum + v.mrr, 0);
  expect(total).toBe(4333 + 4333);
  expect(total).toBe((await ok(n.test.get('/analytics/mrr'))).mrr);
  for (const v of r.variants) expect(Number.isInteger(v.mrr)).toBe(true);
});

import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { customers, offering, resolve, running, twoArms } from '../experiments/helpers';
import { createCoupon } from './helpers';

/**
 * The formulas (docs/analytics.md): a subscription's MRR is its recurring amount less a `forever` coupon's discount;
 * `once` and `repeating` coupons do not change it. Read where MRR is computed today, the experiment results
 * (experiment.store.ts).
 */

const h = useHarness();
jest.setTimeout(120_000);

it('experiment results count MRR net of forever coupons only', async () => {
  const m: TestMerchant = await h.merchant();
  await connect(m.test, 'stripe');
  const monthly = await recurringPlan(m.test, {}, { amount: 49900 });
  const yearly = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 132000 });
  const experiment = await running(m.test, twoArms(await offering(m.test), await offering(m.test)));

  const cases: [plan: string, coupon: Record<string, unknown> | null, mrr: number][] = [
    [monthly.plan.id, { percent_off: 20, duration: 'forever' }, 49900 - 9980],
    [yearly.plan.id, { amount_off: 12000, currency: 'INR', duration: 'forever' }, (132000 - 12000) / 12],
    [monthly.plan.id, { percent_off: 33.33, duration: 'forever' }, 49900 - 16632], // 16631.67 -> 16632
    [monthly.plan.id, { percent_off: 50, duration: 'once' }, 49900],
    [monthly.plan.id, { percent_off: 50, duration: 'repeating', duration_in_cycles: 3 }, 49900],
    [monthly.plan.id, null, 49900],
  ];
  const ids = await customers(h, m, cases.length);
  for (const [i, [plan, terms]] of cases.entries()) {
    expect(await resolve(m.test, ids[i])).not.toBeNull();
    const coupon = terms ? await createCoupon(m.test, terms) : null;
    const sub = await createSubscription(m.test, plan, {
      customer_id: ids[i],
      ...(coupon ? { coupon_code: coupon.code } : {}),
    });
    expect((await authorise(m.test, sub)).subscription.status).toBe('active');
  }
  const results = await ok(m.test.get(`/experiments/${experiment.id}/results`));
  const total = results.variants.reduce((s: number, v: any) => s + v.mrr, 0);
  expect(total).toBe(cases.reduce((s, c) => s + c[2], 0));
});

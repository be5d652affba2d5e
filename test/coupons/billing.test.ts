import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  gatewayPriceAmountsOf,
  invoicesOf,
  ok,
  recurringPlan,
} from '../subscriptions/helpers';
import { createCoupon } from './helpers';

/**
 * A coupon on the invoices and at the gateway (docs/growth.md), through both gateways' sandboxes and the test clock:
 * `once`, `repeating` and `forever` over several renewals, each discounted period's invoice carrying a negative
 * discount line naming the code and `discount_amount`, GST computed on the discounted subtotal, the setup fee never
 * discounted; and what the customer paid at the gateway (read from the sandbox's own records) equal to what the
 * invoices say was paid, period by period: the gateway charged the discounted gross price while the coupon lasted,
 * then the full one.
 */

const h = useHarness();
jest.setTimeout(180_000);
const GSTIN = '29ABCDE1234F1ZW';
const DAY = 86_400_000;

// Totals below are worked by hand for a customer in the merchant's state (Karnataka): CGST = SGST = 9% of the
// subtotal, rounded half up, and the total is the subtotal plus both.
/** round(amount x bps / 10000), half away from zero, computed here independently of the service (BigInt). */
const pct = (amount: number, bps: number) => Number((2n * BigInt(amount) * BigInt(bps) + 10_000n) / 20_000n);

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

async function renew(m: TestMerchant, sub: any): Promise<any> {
  await h.clock.advance(m, after(sub.current_period_end));
  return ok(m.test.get(`/subscriptions/${sub.id}`));
}

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
  });

  it.each([
    ['once', { duration: 'once' }, 1],
    ['repeating (2)', { duration: 'repeating', duration_in_cycles: 2 }, 2],
    ['forever', { duration: 'forever' }, Infinity],
  ] as const)(
    '%s: the right periods are discounted; invoices = charges, period by period',
    async (_name, terms, discounted) => {
      const amount = 49950;
      const setupFee = 10001;
      const { plan, price } = await recurringPlan(m.test, {}, { amount, setup_fee: setupFee });
      const coupon = await createCoupon(m.test, { ...terms, percent_off: 25 });
      const discount = pct(amount, 2500); // 12487.5 -> 12488
      expect(discount).toBe(12488);

      const created = await createSubscription(m.test, plan.id, {
        coupon_code: coupon.code.toLowerCase(),
        customer_state_code: '29',
      });
      expect(created).toMatchObject({
        coupon_code: coupon.code,
        coupon_id: coupon.id,
        discount_cycles_used: 0,
        period_discount: 0,
      });
      expect(created.discount_cycles_remaining).toBe(discounted === Infinity ? null : discounted);
      expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(1);
      // The gateway holds the discounted gross price only (the full one is registered when the discount ends).
      // 49950 - 12488 = 37462; 9% = 3371.58 -> 3372; 37462 + 2 x 3372 = 44206
      expect(await gatewayPriceAmountsOf(h.app, price.id)).toEqual([44206]);
      // Discounted registrations never become the price's provider_price_ids entry.
      expect((await ok(m.test.get(`/prices/${price.id}`))).provider_price_ids).toEqual({});

      let { subscription: sub } = await authorise(m.test, created);
      expect(sub.status).toBe('active');
      for (let period = 1; period <= 4; period++) {
        if (period > 1) sub = await renew(m, sub);
        const invoices = (await invoicesOf(m.test, sub.id)).filter((i) => i.type === 'invoice');
        expect(invoices).toHaveLength(period);
        const inv = invoices[period - 1];
        const isDiscounted = period <= discounted;
        const fee = period === 1 ? setupFee : 0;
        const d = isDiscounted ? discount : 0;
        // period 1:   49950 - 12488 + 10001 = 47463; 9% = 4271.67 -> 4272; 47463 + 2 x 4272 = 56007
        // discounted: 49950 - 12488 = 37462;         9% = 3371.58 -> 3372; 37462 + 2 x 3372 = 44206
        // full:       49950;                         9% = 4495.5  -> 4496; 49950 + 2 x 4496 = 58942
        const [subtotal, cgst, total] =
          period === 1 ? [47463, 4272, 56007] : isDiscounted ? [37462, 3372, 44206] : [49950, 4496, 58942];
        expect(inv).toMatchObject({
          billing_reason: period === 1 ? 'subscription_create' : 'subscription_cycle',
          status: 'paid',
          discount_amount: d,
          subtotal,
          total,
          amount_paid: total,
        });
        // GST on the discounted subtotal: each head computed once on it; the lines' heads add up to the invoice's.
        expect([inv.cgst_amount, inv.sgst_amount]).toEqual([cgst, cgst]);
        expect(sum(inv.line_items.map((l: any) => l.cgst_amount))).toBe(inv.cgst_amount);
        const lines = inv.line_items.map((l: any) => [l.description, l.amount]);
        expect(lines).toEqual([
          [expect.stringMatching(/^Subscription/), amount],
          ...(isDiscounted ? [[`Coupon ${coupon.code} (25% off)`, -discount]] : []),
          ...(fee ? [['Setup fee', fee]] : []),
        ]);
        expect(sub).toMatchObject({ discount_cycles_used: Math.min(period, discounted), period_discount: d });
        // What the gateway took for the subscription so far equals what its invoices say was paid.
        expect(await collectedAt(h.app, provider, sub)).toBe(sum(invoices.map((i) => i.amount_paid)));
      }
      expect(await gatewayPriceAmountsOf(h.app, price.id)).toEqual(
        discounted === Infinity ? [44206] : [44206, 58942], // the discounted and the full gross price, as above
      );
      // The full price is the price's own registration (docs/growth.md).
      if (discounted !== Infinity)
        expect(Object.keys((await ok(m.test.get(`/prices/${price.id}`))).provider_price_ids)).toEqual([provider]);
      expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(1);
    },
  );

  it('a trial is not a billed period: the discount starts with the first charge; a fixed amount, no setup fee', async () => {
    const { plan } = await recurringPlan(m.test, { trial_period_days: 7 }, { amount: 49900 });
    const coupon = await createCoupon(m.test, { amount_off: 10000, currency: 'INR', duration: 'once' });
    let { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { coupon_code: coupon.code }),
    );
    expect(sub.status).toBe('trialing');
    sub = await ok(m.test.get(`/subscriptions/${sub.id}`));
    await h.clock.advance(m, after(sub.trial_end));
    sub = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(sub.status).toBe('active');
    sub = await renew(m, sub);
    const invoices = (await invoicesOf(m.test, sub.id)).filter((i) => i.total > 0);
    expect(invoices.map((i) => [i.discount_amount, i.subtotal, i.total])).toEqual([
      [10000, 39900, 47082], // 9% of 39900 = 3591; 39900 + 2 x 3591
      [0, 49900, 58882], // 9% of 49900 = 4491; 49900 + 2 x 4491
    ]);
    expect(invoices[0].line_items[1]).toMatchObject({
      description: `Coupon ${coupon.code} (100.00 INR off)`,
      amount: -10000,
      unit_amount: -10000,
      quantity: 1,
    });
    // GraphQL shows the same; the tax invoice PDF renders the negative line.
    const g = await m.test.gql(
      'query($id: ID!) { invoice(id: $id) { discountAmount subtotal lineItems { description amount } } }',
      { id: invoices[0].id },
    );
    expect(g.data.invoice).toEqual({
      discountAmount: 10000,
      subtotal: 39900,
      lineItems: invoices[0].line_items.map((l: any) => ({ description: l.description, amount: l.amount })),
    });
    const pdf = await m.test.get(`/invoices/${invoices[0].id}/pdf`);
    expect([pdf.status, pdf.headers.get('content-type')]).toEqual([200, 'application/pdf']);
    expect(await collectedAt(h.app, provider, sub)).toBe(sum(invoices.map((i) => i.amount_paid)));
  });

  it('a fixed amount larger than the price leaves nothing to discount beyond it (never a negative subtotal)', async () => {
    const plain = await h.merchant();
    await connect(plain.test, provider);
    const { plan } = await recurringPlan(plain.test, {}, { amount: 30000 });
    const coupon = await createCoupon(plain.test, {
      amount_off: 25000,
      currency: 'INR',
      duration: 'repeating',
      duration_in_cycles: 2,
    });
    const { subscription } = await authorise(
      plain.test,
      await createSubscription(plain.test, plan.id, { coupon_code: coupon.code }),
    );
    const sub = await renew(plain, await renew(plain, subscription));
    const invoices = await invoicesOf(plain.test, sub.id);
    expect(invoices.map((i) => [i.discount_amount, i.subtotal, i.tax_amount, i.total])).toEqual([
      [25000, 5000, 0, 5000],
      [25000, 5000, 0, 5000],
      [0, 30000, 0, 30000],
    ]);
    expect(await collectedAt(h.app, provider, sub)).toBe(40000);
  });
});

describe('change-plan with a coupon (decision: it follows when it applies to the new plan; proration on discounted amounts)', () => {
  it.each(PROVIDERS)(
    '%s: same cadence, the coupon follows: prorated on the discounted amounts, later periods discounted at the new amount until it ends',
    async (provider) => {
      const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
      await connect(m.test, provider);
      const basic = await recurringPlan(m.test, { name: 'Basic' }, { amount: 40000 });
      const plus = await recurringPlan(m.test, { name: 'Plus' }, { amount: 80000 });
      const coupon = await createCoupon(m.test, { percent_off: 50, duration: 'repeating', duration_in_cycles: 2 });
      let { subscription: sub } = await authorise(
        m.test,
        await createSubscription(m.test, basic.plan.id, { coupon_code: coupon.code }),
      );
      const start = new Date(sub.current_period_start).getTime();
      const end = new Date(sub.current_period_end).getTime();
      await h.clock.advance(m, new Date(start + 10 * DAY));
      const r = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: plus.plan.id }));
      const T = Math.floor((end - start) / 1000);
      const left = Math.floor((end - (start + 10 * DAY)) / 1000);
      const share = (x: number) => Number((2n * BigInt(x) * BigInt(left) + BigInt(T)) / (2n * BigInt(T)));
      // Credit for the discounted 20000 billed; debit for the rest of the period at the discounted 40000.
      expect(r.proration).toMatchObject({
        credit_amount: share(20000),
        debit_amount: share(40000),
        net_amount: share(40000) - share(20000),
      });
      expect(r.subscription).toMatchObject({
        coupon_id: coupon.id,
        discount_cycles_used: 1,
        discount_cycles_remaining: 1,
        period_discount: 40000,
      });
      // The gateway is on Plus at its discounted gross: the next renewal is the coupon's second period.
      expect(await gatewayPriceAmountsOf(h.app, plus.price.id)).toEqual([47200]); // 40000 + 2 x 3600 (9%)

      sub = await renew(m, sub);
      sub = await renew(m, sub);
      const cycles = (await invoicesOf(m.test, sub.id)).filter(
        (i) => i.type === 'invoice' && i.billing_reason !== 'subscription_update',
      );
      expect(cycles.map((i) => [i.discount_amount, i.subtotal])).toEqual([
        [20000, 20000],
        [40000, 40000],
        [0, 80000],
      ]);
      expect(await gatewayPriceAmountsOf(h.app, plus.price.id)).toEqual([47200, 94400]); // 80000 + 2 x 7200 (9%)
      const paid = sum(
        (await invoicesOf(m.test, sub.id)).filter((i) => i.type === 'invoice').map((i) => i.amount_paid),
      );
      // (Razorpay collected the adjustment as an add-on with the next renewal, which paid its invoice.)
      expect(await collectedAt(h.app, provider, sub)).toBe(paid);
    },
  );

  it.each(PROVIDERS)(
    '%s: a new cadence: the new period billed now is discounted and uses up the coupon; the next renewal is full',
    async (provider) => {
      const m = await h.merchant();
      await connect(m.test, provider);
      const monthly = await recurringPlan(m.test, { name: 'Monthly' }, { amount: 40000 });
      const yearly = await recurringPlan(m.test, { name: 'Yearly', billing_frequency: 'yearly' }, { amount: 400000 });
      const coupon = await createCoupon(m.test, { percent_off: 50, duration: 'repeating', duration_in_cycles: 2 });
      let { subscription: sub } = await authorise(
        m.test,
        await createSubscription(m.test, monthly.plan.id, { coupon_code: coupon.code }),
      );
      const start = new Date(sub.current_period_start).getTime();
      const end = new Date(sub.current_period_end).getTime();
      await h.clock.advance(m, new Date(start + 10 * DAY));
      const r = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: yearly.plan.id }));
      const T = Math.floor((end - start) / 1000);
      const left = Math.floor((end - (start + 10 * DAY)) / 1000);
      const credit = Number((2n * 20000n * BigInt(left) + BigInt(T)) / (2n * BigInt(T)));
      // Credit for the discounted 20000 billed; the new year billed in full at its discounted 200000.
      expect(r.proration).toMatchObject({ credit_amount: credit, debit_amount: 200000, net_amount: 200000 - credit });
      expect(r.subscription).toMatchObject({
        discount_cycles_used: 2,
        discount_cycles_remaining: 0,
        period_discount: 200000,
      });
      expect(await gatewayPriceAmountsOf(h.app, yearly.price.id)).toEqual([400000]);
      sub = await renew(m, r.subscription);
      const cycles = (await invoicesOf(m.test, sub.id)).filter(
        (i) => i.type === 'invoice' && i.billing_reason !== 'subscription_update',
      );
      expect(cycles.map((i) => [i.discount_amount, i.subtotal])).toEqual([
        [20000, 20000],
        [0, 400000],
      ]);
      const paid = sum(
        (await invoicesOf(m.test, sub.id)).filter((i) => i.type === 'invoice').map((i) => i.amount_paid),
      );
      expect(await collectedAt(h.app, provider, sub)).toBe(paid);
    },
  );

  it.each(PROVIDERS)(
    '%s: a coupon restricted to the old plan ends at the change; the next renewal is full',
    async (provider) => {
      const m = await h.merchant();
      await connect(m.test, provider);
      const basic = await recurringPlan(m.test, { name: 'Basic' }, { amount: 40000 });
      const plus = await recurringPlan(m.test, { name: 'Plus' }, { amount: 80000 });
      const coupon = await createCoupon(m.test, {
        percent_off: 50,
        duration: 'forever',
        applies_to_plan_ids: [basic.plan.id],
      });
      let { subscription: sub } = await authorise(
        m.test,
        await createSubscription(m.test, basic.plan.id, { coupon_code: coupon.code }),
      );
      const r = await ok(
        m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: plus.plan.id, proration_behavior: 'none' }),
      );
      expect(r.subscription).toMatchObject({
        coupon_id: coupon.id,
        discount_cycles_used: 1,
        discount_cycles_remaining: 0,
        period_discount: 0,
      });
      expect(await gatewayPriceAmountsOf(h.app, plus.price.id)).toEqual([80000]);
      sub = await renew(m, sub);
      const invoices = (await invoicesOf(m.test, sub.id)).filter((i) => i.type === 'invoice');
      expect(invoices.map((i) => [i.discount_amount, i.subtotal])).toEqual([
        [20000, 20000],
        [0, 80000],
      ]);
      expect(await collectedAt(h.app, provider, sub)).toBe(sum(invoices.map((i) => i.amount_paid)));
    },
  );
});

describe('razorpay: a UPI or e-mandate subscription, whose plan Razorpay refuses to change', () => {
  it.each([
    ['upi', { outcome: 'success', method: 'upi', vpa: 'asha@okhdfc', bank: 'HDFC' }],
    ['emandate', { outcome: 'success', method: 'emandate', bank: 'SBIN' }],
  ])(
    '%s: after the discount, the difference is added to each charge (an add-on), so invoices = charges',
    async (_method, form) => {
      const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
      await connect(m.test, 'razorpay');
      const { plan } = await recurringPlan(m.test, {}, { amount: 49950 });
      const coupon = await createCoupon(m.test, { percent_off: 25, duration: 'once' });
      let { subscription: sub } = await authorise(
        m.test,
        await createSubscription(m.test, plan.id, { coupon_code: coupon.code }),
        form,
      );
      expect(sub.status).toBe('active');
      for (let period = 2; period <= 4; period++) sub = await renew(m, sub);
      const invoices = await invoicesOf(m.test, sub.id);
      expect(invoices.map((i) => [i.discount_amount, i.total, i.amount_paid])).toEqual([
        [12488, 44206, 44206], // 49950 - 12488 = 37462; 9% = 3371.58 -> 3372; 37462 + 2 x 3372
        [0, 58942, 58942], // 9% of 49950 = 4495.5 -> 4496; 49950 + 2 x 4496
        [0, 58942, 58942],
        [0, 58942, 58942],
      ]);
      expect(await collectedAt(h.app, 'razorpay', sub)).toBe(sum(invoices.map((i) => i.amount_paid)));
    },
  );
});

describe('stripe: a 100% coupon (Stripe prices may be 0)', () => {
  it('the first period is free (a 0 invoice, paid), the next is charged in full', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test, {}, { amount: 49900 });
    const coupon = await createCoupon(m.test, { percent_off: 100, duration: 'once' });
    let { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { coupon_code: coupon.code }),
    );
    expect(sub.status).toBe('active');
    sub = await renew(m, sub);
    const invoices = await invoicesOf(m.test, sub.id);
    expect(invoices.map((i) => [i.discount_amount, i.subtotal, i.total, i.status])).toEqual([
      [49900, 0, 0, 'paid'],
      [0, 49900, 49900, 'paid'],
    ]);
    expect(await collectedAt(h.app, 'stripe', sub)).toBe(49900);
  });
});

import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  authorise,
  createSubscription,
  invoicesOf,
  ok,
  recurringPlan,
  subscriptionBody,
} from '../subscriptions/helpers';
import { createCoupon, validate } from './helpers';

/**
 * A coupon applied by `coupon_code` at subscription creation (docs/growth.md): a coupon that cannot be applied is a
 * 400 on `coupon_code` naming the reason, and nothing is created; the redemption is taken in the create's transaction,
 * so concurrent creates never pass `max_redemptions`; a checkout that never completes (cancelled at the hosted page,
 * a declined card, a cancel command before authorisation) gives its redemption back once; `redeem_by` follows the test
 * clock.
 */

const h = useHarness();
jest.setTimeout(120_000);

const sql = <T = any>(text: string, params: unknown[] = []) => h.app.orm.em.getConnection().execute<T[]>(text, params);

async function counts(m: TestMerchant) {
  const subs = (await m.test.gql('{ subscriptions(first: 1) { totalCount } }')).data.subscriptions.totalCount;
  const customers = (await m.test.gql('{ customers(first: 1) { totalCount } }')).data.customers.totalCount;
  return { subs, customers };
}

const redemptions = (couponId: string) =>
  sql<{ subscription_id: string; status: string }>(
    'select subscription_id, status from coupon_redemptions where coupon_id = ? order by id',
    [couponId],
  );

describe('a coupon that cannot be applied: 400 on coupon_code with the reason, nothing created', () => {
  let m: TestMerchant;
  let catalog: Awaited<ReturnType<typeof recurringPlan>>;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, 'stripe');
    catalog = await recurringPlan(m.test);
  });

  async function refusedWith(
    code: string,
    reason: string,
    overrides: Record<string, unknown> = {},
    planId = catalog.plan.id,
  ) {
    const before = await counts(m);
    const r = await m.test.post('/subscriptions', subscriptionBody(planId, { coupon_code: code, ...overrides }));
    expect([r.status, r.body.error?.type, r.body.error?.code, r.body.error?.param]).toEqual([
      400,
      'invalid_request_error',
      'parameter_invalid',
      'coupon_code',
    ]);
    expect(r.body.error.message).toContain(reason);
    expect(await counts(m)).toEqual(before);
  }

  it('not_found (also a code that cannot be one, and another merchant’s)', async () => {
    await refusedWith(`NOPE${Date.now()}`, 'not_found');
    await refusedWith('not a code', 'not_found');
    const other = await h.merchant();
    await refusedWith((await createCoupon(other.test)).code, 'not_found');
  });

  it('expired, on the test clock', async () => {
    const t = await h.merchant();
    await connect(t.test, 'razorpay');
    const { plan } = await recurringPlan(t.test);
    const c = await createCoupon(t.test, { redeem_by: new Date(Date.now() + 86_400_000).toISOString() });
    expect((await createSubscription(t.test, plan.id, { coupon_code: c.code })).coupon_id).toBe(c.id);
    await h.clock.advance(t, 2 * 86_400);
    expect((await validate(t.test, { code: c.code })).reason).toBe('expired');
    const before = await counts(t);
    const r = await t.test.post('/subscriptions', subscriptionBody(plan.id, { coupon_code: c.code }));
    expect([r.status, r.body.error.param]).toEqual([400, 'coupon_code']);
    expect(r.body.error.message).toContain('expired');
    expect(await counts(t)).toEqual(before);
    // The first subscription never completed its checkout: its expiry (24 h) gave the redemption back.
    expect((await ok(t.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(0);
  });

  it('max_redemptions_reached', async () => {
    const c = await createCoupon(m.test, { max_redemptions: 1 });
    await createSubscription(m.test, catalog.plan.id, { coupon_code: c.code });
    await refusedWith(c.code, 'max_redemptions_reached');
  });

  it('not_applicable to the plan', async () => {
    const other = await recurringPlan(m.test);
    await refusedWith((await createCoupon(m.test, { applies_to_plan_ids: [other.plan.id] })).code, 'not_applicable');
  });

  it('currency_mismatch with the price', async () => {
    const usd = await ok(
      m.test.post(`/plans/${catalog.plan.id}/prices`, { currency: 'USD', amount: 999, is_default: true }),
      201,
    );
    await refusedWith((await createCoupon(m.test, { amount_off: 100, currency: 'INR' })).code, 'currency_mismatch', {
      price_id: usd.id,
    });
  });

  it('a discount that leaves less than Razorpay can charge per period', async () => {
    const r = await h.merchant();
    await connect(r.test, 'razorpay');
    const { plan } = await recurringPlan(r.test, {}, { amount: 5000 });
    const c = await createCoupon(r.test, { percent_off: 99.5 });
    const res = await r.test.post('/subscriptions', subscriptionBody(plan.id, { coupon_code: c.code }));
    expect([res.status, res.body.error.param]).toEqual([400, 'coupon_code']);
    expect((await ok(r.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(0);
  });
});

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let plan: any;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
    plan = (await recurringPlan(m.test)).plan;
  });

  it('concurrent creates at the limit: exactly max_redemptions succeed, the others 400 max_redemptions_reached', async () => {
    const limit = 3;
    const c = await createCoupon(m.test, { max_redemptions: limit, duration: 'forever' });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        m.test.post(
          '/subscriptions',
          subscriptionBody(plan.id, { coupon_code: i % 2 ? c.code.toLowerCase() : c.code }),
        ),
      ),
    );
    const won = answers.filter((r) => r.status === 201);
    expect(won).toHaveLength(limit);
    for (const r of answers.filter((x) => x.status !== 201)) {
      expect([r.status, r.body.error.code, r.body.error.param]).toEqual([400, 'parameter_invalid', 'coupon_code']);
      expect(r.body.error.message).toContain('max_redemptions_reached');
    }
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(limit);
    expect((await redemptions(c.id)).map((r) => r.subscription_id).sort()).toEqual(won.map((r) => r.body.id).sort());
    const subs = await ok(m.test.get(`/subscriptions?plan_id=${plan.id}&limit=100`));
    expect(subs.data.filter((s: any) => s.coupon_id === c.id)).toHaveLength(limit);
    if (provider === 'razorpay') {
      // The losers' gateway subscriptions (made with their checkouts) were cancelled, so none can ever be authorised.
      const orphans = await sql<{ status: string }>(
        `select s.data->>'status' as status from sandbox_objects s where s.provider = 'razorpay' and s.type = 'subscription'
           and s.data->'notes'->>'subscription_id' is not null
           and not exists (select 1 from subscriptions x where x.id::text = s.data->'notes'->>'subscription_id')`,
      );
      expect(orphans.length).toBeGreaterThanOrEqual(12 - limit);
      expect(orphans.every((o) => o.status === 'cancelled')).toBe(true);
    }
  });

  it.each([
    ['cancelled at the hosted checkout', { outcome: 'cancel' }],
    ['a declined card', { outcome: 'success', card_number: '4000000000000002' }],
  ])('a checkout that never completes (%s) releases its redemption, once', async (_why, form) => {
    const c = await createCoupon(m.test, { max_redemptions: 1 });
    const created = await createSubscription(m.test, plan.id, { coupon_code: c.code });
    expect((await validate(m.test, { code: c.code })).reason).toBe('max_redemptions_reached');
    const { subscription } = await authorise(m.test, created, form as Record<string, string>);
    expect(subscription.status).toBe('cancelled');
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(0);
    expect(await redemptions(c.id)).toEqual([{ subscription_id: created.id, status: 'released' }]);
    // Nothing more to release: a cancel of the ended subscription is refused and changes nothing.
    expect((await m.test.post(`/subscriptions/${created.id}/cancel`)).status).toBe(409);
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(0);
    // The code can be used again.
    const again = await createSubscription(m.test, plan.id, { coupon_code: c.code });
    const { subscription: active } = await authorise(m.test, again);
    expect(active).toMatchObject({ status: 'active', coupon_id: c.id });
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(1);
    expect((await invoicesOf(m.test, active.id))[0].discount_amount).toBe(4990);
  });

  it('a cancel command before the checkout completes releases it; a cancellation after authorisation does not', async () => {
    const c = await createCoupon(m.test);
    const open = await createSubscription(m.test, plan.id, { coupon_code: c.code });
    const { subscription: running } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { coupon_code: c.code }),
    );
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(2);
    expect((await ok(m.test.post(`/subscriptions/${open.id}/cancel`))).status).toBe('cancelled');
    expect((await ok(m.test.post(`/subscriptions/${running.id}/cancel`))).status).toBe('cancelled');
    expect((await ok(m.test.get(`/coupons/${c.id}`))).times_redeemed).toBe(1);
    expect(await redemptions(c.id)).toEqual([
      { subscription_id: open.id, status: 'released' },
      { subscription_id: running.id, status: 'active' },
    ]);
  });
});

describe('REST and GraphQL agree on a subscription with a coupon', () => {
  it('createSubscription(couponCode) answers the coupon fields REST shows', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test);
    const c = await createCoupon(m.test, { duration: 'repeating', duration_in_cycles: 3 });
    const g = await m.test.gql(
      `mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { id couponCode couponId discountCyclesUsed discountCyclesRemaining periodDiscount } }`,
      {
        input: {
          planId: plan.id,
          customerEmail: 'gql@example.com',
          successUrl: 'https://shop.example/ok',
          cancelUrl: 'https://shop.example/no',
          couponCode: c.code.toLowerCase(),
        },
      },
    );
    expect(g.errors).toBeUndefined();
    const sub = g.data.createSubscription;
    expect(sub).toEqual({
      id: expect.any(String),
      couponCode: c.code,
      couponId: c.id,
      discountCyclesUsed: 0,
      discountCyclesRemaining: 3,
      periodDiscount: 0,
    });
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({
      coupon_code: c.code,
      coupon_id: c.id,
      discount_cycles_used: 0,
      discount_cycles_remaining: 3,
      period_discount: 0,
    });
    const bad = await m.test.gql(
      `mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { id } }`,
      {
        input: {
          planId: plan.id,
          customerEmail: 'gql@example.com',
          successUrl: 'https://shop.example/ok',
          cancelUrl: 'https://shop.example/no',
          couponCode: 'NOPE',
        },
      },
    );
    expect(bad.errors![0].extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'coupon_code',
      http: { status: 400 },
    });
  });
});

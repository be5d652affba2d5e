import { TestMerchant, useHarness } from '../harness';
import { errorFingerprint, unknownId } from '../harness/http';
import { connect } from '../payments/helpers';
import { createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { COUPON_FIELDS, couponAsRest, createCoupon, rnd, validate } from './helpers';

/**
 * Coupons as resources (docs/growth.md): create with every rule of its body checked (and nothing written on a refusal),
 * codes unique regardless of case (also under concurrent creates), list and retrieve, validate with each of its
 * reasons and the discount arithmetic (BigInt, half away from zero), tenancy, and REST and GraphQL answering the same.
 */

const h = useHarness();
jest.setTimeout(60_000);
let a: TestMerchant;
let b: TestMerchant;

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
});

async function countCoupons(m: TestMerchant, mode: 'test' | 'live' = 'test'): Promise<number> {
  const r = await m[mode].gql('{ coupons(first: 1) { totalCount } }');
  return r.data.coupons.totalCount;
}

/** A refused create: the status, code and param, and nothing written. */
async function refused(
  m: TestMerchant,
  body: Record<string, unknown>,
  status: number,
  code: string,
  param: string | null,
) {
  const before = await countCoupons(m);
  const r = await m.test.post('/coupons', body);
  expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
  expect(await countCoupons(m)).toBe(before);
  return r.body.error;
}

describe('create', () => {
  it('a percentage coupon: 201 with the documented fields; retrieve and list show the same object', async () => {
    const { plan } = await recurringPlan(a.test);
    const redeemBy = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const c = await ok(
      a.test.post('/coupons', {
        code: `Spring${rnd()}`,
        name: 'Spring sale',
        percent_off: 12.35,
        duration: 'repeating',
        duration_in_cycles: 3,
        max_redemptions: 5,
        redeem_by: redeemBy,
        applies_to_plan_ids: [plan.id.toUpperCase()],
        metadata: { campaign: 'spring' },
      }),
      201,
    );
    expect(c).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'coupon',
      code: expect.stringMatching(/^Spring/),
      name: 'Spring sale',
      percent_off: 12.35,
      amount_off: null,
      currency: null,
      duration: 'repeating',
      duration_in_cycles: 3,
      max_redemptions: 5,
      redeem_by: redeemBy,
      applies_to_plan_ids: [plan.id],
      times_redeemed: 0,
      metadata: { campaign: 'spring' },
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(await ok(a.test.get(`/coupons/${c.id}`))).toEqual(c);
    const list = await ok(a.test.get('/coupons?limit=1'));
    expect(list).toEqual({
      object: 'list',
      data: [c],
      has_more: expect.any(Boolean),
      next_cursor: list.has_more ? expect.any(String) : null,
    });
  });

  it('a fixed-amount coupon: amount_off in subunits with its currency (any case in, upper case out), forever', async () => {
    const c = await createCoupon(a.test, { amount_off: 10000, currency: 'inr', duration: 'forever' });
    expect(c).toMatchObject({
      percent_off: null,
      amount_off: 10000,
      currency: 'INR',
      duration: 'forever',
      duration_in_cycles: null,
      applies_to_plan_ids: null,
    });
  });

  it('percent_off is kept exactly, up to 2 decimals, 0 < p <= 100', async () => {
    for (const p of [0.01, 12.5, 33.33, 99.99, 100, 7]) {
      expect((await createCoupon(a.test, { percent_off: p })).percent_off).toBe(p);
    }
    for (const p of [0, -5, 12.345, 100.01, 1e-7, 150]) {
      await refused(
        a,
        { code: `P${rnd()}`, percent_off: p, duration: 'once' },
        400,
        'parameter_invalid',
        'percent_off',
      );
    }
    await refused(
      a,
      { code: `P${rnd()}`, percent_off: '10', duration: 'once' },
      400,
      'parameter_invalid',
      'percent_off',
    );
  });

  it('percent_off XOR amount_off with currency', async () => {
    const code = `X${rnd()}`;
    await refused(
      a,
      { code, percent_off: 10, amount_off: 100, currency: 'INR', duration: 'once' },
      400,
      'parameter_invalid',
      'amount_off',
    );
    await refused(
      a,
      { code, percent_off: 10, currency: 'INR', duration: 'once' },
      400,
      'parameter_invalid',
      'currency',
    );
    await refused(a, { code, duration: 'once' }, 400, 'parameter_missing', 'percent_off');
    await refused(a, { code, amount_off: 100, duration: 'once' }, 400, 'parameter_missing', 'currency');
    await refused(a, { code, currency: 'INR', duration: 'once' }, 400, 'parameter_missing', 'amount_off');
    await refused(
      a,
      { code, amount_off: 0, currency: 'INR', duration: 'once' },
      400,
      'parameter_invalid',
      'amount_off',
    );
    await refused(
      a,
      { code, amount_off: -1, currency: 'INR', duration: 'once' },
      400,
      'parameter_invalid',
      'amount_off',
    );
    await refused(
      a,
      { code, amount_off: 1.5, currency: 'INR', duration: 'once' },
      400,
      'parameter_invalid',
      'amount_off',
    );
    await refused(
      a,
      { code, amount_off: 100, currency: 'XYZ', duration: 'once' },
      400,
      'parameter_invalid',
      'currency',
    );
    await refused(
      a,
      { code, amount_off: 100, currency: 'INRR', duration: 'once' },
      400,
      'parameter_invalid',
      'currency',
    );
  });

  it('duration, duration_in_cycles, max_redemptions', async () => {
    const code = `D${rnd()}`;
    await refused(a, { code, percent_off: 10 }, 400, 'parameter_missing', 'duration');
    await refused(a, { code, percent_off: 10, duration: 'sometimes' }, 400, 'parameter_invalid', 'duration');
    await refused(a, { code, percent_off: 10, duration: 'repeating' }, 400, 'parameter_missing', 'duration_in_cycles');
    await refused(
      a,
      { code, percent_off: 10, duration: 'repeating', duration_in_cycles: 0 },
      400,
      'parameter_invalid',
      'duration_in_cycles',
    );
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', duration_in_cycles: 2 },
      400,
      'parameter_invalid',
      'duration_in_cycles',
    );
    await refused(
      a,
      { code, percent_off: 10, duration: 'forever', duration_in_cycles: 2 },
      400,
      'parameter_invalid',
      'duration_in_cycles',
    );
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', max_redemptions: 0 },
      400,
      'parameter_invalid',
      'max_redemptions',
    );
    expect(
      await createCoupon(a.test, { duration: 'repeating', duration_in_cycles: 1, max_redemptions: 1 }),
    ).toMatchObject({ duration_in_cycles: 1, max_redemptions: 1 });
  });

  it("redeem_by must be in the future on the merchant's clock (the test clock in test mode)", async () => {
    const m = await h.merchant();
    await refused(
      m,
      { code: `R${rnd()}`, percent_off: 10, duration: 'once', redeem_by: new Date(Date.now() - 60_000).toISOString() },
      400,
      'parameter_invalid',
      'redeem_by',
    );
    await refused(
      m,
      { code: `R${rnd()}`, percent_off: 10, duration: 'once', redeem_by: 'next tuesday' },
      400,
      'parameter_invalid',
      'redeem_by',
    );
    const soon = new Date(Date.now() + 86_400_000).toISOString();
    await h.clock.advance(m, 2 * 86_400); // the test clock is two days ahead: "tomorrow" by the wall clock has passed
    await refused(
      m,
      { code: `R${rnd()}`, percent_off: 10, duration: 'once', redeem_by: soon },
      400,
      'parameter_invalid',
      'redeem_by',
    );
    // live mode has no test clock: the same instant is in the future there
    expect(
      (
        await ok(
          m.live.post('/coupons', { code: `R${rnd()}`, percent_off: 10, duration: 'once', redeem_by: soon }),
          201,
        )
      ).redeem_by,
    ).toBe(soon);
  });

  it("applies_to_plan_ids: plans of this merchant and mode only (another's answers 404 like an unknown id)", async () => {
    const mine = await recurringPlan(a.test);
    const theirs = await recurringPlan(b.test);
    const live = await recurringPlan(a.live);
    const code = `A${rnd()}`;
    const e1 = await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: [mine.plan.id, theirs.plan.id] },
      404,
      'resource_not_found',
      'applies_to_plan_ids[1]',
    );
    const ghost = unknownId();
    const e2 = await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: [mine.plan.id, ghost] },
      404,
      'resource_not_found',
      'applies_to_plan_ids[1]',
    );
    expect(e1.message.replace(theirs.plan.id, '<id>')).toBe(e2.message.replace(ghost, '<id>'));
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: [live.plan.id] },
      404,
      'resource_not_found',
      'applies_to_plan_ids[0]',
    );
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: ['not-a-uuid'] },
      404,
      'resource_not_found',
      'applies_to_plan_ids[0]',
    );
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: [] },
      400,
      'parameter_invalid',
      'applies_to_plan_ids',
    );
    const many = Array.from({ length: 101 }, () => unknownId());
    await refused(
      a,
      { code, percent_off: 10, duration: 'once', applies_to_plan_ids: many },
      400,
      'parameter_invalid',
      'applies_to_plan_ids',
    );
    expect(
      (await createCoupon(a.test, { applies_to_plan_ids: [mine.plan.id, mine.plan.id] })).applies_to_plan_ids,
    ).toEqual([mine.plan.id]);
  });

  it('code, name and metadata are bounded; unknown fields are refused', async () => {
    for (const code of ['', 'has space', 'semi;colon', 'ÜBER', 'x'.repeat(65)]) {
      await refused(a, { code, percent_off: 10, duration: 'once' }, 400, 'parameter_invalid', 'code');
    }
    await refused(a, { percent_off: 10, duration: 'once' }, 400, 'parameter_missing', 'code');
    await refused(
      a,
      { code: `N${rnd()}`, name: 'n'.repeat(256), percent_off: 10, duration: 'once' },
      400,
      'parameter_invalid',
      'name',
    );
    await refused(
      a,
      { code: `N${rnd()}`, name: '   ', percent_off: 10, duration: 'once' },
      400,
      'parameter_invalid',
      'name',
    );
    await refused(
      a,
      { code: `N${rnd()}`, percent_off: 10, duration: 'once', metadata: { k: 'v'.repeat(501) } },
      400,
      'parameter_invalid',
      'metadata.k',
    );
    await refused(
      a,
      { code: `N${rnd()}`, percent_off: 10, duration: 'once', times_redeemed: 5 },
      400,
      'parameter_unknown',
      'times_redeemed',
    );
    expect((await createCoupon(a.test, { code: 'x'.repeat(64) })).code).toBe('x'.repeat(64));
  });
});

describe('codes are unique per merchant and mode regardless of case', () => {
  it('a second code differing only in case is 409 coupon_code_exists; other merchants and modes may use it', async () => {
    const code = `Summer${rnd()}`;
    await createCoupon(a.test, { code });
    const e = await refused(
      a,
      { code: code.toUpperCase(), percent_off: 5, duration: 'once' },
      409,
      'coupon_code_exists',
      'code',
    );
    expect(e.message).toContain(code.toUpperCase());
    await refused(
      a,
      { code: code.toLowerCase(), amount_off: 5, currency: 'INR', duration: 'forever' },
      409,
      'coupon_code_exists',
      'code',
    );
    expect((await createCoupon(a.live, { code })).livemode).toBe(true);
    expect((await createCoupon(b.test, { code: code.toLowerCase() })).code).toBe(code.toLowerCase());
  });

  it('concurrent creates of one code in different cases: exactly one wins, the others 409', async () => {
    const m = await h.merchant();
    const base = `race${rnd()}`;
    const spellings = Array.from({ length: 12 }, (_, i) =>
      i % 3 === 0 ? base.toUpperCase() : i % 3 === 1 ? base : base[0].toUpperCase() + base.slice(1),
    );
    const answers = await Promise.all(
      spellings.map((code) => m.test.post('/coupons', { code, percent_off: 10, duration: 'once' })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of answers.filter((x) => x.status !== 201))
      expect([r.status, r.body.error.code, r.body.error.param]).toEqual([409, 'coupon_code_exists', 'code']);
    const list = await ok(m.test.get('/coupons?limit=100'));
    expect(list.data).toHaveLength(1);
  });
});

describe('list and retrieve', () => {
  it('lists newest first, page by page, and retrieves by id (unknown: 404)', async () => {
    const m = await h.merchant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createCoupon(m.test));
    const first = await ok(m.test.get('/coupons?limit=2'));
    expect(first.data.map((c: any) => c.id)).toEqual([made[4].id, made[3].id]);
    expect(first.has_more).toBe(true);
    const second = await ok(m.test.get(`/coupons?limit=2&cursor=${first.next_cursor}`));
    expect(second.data.map((c: any) => c.id)).toEqual([made[2].id, made[1].id]);
    const third = await ok(m.test.get(`/coupons?limit=2&cursor=${second.next_cursor}`));
    expect(third).toMatchObject({ has_more: false, next_cursor: null });
    expect(third.data.map((c: any) => c.id)).toEqual([made[0].id]);
    expect((await m.test.get('/coupons?limit=101')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
    });
    expect((await m.test.get('/coupons?cursor=nope')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'cursor',
    });
    expect((await m.test.get(`/coupons/${unknownId()}`)).status).toBe(404);
    expect((await m.test.get('/coupons/not-an-id')).status).toBe(404);
  });
});

describe('validate: always 200 with the reason and the discount', () => {
  let m: TestMerchant;
  let catalog: Awaited<ReturnType<typeof recurringPlan>>;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, 'stripe');
    catalog = await recurringPlan(m.test, {}, { amount: 4999 });
  });

  it('valid: matched regardless of case; discount on the amount, the price, or the plan’s default price', async () => {
    const c = await createCoupon(m.test, { code: `Half${rnd()}`, percent_off: 12.5 });
    const v = await validate(m.test, { code: c.code.toLowerCase(), amount: 4999 });
    expect(v).toEqual({ valid: true, reason: null, coupon: c, discount_amount: 625 }); // 624.875 -> 625
    expect((await validate(m.test, { code: c.code.toUpperCase(), price_id: catalog.price.id })).discount_amount).toBe(
      625,
    );
    expect((await validate(m.test, { code: c.code, plan_id: catalog.plan.id })).discount_amount).toBe(625);
    expect((await validate(m.test, { code: c.code, plan_id: catalog.plan.id, currency: 'inr' })).discount_amount).toBe(
      625,
    );
    // no amount known: valid, no discount figure
    expect(await validate(m.test, { code: c.code })).toEqual({
      valid: true,
      reason: null,
      coupon: c,
      discount_amount: null,
    });
  });

  it('percentages round half away from zero in integer arithmetic; fixed amounts are min(amount_off, amount)', async () => {
    const cases: [Record<string, unknown>, number, number][] = [
      [{ percent_off: 0.5 }, 100, 1], // 0.5 -> 1
      [{ percent_off: 0.5 }, 99, 0], // 0.495 -> 0
      [{ percent_off: 33.33 }, 10000, 3333],
      [{ percent_off: 12.5 }, 4, 1], // 0.5 -> 1
      [{ percent_off: 100 }, 49900, 49900],
      [{ percent_off: 99.99 }, 9007199254740991, 9006298534815517], // 9006298534815516.9009 exactly: beyond float precision
      [{ amount_off: 10000, currency: 'INR' }, 49900, 10000],
      [{ amount_off: 10000, currency: 'INR' }, 4000, 4000],
      [{ amount_off: 10000, currency: 'INR' }, 0, 0],
    ];
    for (const [terms, amount, discount] of cases) {
      const c = await createCoupon(m.test, terms);
      expect([
        terms,
        amount,
        (await validate(m.test, { code: c.code, amount, currency: 'INR' })).discount_amount,
      ]).toEqual([terms, amount, discount]);
    }
  });

  it('not_found: an unknown code, another merchant’s, the other mode’s, or one that cannot be a code', async () => {
    const theirs = await createCoupon(b.test);
    const live = await createCoupon(m.live);
    for (const code of [`NOPE${rnd()}`, theirs.code, live.code, 'not a code!']) {
      expect(await validate(m.test, { code, amount: 1000 })).toEqual({
        valid: false,
        reason: 'not_found',
        coupon: null,
        discount_amount: null,
      });
    }
  });

  it("expired: redeem_by passed on the merchant's test clock", async () => {
    const t = await h.merchant();
    const c = await createCoupon(t.test, { redeem_by: new Date(Date.now() + 3600_000).toISOString() });
    expect((await validate(t.test, { code: c.code })).valid).toBe(true);
    await h.clock.advance(t, 3 * 3600);
    expect(await validate(t.test, { code: c.code, amount: 1000 })).toEqual({
      valid: false,
      reason: 'expired',
      coupon: c,
      discount_amount: null,
    });
  });

  it('max_redemptions_reached once a subscription redeemed its last one', async () => {
    const c = await createCoupon(m.test, { max_redemptions: 1 });
    await createSubscription(m.test, catalog.plan.id, { coupon_code: c.code });
    const v = await validate(m.test, { code: c.code, plan_id: catalog.plan.id });
    expect(v).toMatchObject({
      valid: false,
      reason: 'max_redemptions_reached',
      discount_amount: null,
      coupon: { id: c.id, times_redeemed: 1 },
    });
  });

  it('not_applicable: a plan the coupon is not restricted to', async () => {
    const other = await recurringPlan(m.test);
    const c = await createCoupon(m.test, { applies_to_plan_ids: [catalog.plan.id] });
    expect((await validate(m.test, { code: c.code, plan_id: catalog.plan.id })).valid).toBe(true);
    expect(await validate(m.test, { code: c.code, plan_id: other.plan.id })).toMatchObject({
      valid: false,
      reason: 'not_applicable',
      discount_amount: null,
    });
    expect((await validate(m.test, { code: c.code, price_id: other.price.id })).reason).toBe('not_applicable');
    // no plan named: nothing to check it against
    expect((await validate(m.test, { code: c.code, amount: 100 })).valid).toBe(true);
  });

  it('currency_mismatch: a fixed-amount coupon against another currency', async () => {
    const usd = await ok(
      m.test.post(`/plans/${catalog.plan.id}/prices`, { currency: 'USD', amount: 999, is_default: true }),
      201,
    );
    const c = await createCoupon(m.test, { amount_off: 500, currency: 'INR' });
    expect(await validate(m.test, { code: c.code, price_id: usd.id })).toMatchObject({
      valid: false,
      reason: 'currency_mismatch',
    });
    expect((await validate(m.test, { code: c.code, amount: 999, currency: 'usd' })).reason).toBe('currency_mismatch');
    expect((await validate(m.test, { code: c.code, plan_id: catalog.plan.id, currency: 'USD' })).reason).toBe(
      'currency_mismatch',
    );
    expect((await validate(m.test, { code: c.code, amount: 999, currency: 'INR' })).discount_amount).toBe(500);
    // a percentage has no currency
    const p = await createCoupon(m.test, { percent_off: 10 });
    expect((await validate(m.test, { code: p.code, price_id: usd.id })).discount_amount).toBe(100); // 99.9 -> 100
  });

  it('bad input is a 400; ids that are not the tenant’s are 404 like unknown ones', async () => {
    const c = await createCoupon(m.test);
    const bad = async (body: Record<string, unknown>, status: number, code: string, param: string) => {
      const r = await m.test.post('/coupons/validate', body);
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
      return r;
    };
    await bad({}, 400, 'parameter_missing', 'code');
    await bad({ code: 'x'.repeat(65) }, 400, 'parameter_invalid', 'code');
    await bad({ code: c.code, amount: -1 }, 400, 'parameter_invalid', 'amount');
    await bad({ code: c.code, amount: 'ten' }, 400, 'parameter_invalid', 'amount');
    await bad({ code: c.code, currency: 'ZZZ' }, 400, 'parameter_invalid', 'currency');
    await bad({ code: c.code, bogus: 1 }, 400, 'parameter_unknown', 'bogus');
    const theirs = await recurringPlan(b.test);
    const ghost = unknownId();
    const r1 = await bad({ code: c.code, plan_id: theirs.plan.id }, 404, 'resource_not_found', 'plan_id');
    const r2 = await bad({ code: c.code, plan_id: ghost }, 404, 'resource_not_found', 'plan_id');
    expect(errorFingerprint(r1, theirs.plan.id)).toEqual(errorFingerprint(r2, ghost));
    await bad({ code: c.code, price_id: theirs.price.id }, 404, 'resource_not_found', 'price_id');
    await bad(
      { code: c.code, plan_id: catalog.plan.id, price_id: (await recurringPlan(m.test)).price.id },
      400,
      'parameter_invalid',
      'price_id',
    );
  });
});

describe('tenancy', () => {
  it("another merchant's or mode's key sees neither the coupon nor its code", async () => {
    const c = await createCoupon(a.test);
    for (const client of [b.test, a.live, b.live]) {
      const r = await client.get(`/coupons/${c.id}`);
      const ghost = unknownId();
      const none = await client.get(`/coupons/${ghost}`);
      expect(r.status).toBe(404);
      expect(errorFingerprint(r, c.id)).toEqual(errorFingerprint(none, ghost));
      const list = await client.get('/coupons?limit=100');
      expect(list.text).not.toContain(c.id);
      expect((await validate(client, { code: c.code })).reason).toBe('not_found');
      expect(
        (await client.gql(`query($id: ID!) { coupon(id: $id) { id } }`, { id: c.id })).errors![0].extensions.code,
      ).toBe('resource_not_found');
    }
  });
});

describe('REST and GraphQL agree', () => {
  it('createCoupon, coupon, coupons and validateCoupon answer what the REST routes do', async () => {
    const m = await h.merchant();
    const { plan } = await recurringPlan(m.test);
    const created = await m.test.gql(
      `mutation($input: CreateCouponInput!) { createCoupon(input: $input) { ${COUPON_FIELDS} } }`,
      {
        input: {
          code: `Gql${rnd()}`,
          name: 'GraphQL',
          percentOff: 20.5,
          duration: 'REPEATING',
          durationInCycles: 2,
          maxRedemptions: 3,
          appliesToPlanIds: [plan.id],
        },
      },
    );
    expect(created.errors).toBeUndefined();
    const g = created.data.createCoupon;
    expect(g).toMatchObject({ percentOff: 20.5, duration: 'REPEATING', durationInCycles: 2 });
    const rest = await ok(m.test.get(`/coupons/${g.id}`));
    expect(rest).toEqual(couponAsRest(g));
    const one = await m.test.gql(`query($id: ID!) { coupon(id: $id) { ${COUPON_FIELDS} } }`, { id: g.id });
    expect(one.data.coupon).toEqual(g);
    const list = await m.test.gql(
      `{ coupons(first: 10) { edges { node { ${COUPON_FIELDS} } } pageInfo { hasNextPage } totalCount } }`,
    );
    expect(list.data.coupons).toEqual({ edges: [{ node: g }], pageInfo: { hasNextPage: false }, totalCount: 1 });
    expect((await ok(m.test.get('/coupons'))).data).toEqual([rest]);

    const v = await m.test.gql(
      `mutation($input: ValidateCouponInput!) { validateCoupon(input: $input) { valid reason discountAmount coupon { id timesRedeemed } } }`,
      { input: { code: g.code.toLowerCase(), amount: 1000 } },
    );
    expect(v.data.validateCoupon).toEqual({
      valid: true,
      reason: null,
      discountAmount: 205,
      coupon: { id: g.id, timesRedeemed: 0 },
    });
    expect(await validate(m.test, { code: g.code.toLowerCase(), amount: 1000 })).toMatchObject({
      valid: true,
      reason: null,
      discount_amount: 205,
    });
    const missing = await m.test.gql(
      `mutation { validateCoupon(input: { code: "NOPE" }) { valid reason coupon { id } discountAmount } }`,
    );
    expect(missing.data.validateCoupon).toEqual({
      valid: false,
      reason: 'NOT_FOUND',
      coupon: null,
      discountAmount: null,
    });

    const dup = await m.test.gql(`mutation($input: CreateCouponInput!) { createCoupon(input: $input) { id } }`, {
      input: { code: g.code.toUpperCase(), percentOff: 1, duration: 'ONCE' },
    });
    expect(dup.errors![0].extensions).toMatchObject({
      code: 'coupon_code_exists',
      param: 'code',
      http: { status: 409 },
    });
  });
});

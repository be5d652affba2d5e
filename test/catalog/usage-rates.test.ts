import { TestMerchant, useHarness } from '../harness';

/**
 * Usage rates (docs/usage.md): a plan's price per unit of a usage event type, as an exact decimal. Created and listed
 * over REST and GraphQL, shown wherever plans are read, validated (docs/api.md shapes; nothing stored on a refusal),
 * unique per plan, event type and currency (409 usage_rate_exists), tenant-scoped, and never served stale by the
 * catalog read cache.
 */

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
  other = await h.merchant();
});

async function plan(frequency: string | null = 'monthly') {
  const product = await m.test.post('/products', { name: 'Metered', type: frequency ? 'subscription' : 'one_time' });
  const p = await m.test.post(
    `/products/${product.body.id}/plans`,
    frequency ? { name: 'API', billing_frequency: frequency } : { name: 'Once' },
  );
  expect(p.status).toBe(201);
  return { product: product.body, plan: p.body };
}

async function rateCount(): Promise<number> {
  const [row] = await h.app.orm.em.getConnection().execute<{ n: string }[]>('select count(*) as n from usage_rates');
  return Number(row.n);
}

describe('usage rates over REST', () => {
  it('creates rates (canonical decimals, currency upper case) and lists them newest first', async () => {
    const { plan: p } = await plan();
    const a = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'inr',
      unit_amount_decimal: '0.2500',
    });
    expect(a.status).toBe(201);
    expect(a.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'usage_rate',
      plan_id: p.id,
      event_type: 'api_calls',
      currency: 'INR',
      unit_amount_decimal: '0.25',
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
    });
    const b = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'storage_gb',
      currency: 'INR',
      unit_amount_decimal: '007',
    });
    expect(b.body.unit_amount_decimal).toBe('7');
    const c = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'USD',
      unit_amount_decimal: '0.000000000001',
    });
    expect(c.body.unit_amount_decimal).toBe('0.000000000001');
    const zero = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'free_calls',
      currency: 'INR',
      unit_amount_decimal: '0.000',
    });
    expect(zero.body.unit_amount_decimal).toBe('0');
    const big = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'big',
      currency: 'INR',
      unit_amount_decimal: '999999999.999999999999',
    });
    expect(big.body.unit_amount_decimal).toBe('999999999.999999999999');

    const list = await m.test.get(`/plans/${p.id}/usage-rates?limit=2`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: true, next_cursor: expect.any(String) });
    expect(list.body.data.map((r: any) => r.id)).toEqual([big.body.id, zero.body.id]);
    const rest = await m.test.get(`/plans/${p.id}/usage-rates?limit=10&cursor=${list.body.next_cursor}`);
    expect(rest.body.data.map((r: any) => r.id)).toEqual([c.body.id, b.body.id, a.body.id]);
    expect(rest.body.has_more).toBe(false);
  });

  it('shows them wherever plans are read: the plan, the product, the product list', async () => {
    const { product, plan: p } = await plan();
    const rate = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'sms',
      currency: 'INR',
      unit_amount_decimal: '12.5',
    });
    const one = await m.test.get(`/plans/${p.id}`);
    expect(one.body.usage_rates).toEqual([rate.body]);
    const prod = await m.test.get(`/products/${product.id}`);
    expect(prod.body.plans[0].usage_rates).toEqual([rate.body]);
    const list = await m.test.get('/products?limit=100');
    expect(list.body.data.find((x: any) => x.id === product.id).plans[0].usage_rates).toEqual([rate.body]);
    // a plan without rates shows an empty list
    const { plan: bare } = await plan();
    expect((await m.test.get(`/plans/${bare.id}`)).body.usage_rates).toEqual([]);
  });

  it.each([
    [{ unit_amount_decimal: '-1' }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: '1e-3' }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: '.5' }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: '0.1234567890123' }, 'unit_amount_decimal'], // 13 fractional digits
    [{ unit_amount_decimal: '1000000000' }, 'unit_amount_decimal'], // 10 integer digits
    [{ unit_amount_decimal: 'NaN' }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: '' }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: '1'.repeat(33) }, 'unit_amount_decimal'],
    [{ unit_amount_decimal: 0.25 }, 'unit_amount_decimal'], // a JSON number: the decimal is a string
    [{ currency: 'XYZ' }, 'currency'],
    [{ currency: 'INRR' }, 'currency'],
    [{ event_type: '' }, 'event_type'],
    [{ event_type: '   ' }, 'event_type'],
    [{ event_type: 'x'.repeat(101) }, 'event_type'],
    [{ event_type: 'api calls' }, 'event_type'], // not a name usage events can carry
    [{ event_type: 'api/calls' }, 'event_type'],
    [{ bogus: 1 }, 'bogus'],
  ])('refuses %j: 400 naming %s, nothing stored', async (fields, param) => {
    const { plan: p } = await plan();
    const before = await rateCount();
    const r = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'INR',
      unit_amount_decimal: '1',
      ...fields,
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', param });
    expect(['parameter_invalid', 'parameter_unknown']).toContain(r.body.error.code);
    expect(await rateCount()).toBe(before);
  });

  it.each(['event_type', 'currency', 'unit_amount_decimal'])('a missing %s: 400 parameter_missing', async (field) => {
    const { plan: p } = await plan();
    const body: Record<string, unknown> = { event_type: 'api_calls', currency: 'INR', unit_amount_decimal: '1' };
    delete body[field];
    const r = await m.test.post(`/plans/${p.id}/usage-rates`, body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_missing', param: field });
  });

  it('one rate per plan, event type and currency: 409 usage_rate_exists (another currency or plan is fine)', async () => {
    const { plan: p } = await plan();
    const body = { event_type: 'api_calls', currency: 'INR', unit_amount_decimal: '0.25' };
    expect((await m.test.post(`/plans/${p.id}/usage-rates`, body)).status).toBe(201);
    const again = await m.test.post(`/plans/${p.id}/usage-rates`, {
      ...body,
      currency: 'inr',
      unit_amount_decimal: '0.5',
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'usage_rate_exists',
      param: 'event_type',
    });
    expect((await m.test.get(`/plans/${p.id}/usage-rates`)).body.data).toHaveLength(1);
    expect((await m.test.post(`/plans/${p.id}/usage-rates`, { ...body, currency: 'USD' })).status).toBe(201);
    const { plan: q } = await plan();
    expect((await m.test.post(`/plans/${q.id}/usage-rates`, body)).status).toBe(201);
    // concurrent duplicates: exactly one wins
    const { plan: r } = await plan();
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => m.test.post(`/plans/${r.id}/usage-rates`, body)));
    expect(results.map((x) => x.status).sort()).toEqual([201, 409, 409, 409, 409]);
  });

  it('a one_time plan has no usage: 400 plan_not_recurring', async () => {
    const { plan: p } = await plan(null);
    const r = await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'INR',
      unit_amount_decimal: '1',
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('plan_not_recurring');
  });

  it("another merchant's plan, the other mode's plan and an unknown plan answer 404, and nothing is created", async () => {
    const { plan: p } = await plan();
    await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'INR',
      unit_amount_decimal: '1',
    });
    const before = await rateCount();
    for (const client of [other.test, m.live]) {
      const w = await client.post(`/plans/${p.id}/usage-rates`, {
        event_type: 'x',
        currency: 'INR',
        unit_amount_decimal: '1',
      });
      expect(w.status).toBe(404);
      expect(w.body.error.code).toBe('resource_not_found');
      expect((await client.get(`/plans/${p.id}/usage-rates`)).status).toBe(404);
    }
    expect((await m.test.get('/plans/00000000-0000-7000-8000-000000000000/usage-rates')).status).toBe(404);
    expect(await rateCount()).toBe(before);
  });

  it('the catalog read cache never serves a plan without a rate just created (REST and GraphQL)', async () => {
    const { product, plan: p } = await plan();
    const q = `query($id: ID!) { plan(id: $id) { id usageRates { eventType unitAmountDecimal } } }`;
    // read twice each: the second is a cache hit
    for (let i = 0; i < 2; i++) {
      expect((await m.test.get(`/plans/${p.id}`)).body.usage_rates).toEqual([]);
      expect((await m.test.get(`/products/${product.id}`)).body.plans[0].usage_rates).toEqual([]);
      expect((await m.test.get(`/plans/${p.id}/usage-rates`)).body.data).toEqual([]);
      expect((await m.test.gql(q, { id: p.id })).data.plan.usageRates).toEqual([]);
    }
    await m.test.post(`/plans/${p.id}/usage-rates`, {
      event_type: 'api_calls',
      currency: 'INR',
      unit_amount_decimal: '0.25',
    });
    const rate = [{ event_type: 'api_calls', unit_amount_decimal: '0.25' }];
    expect((await m.test.get(`/plans/${p.id}`)).body.usage_rates).toMatchObject(rate);
    expect((await m.test.get(`/products/${product.id}`)).body.plans[0].usage_rates).toMatchObject(rate);
    expect((await m.test.get(`/plans/${p.id}/usage-rates`)).body.data).toMatchObject(rate);
    expect((await m.test.gql(q, { id: p.id })).data.plan.usageRates).toEqual([
      { eventType: 'api_calls', unitAmountDecimal: '0.25' },
    ]);
  });
});

describe('usage rates over GraphQL', () => {
  it('createUsageRate, Plan.usageRates through a product list (one query for every plan), usageRates', async () => {
    const { product, plan: p } = await plan();
    const created = await m.test.gql(
      `mutation($planId: ID!, $input: CreateUsageRateInput!) { createUsageRate(planId: $planId, input: $input) { id object planId eventType currency unitAmountDecimal } }`,
      { planId: p.id, input: { eventType: 'tokens', currency: 'inr', unitAmountDecimal: '0.0030' } },
    );
    expect(created.data.createUsageRate).toMatchObject({
      object: 'usage_rate',
      planId: p.id,
      eventType: 'tokens',
      currency: 'INR',
      unitAmountDecimal: '0.003',
    });
    const tree = await m.test.gql(
      `{ products(first: 100) { edges { node { id plans { id usageRates { id eventType } } } } } }`,
    );
    const node = tree.data.products.edges.find((e: any) => e.node.id === product.id).node;
    expect(node.plans[0].usageRates).toEqual([{ id: created.data.createUsageRate.id, eventType: 'tokens' }]);
    const list = await m.test.gql(`query($id: ID!) { usageRates(planId: $id) { totalCount edges { node { id } } } }`, {
      id: p.id,
    });
    expect(list.data.usageRates).toMatchObject({
      totalCount: 1,
      edges: [{ node: { id: created.data.createUsageRate.id } }],
    });

    const bad = await h.graphql(
      m.keys.test,
      `mutation { createUsageRate(planId: "${p.id}", input: { eventType: "x", currency: "INR", unitAmountDecimal: "-0.5" }) { id } }`,
    );
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid' });
  });
});

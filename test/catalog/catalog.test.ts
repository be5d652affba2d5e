import { startApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { TestMerchant, useHarness } from '../harness';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
});

describe('catalog over REST', () => {
  it('creates a product, a plan and prices, and reads them back nested', async () => {
    const p = await m.test.post('/products', { name: 'Pro', description: 'All features', type: 'subscription' });
    expect(p.status).toBe(201);
    expect(p.body).toMatchObject({
      object: 'product',
      name: 'Pro',
      type: 'subscription',
      status: 'active',
      livemode: false,
      plans: [],
    });
    expect(p.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.body.created_at).toMatch(/Z$/);

    const plan = await m.test.post(`/products/${p.body.id}/plans`, {
      name: 'Monthly',
      billing_frequency: 'monthly',
      trial_period_days: 7,
    });
    expect(plan.status).toBe(201);
    expect(plan.body).toMatchObject({
      object: 'plan',
      product_id: p.body.id,
      billing_frequency: 'monthly',
      billing_interval: 1,
      trial_period_days: 7,
      trial_end_action: 'start_subscription',
      max_cycles: null,
      prices: [],
      default_price: null,
    });

    const inr = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'inr', amount: 49900 });
    expect(inr.status).toBe(201);
    expect(inr.body).toMatchObject({
      object: 'price',
      currency: 'INR',
      amount: 49900,
      setup_fee: 0,
      tax_behavior: 'exclusive',
      is_default: true,
      provider_price_ids: {},
    });

    const usd = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'USD', amount: 999, setup_fee: 100 });
    expect(usd.body.is_default).toBe(true); // first USD price becomes the USD default

    const list = await m.test.get('/products');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const entry = list.body.data.find((x: any) => x.id === p.body.id);
    expect(entry.plans).toHaveLength(1);
    expect(entry.plans[0].default_price).toMatchObject({ id: inr.body.id, currency: 'INR' });

    const one = await m.test.get(`/plans/${plan.body.id}`);
    expect(one.body.prices.map((x: any) => x.id)).toEqual([inr.body.id, usd.body.id]);
  });

  it('takes a tax-inclusive price, and refuses an unknown tax_behavior without creating anything', async () => {
    const p = await m.test.post('/products', { name: 'Inclusive', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly' });
    const bad = await m.test.post(`/plans/${plan.body.id}/prices`, {
      currency: 'INR',
      amount: 49900,
      tax_behavior: 'gross',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect((await m.test.get(`/plans/${plan.body.id}`)).body.prices).toEqual([]);

    const inc = await m.test.post(`/plans/${plan.body.id}/prices`, {
      currency: 'INR',
      amount: 49900,
      tax_behavior: 'inclusive',
    });
    expect(inc.status).toBe(201);
    expect(inc.body).toMatchObject({ amount: 49900, tax_behavior: 'inclusive', is_default: true });
    const again = await m.test.get(`/plans/${plan.body.id}`);
    expect(again.body.prices.map((x: any) => x.tax_behavior)).toEqual(['inclusive']);
  });

  it('switches the default price per plan and currency', async () => {
    const p = await m.test.post('/products', { name: 'Switch', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'Yearly', billing_frequency: 'yearly' });
    const a = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 100000 });
    const b = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 90000, is_default: true });
    const c = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 80000 });
    expect([a.body.is_default, b.body.is_default, c.body.is_default]).toEqual([true, true, false]);
    const got = await m.test.get(`/plans/${plan.body.id}`);
    const byId = Object.fromEntries(got.body.prices.map((x: any) => [x.id, x.is_default]));
    expect(byId).toEqual({ [a.body.id]: false, [b.body.id]: true, [c.body.id]: false });
    expect(got.body.default_price.id).toBe(b.body.id);
  });

  it('keeps one default per plan and currency when defaults race', async () => {
    const p = await m.test.post('/products', { name: 'Race', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'M', billing_frequency: 'monthly' });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 1000 + i, is_default: true }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(201));
    const got = await m.test.get(`/plans/${plan.body.id}`);
    expect(got.body.prices).toHaveLength(12);
    expect(got.body.prices.filter((x: any) => x.is_default)).toHaveLength(1);
  });

  it('defaults the plan default_price to the reporting currency, else the oldest default', async () => {
    const p = await m.test.post('/products', { name: 'Multi', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'M', billing_frequency: 'monthly' });
    const usd = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'USD', amount: 500 });
    expect((await m.test.get(`/plans/${plan.body.id}`)).body.default_price.id).toBe(usd.body.id);
    const inr = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 40000 });
    expect((await m.test.get(`/plans/${plan.body.id}`)).body.default_price.id).toBe(inr.body.id);
  });

  it('gives one_time products plans without a frequency', async () => {
    const p = await m.test.post('/products', { name: 'Lifetime', type: 'one_time' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'Once' });
    expect(plan.status).toBe(201);
    expect(plan.body.billing_frequency).toBeNull();
    const bad = await m.test.post(`/products/${p.body.id}/plans`, { name: 'Once', billing_frequency: 'monthly' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'billing_frequency' });
  });

  it('stores max_cycles, intervals and trial_end_action', async () => {
    const p = await m.test.post('/products', { name: 'Quarterly', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, {
      name: 'Q',
      billing_frequency: 'monthly',
      billing_interval: 3,
      max_cycles: 4,
      trial_end_action: 'cancel_subscription',
    });
    expect(plan.body).toMatchObject({ billing_interval: 3, max_cycles: 4, trial_end_action: 'cancel_subscription' });
  });

  it('groups products in families and updates product status', async () => {
    const fam = await m.test.post('/product-families', { name: 'Video', description: 'Streaming' });
    expect(fam.status).toBe(201);
    expect(fam.body).toMatchObject({ object: 'product_family', name: 'Video', description: 'Streaming' });
    const p = await m.test.post('/products', { name: 'Basic', type: 'subscription', product_family_id: fam.body.id });
    expect(p.body.product_family_id).toBe(fam.body.id);
    const off = await m.test.post(`/products/${p.body.id}`, { status: 'inactive' });
    expect(off.status).toBe(200);
    expect(off.body.status).toBe('inactive');
    const inactive = await m.test.get('/products?status=inactive');
    expect(inactive.body.data.map((x: any) => x.id)).toEqual([p.body.id]);
    expect((await m.test.get(`/product-families/${fam.body.id}`)).body.id).toBe(fam.body.id);
    expect((await m.test.get('/product-families')).body.data.map((x: any) => x.id)).toContain(fam.body.id);
  });
});

describe('catalog validation', () => {
  let planId: string;
  beforeAll(async () => {
    const p = await m.test.post('/products', { name: 'V', type: 'subscription' });
    planId = (await m.test.post(`/products/${p.body.id}/plans`, { name: 'M', billing_frequency: 'monthly' })).body.id;
  });

  const cases: [string, () => Promise<any>, number, string, string | null][] = [
    ['missing name', () => m.test.post('/products', { type: 'subscription' }), 400, 'parameter_missing', 'name'],
    ['missing type', () => m.test.post('/products', { name: 'x' }), 400, 'parameter_missing', 'type'],
    ['bad type', () => m.test.post('/products', { name: 'x', type: 'forever' }), 400, 'parameter_invalid', 'type'],
    [
      'name not a string',
      () => m.test.post('/products', { name: 5, type: 'one_time' }),
      400,
      'parameter_invalid',
      'name',
    ],
    ['empty name', () => m.test.post('/products', { name: '', type: 'one_time' }), 400, 'parameter_invalid', 'name'],
    [
      'unknown field',
      () => m.test.post('/products', { name: 'x', type: 'one_time', bogus_field: 1 }),
      400,
      'parameter_unknown',
      'bogus_field',
    ],
    [
      'camelCase field',
      () => m.test.post('/products', { name: 'x', type: 'one_time', productFamilyId: null }),
      400,
      'parameter_unknown',
      'productFamilyId',
    ],
    [
      'unknown family',
      () =>
        m.test.post('/products', {
          name: 'x',
          type: 'one_time',
          product_family_id: '01900000-0000-7000-8000-000000000000',
        }),
      404,
      'resource_not_found',
      'product_family_id',
    ],
    [
      'missing frequency',
      () => m.test.post(`/plans/${planId}/prices`, { amount: 100 }),
      400,
      'parameter_missing',
      'currency',
    ],
    [
      'bad currency',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'XYZ', amount: 100 }),
      400,
      'parameter_invalid',
      'currency',
    ],
    [
      'negative amount',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'INR', amount: -1 }),
      400,
      'parameter_invalid',
      'amount',
    ],
    [
      'fractional amount',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'INR', amount: 10.5 }),
      400,
      'parameter_invalid',
      'amount',
    ],
    [
      'amount as string',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'INR', amount: '100' }),
      400,
      'parameter_invalid',
      'amount',
    ],
    // Three-decimal currencies: both gateways take them only in tens of fils (gateways/amounts.ts).
    [
      'KWD amount not ending in 0',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'kwd', amount: 1505 }),
      400,
      'parameter_invalid',
      'amount',
    ],
    [
      'BHD setup fee not ending in 0',
      () => m.test.post(`/plans/${planId}/prices`, { currency: 'BHD', amount: 1500, setup_fee: 1 }),
      400,
      'parameter_invalid',
      'setup_fee',
    ],
    [
      'interval zero',
      () =>
        m.test.post(`/products/${'01900000-0000-7000-8000-000000000000'}/plans`, {
          name: 'x',
          billing_frequency: 'monthly',
        }),
      404,
      'resource_not_found',
      null,
    ],
    ['unknown plan', () => m.test.get('/plans/01900000-0000-7000-8000-000000000000'), 404, 'resource_not_found', null],
    ['malformed id', () => m.test.get('/products/not-a-uuid'), 404, 'resource_not_found', null],
    ['limit too big', () => m.test.get('/products?limit=101'), 400, 'parameter_invalid', 'limit'],
    ['limit zero', () => m.test.get('/products?limit=0'), 400, 'parameter_invalid', 'limit'],
    ['limit not a number', () => m.test.get('/products?limit=ten'), 400, 'parameter_invalid', 'limit'],
    ['bad cursor', () => m.test.get('/products?cursor=abc'), 400, 'parameter_invalid', 'cursor'],
    ['unknown query parameter', () => m.test.get('/products?colour=red'), 400, 'parameter_unknown', 'colour'],
    ['body not an object', () => m.test.post('/products', [1, 2]), 400, 'parameter_invalid', null],
  ];
  it.each(cases)('%s', async (_name, call, status, code, param) => {
    const before = await m.test.get('/products?limit=100');
    const r = await call();
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, param });
    expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
    expect(typeof r.body.error.message).toBe('string');
    const after = await m.test.get('/products?limit=100');
    expect(after.body.data.length).toBe(before.body.data.length); // nothing changed
  });

  it('accepts only prices every gateway can charge (KWD in tens of fils), over REST and GraphQL', async () => {
    const kwd = await m.test.post(`/plans/${planId}/prices`, { currency: 'KWD', amount: 1505 });
    expect(kwd.body.error.message).toMatch(/end in 0/);
    const ok = await m.test.post(`/plans/${planId}/prices`, { currency: 'KWD', amount: 1510, setup_fee: 500 });
    expect([ok.status, ok.body.amount, ok.body.setup_fee, ok.body.currency]).toEqual([201, 1510, 500, 'KWD']);
    for (const [currency, amount] of [
      ['JPY', 501],
      ['INR', 49901],
      ['OMR', 0],
    ] as const) {
      expect((await m.test.post(`/plans/${planId}/prices`, { currency, amount })).status).toBe(201);
    }
    const g = await m.test.gql(
      'mutation($planId: ID!, $input: CreatePriceInput!) { createPrice(planId: $planId, input: $input) { id } }',
      { planId, input: { currency: 'JOD', amount: 2001 } },
    );
    expect(g.errors?.[0]?.extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'amount',
      http: { status: 400 },
    });
  });

  it('rejects a bad billing_interval and trial length', async () => {
    const p = await m.test.post('/products', { name: 'I', type: 'subscription' });
    const r = await m.test.post(`/products/${p.body.id}/plans`, {
      name: 'x',
      billing_frequency: 'monthly',
      billing_interval: 0,
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'billing_interval' });
    const r2 = await m.test.post(`/products/${p.body.id}/plans`, {
      name: 'x',
      billing_frequency: 'monthly',
      trial_period_days: -1,
    });
    expect(r2.body.error).toMatchObject({ code: 'parameter_invalid', param: 'trial_period_days' });
    const r3 = await m.test.post(`/products/${p.body.id}/plans`, { name: 'x' });
    expect(r3.body.error).toMatchObject({ code: 'parameter_missing', param: 'billing_frequency' });
  });
});

describe('cached catalog reads', () => {
  it('see a write made by another process as soon as it commits', async () => {
    const orm2 = await openDatabase(h.app.databaseUrl, entities, 4);
    const app2 = await startApp(
      { ...loadConfig({}), port: 0, databaseUrl: h.app.databaseUrl, sandbox: false, rateLimitPerSecond: 10_000 },
      orm2,
      0,
    );
    try {
      const other = (path: string) =>
        fetch(`${app2.url}/v1${path}`, { headers: { authorization: `Bearer ${m.keys.test}` } }).then(
          (r) => r.json() as Promise<any>,
        );
      const p = await m.test.post('/products', { name: 'Cached', type: 'subscription' });
      const before = await other(`/products/${p.body.id}`);
      expect(before.plans).toEqual([]);
      expect((await other(`/products/${p.body.id}`)).plans).toEqual([]); // served from process 2's cache
      const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'M', billing_frequency: 'monthly' });
      const after = await other(`/products/${p.body.id}`);
      expect(after.plans.map((x: { id: string }) => x.id)).toEqual([plan.body.id]);
      const gql = (query: string) =>
        fetch(`${app2.url}/graphql`, {
          method: 'POST',
          headers: { authorization: `Bearer ${m.keys.test}`, 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        }).then((r) => r.json() as Promise<any>);
      const q = `{ product(id: "${p.body.id}") { plans { defaultPrice { amount } } } }`;
      expect((await gql(q)).data.product.plans[0].defaultPrice).toBeNull();
      expect((await gql(q)).data.product.plans[0].defaultPrice).toBeNull(); // cached in process 2
      await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'INR', amount: 1234 });
      expect((await other(`/products/${p.body.id}`)).plans[0].default_price.amount).toBe(1234);
      expect((await gql(q)).data.product.plans[0].defaultPrice.amount).toBe(1234);
      // another merchant never gets this merchant's cached answer
      const m2 = await h.merchant();
      const foreign = await fetch(`${app2.url}/v1/products/${p.body.id}`, {
        headers: { authorization: `Bearer ${m2.keys.test}` },
      });
      expect(foreign.status).toBe(404);
      const foreignGql = await fetch(`${app2.url}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${m2.keys.test}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: q }),
      }).then((r) => r.json() as Promise<any>);
      expect(foreignGql.data).toBeNull();
      expect(foreignGql.errors[0].extensions.code).toBe('resource_not_found');
    } finally {
      await app2.close();
      await orm2.close(true);
    }
  });
});

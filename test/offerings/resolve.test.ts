import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { attach, connect, customer, ok, offering, pkg, product, rnd } from './helpers';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
  await connect(m.test);
});

const resolve = (c: TestMerchant['test'], body: unknown) => c.post('/offerings/resolve', body);

/** An offering with two packages (monthly: two products; annual: one), a paywall, made current when asked. */
async function storefront(c: TestMerchant['test'], opts: { current?: boolean } = {}) {
  const [a, b] = [await product(c, `Basic ${rnd()}`), await product(c, `Pro ${rnd()}`)];
  const o = await offering(c, { is_current: opts.current ?? false });
  const monthly = await pkg(c, { lookup_key: `$rc_monthly_${rnd()}`, name: 'Monthly' });
  const annual = await pkg(c, { lookup_key: `$rc_annual_${rnd()}`, name: 'Annual' });
  await ok(c.post(`/packages/${monthly.id}/products`, { product_ids: [a.product.id, b.product.id] }));
  await ok(c.post(`/packages/${annual.id}/products`, { product_ids: [b.product.id] }));
  await attach(c, o.id, annual.id);
  await attach(c, o.id, monthly.id, 0);
  const paywall = await ok(
    c.post('/paywalls', { name: 'Main', offering_id: o.id, template: 'simple', config: { title: 'Upgrade' } }),
    201,
  );
  return { offering: o, monthly, annual, a, b, paywall };
}

describe('resolve without experiments', () => {
  it('answers offering null while the mode has no current offering', async () => {
    const mm = await h.merchant();
    await connect(mm.test);
    const id = await customer(mm.test);
    const notCurrent = await storefront(mm.test);
    const r = await resolve(mm.test, { customer_id: id, attributes: { country: 'IN' } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ customer_id: id, offering: null, paywall: null, experiment: null });
    // once one is made current, it is served at once
    await ok(mm.test.post(`/offerings/${notCurrent.offering.id}/make-current`));
    const after = await ok(resolve(mm.test, { customer_id: id }));
    expect(after.offering.id).toBe(notCurrent.offering.id);
    expect(after.paywall.id).toBe(notCurrent.paywall.id);
  });

  it('serves the current offering with packages in order, their products, plans and prices, and the paywall', async () => {
    const s = await storefront(m.test, { current: true });
    const id = await customer(m.test);
    const r = await ok(
      resolve(m.test, {
        customer_id: id,
        attributes: { country: 'IN', platform: ['ios', 'web'], beta: true, version: 3 },
      }),
    );
    expect(r.customer_id).toBe(id);
    expect(r.experiment).toBeNull();
    expect(r.paywall).toEqual(s.paywall);
    const o = r.offering;
    expect(o).toMatchObject({
      id: s.offering.id,
      object: 'offering',
      lookup_key: s.offering.lookup_key,
      is_current: true,
      metadata: {},
    });
    expect(o.packages.map((p: any) => [p.id, p.position, p.object])).toEqual([
      [s.monthly.id, 0, 'package'],
      [s.annual.id, 1, 'package'],
    ]);
    const [monthly, annual] = o.packages;
    expect(monthly.product_ids).toEqual([s.a.product.id, s.b.product.id]);
    expect(monthly.products.map((p: any) => p.id)).toEqual([s.a.product.id, s.b.product.id]);
    expect(annual.products.map((p: any) => p.id)).toEqual([s.b.product.id]);
    const pro = annual.products[0];
    expect(pro).toMatchObject({ object: 'product', name: s.b.product.name, type: 'subscription', status: 'active' });
    expect(pro.plans.map((p: any) => p.id)).toEqual([s.b.monthly.id, s.b.yearly.id]);
    const [m1] = pro.plans;
    expect(m1).toMatchObject({ object: 'plan', billing_frequency: 'monthly', billing_interval: 1 });
    expect(m1.prices.map((p: any) => [p.currency, p.amount, p.is_default])).toEqual([
      ['INR', 49900, true],
      ['USD', 999, true],
    ]);
    expect(m1.default_price).toMatchObject({ currency: 'INR', amount: 49900 });
    // The same products, plans and prices as the catalog shows them, field for field
    const catalog = await ok(m.test.get(`/products/${s.b.product.id}`));
    const { plans: catalogPlans, ...catalogProduct } = catalog;
    const { plans: offeredPlans, ...offeredProduct } = pro;
    expect(offeredProduct).toEqual(catalogProduct);
    for (const [i, plan] of offeredPlans.entries())
      expect(plan).toEqual(await ok(m.test.get(`/plans/${catalogPlans[i].id}`)));
  });

  it('reflects every change at once: prices, product status, packages, the current offering, paywalls', async () => {
    const mm = await h.merchant({ reporting_currency: 'INR' });
    await connect(mm.test);
    const s = await storefront(mm.test, { current: true });
    const id = await customer(mm.test);
    const get = async () => (await ok(resolve(mm.test, { customer_id: id }))) as any;
    await get(); // cached from here
    const price = await ok(
      mm.test.post(`/plans/${s.b.yearly.id}/prices`, { currency: 'INR', amount: 399000, is_default: true }),
      201,
    );
    let r = await get();
    expect(r.offering.packages[1].products[0].plans[1].default_price.id).toBe(price.id);
    // a deactivated product leaves every package; its id stays linked
    await ok(mm.test.post(`/products/${s.a.product.id}`, { status: 'inactive' }));
    r = await get();
    expect(r.offering.packages[0].products.map((p: any) => p.id)).toEqual([s.b.product.id]);
    expect(r.offering.packages[0].product_ids).toEqual([s.a.product.id, s.b.product.id]);
    // a new package, moved first
    const lifetime = await pkg(mm.test, { name: 'Lifetime' });
    await attach(mm.test, s.offering.id, lifetime.id, 0);
    r = await get();
    expect(r.offering.packages.map((p: any) => p.id)).toEqual([lifetime.id, s.monthly.id, s.annual.id]);
    expect(r.offering.packages[0].products).toEqual([]);
    // another offering made current, without a paywall; then given one
    const next = await offering(mm.test);
    await ok(mm.test.post(`/offerings/${next.id}/make-current`));
    r = await get();
    expect([r.offering.id, r.offering.packages, r.paywall]).toEqual([next.id, [], null]);
    const wall = await ok(
      mm.test.post('/paywalls', { name: 'Next', offering_id: next.id, template: 'sliding_cards' }),
      201,
    );
    expect((await get()).paywall).toEqual(wall);
  });

  it('answers 404 for an unknown customer, or one of another merchant or mode', async () => {
    const other = await h.merchant();
    await connect(other.test);
    await connect(m.live, true);
    const theirs = await customer(other.test);
    const live = await customer(m.live);
    for (const id of [unknownId(), theirs, live, 'not-a-uuid']) {
      const r = await resolve(m.test, { customer_id: id, attributes: {} });
      expect([r.status, r.body.error.type, r.body.error.code, r.body.error.param]).toEqual([
        404,
        'invalid_request_error',
        'resource_not_found',
        'customer_id',
      ]);
    }
    // and the owner resolves them
    expect((await resolve(other.test, { customer_id: theirs })).status).toBe(200);
    expect((await resolve(m.live, { customer_id: live })).status).toBe(200);
  });

  it('validates the body before reading anything', async () => {
    const id = await customer(m.test);
    const cases: [unknown, number, string, string | null][] = [
      [{}, 400, 'parameter_missing', 'customer_id'],
      [{ customer_id: id, attributes: 'IN' }, 400, 'parameter_invalid', 'attributes'],
      [{ customer_id: id, attributes: [1] }, 400, 'parameter_invalid', 'attributes'],
      [{ customer_id: id, attributes: { country: { code: 'IN' } } }, 400, 'parameter_invalid', 'attributes.country'],
      [{ customer_id: id, attributes: { tags: ['a', { b: 1 }] } }, 400, 'parameter_invalid', 'attributes.tags[1]'],
      [{ customer_id: id, attributes: { s: 'x'.repeat(501) } }, 400, 'parameter_invalid', 'attributes.s'],
      [
        { customer_id: id, attributes: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) },
        400,
        'parameter_invalid',
        'attributes',
      ],
      [{ customer_id: unknownId(), attributes: { bad: { x: 1 } } }, 400, 'parameter_invalid', 'attributes.bad'],
      [{ customer_id: id, bogus: 1 }, 400, 'parameter_unknown', 'bogus'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await resolve(m.test, body);
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    }
    // null attributes are "not given"
    expect((await resolve(m.test, { customer_id: id, attributes: { country: null } })).status).toBe(200);
  });

  it('runs a handful of statements, and fewer once the offering is cached', async () => {
    const mm = await h.merchant({ reporting_currency: 'INR' });
    await connect(mm.test);
    await storefront(mm.test, { current: true });
    const id = await customer(mm.test);
    h.app.sql.reset();
    await ok(resolve(mm.test, { customer_id: id }));
    const first = h.app.sql.count;
    h.app.sql.reset();
    await ok(resolve(mm.test, { customer_id: id }));
    const cached = h.app.sql.count;
    // customer and running experiments (the catalog version runs on the pool, uncounted); the tree: 6 more on a miss
    expect(first).toBeLessThanOrEqual(9);
    expect(cached).toBeLessThanOrEqual(3);
    expect(cached).toBeLessThan(first);
  });
});

/** The REST field names of a GraphQL answer: camelCase keys to snake_case, enum values lower case; JSON values as they are. */
const JSON_FIELDS = new Set(['metadata', 'config', 'providerPriceIds']);
const ENUM_FIELDS = new Set(['template', 'type', 'status', 'billingFrequency', 'trialEndAction', 'taxBehavior']);
function asRest(v: any): any {
  if (Array.isArray(v)) return v.map(asRest);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v).map(([k, x]) => [
      k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`),
      JSON_FIELDS.has(k) ? x : ENUM_FIELDS.has(k) && typeof x === 'string' ? x.toLowerCase() : asRest(x),
    ]),
  );
}

/** Lists of objects these storefronts leave empty: no entry to take a selection from, so their ids are selected. */
const EMPTY_OBJECT_LISTS = new Set(['usageRates']);

/** A GraphQL selection with the fields of a REST answer (JSON fields not expanded). */
function selectionOf(v: any): string {
  const sample = Array.isArray(v) ? v.find((x) => x && typeof x === 'object') : v;
  if (!sample) return '';
  return Object.entries(sample)
    .map(([k, x]) => {
      const name = k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
      if (EMPTY_OBJECT_LISTS.has(name) && Array.isArray(x) && !x.length) return `${name} { id }`;
      if (
        JSON_FIELDS.has(name) ||
        x === null ||
        typeof x !== 'object' ||
        (Array.isArray(x) && !x.some((y) => y && typeof y === 'object'))
      )
        return name;
      return `${name} { ${selectionOf(x)} }`;
    })
    .join(' ');
}

/** Which variant the API document's five steps give (computed here, independently of the service). */
function expectedVariant(
  experimentId: string,
  customerId: string,
  variants: { id: string; key: string; traffic_percent: number }[],
) {
  const digest = crypto.createHash('sha256').update(`${experimentId}:${customerId}`).digest('hex');
  const bucket = Number(BigInt(`0x${digest}`) % 100n);
  let start = 0;
  for (const v of [...variants].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (bucket < start + v.traffic_percent) return v;
    start += v.traffic_percent;
  }
  throw new Error('no variant');
}

describe('resolve through a running experiment', () => {
  let mm: TestMerchant;
  let current: Awaited<ReturnType<typeof storefront>>;
  let control: Awaited<ReturnType<typeof storefront>>;
  let treatment: Awaited<ReturnType<typeof storefront>>;
  let experiment: any;

  beforeAll(async () => {
    mm = await h.merchant({ reporting_currency: 'INR' });
    await connect(mm.test);
    current = await storefront(mm.test, { current: true });
    control = await storefront(mm.test);
    treatment = await storefront(mm.test);
    experiment = await ok(
      mm.test.post('/experiments', {
        name: 'Annual first',
        targeting: { country: ['IN', 'BR'] },
        variants: [
          { key: 'control', offering_id: control.offering.id, traffic_percent: 50, is_control: true },
          { key: 'annual_first', offering_id: treatment.offering.id, traffic_percent: 50 },
        ],
      }),
      201,
    );
    await ok(mm.test.post(`/experiments/${experiment.id}/start`));
  });

  const offeringOf = (variantKey: string) => (variantKey === 'control' ? control : treatment).offering.id;

  it("serves the variant's offering and paywall to matching customers, bucketed as the API document says", async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const id = await customer(mm.test);
      const r = await ok(resolve(mm.test, { customer_id: id, attributes: { country: i % 2 ? 'IN' : ['US', 'BR'] } }));
      const want = expectedVariant(experiment.id, id, experiment.variants);
      expect(r.experiment).toEqual({ experiment_id: experiment.id, variant_id: want.id, variant_key: want.key });
      expect(r.offering.id).toBe(offeringOf(want.key));
      expect(r.paywall.offering_id).toBe(r.offering.id);
      expect(r.offering.packages).toHaveLength(2);
      expect(r.offering.is_current).toBe(false);
      seen.add(want.key);
    }
    expect(seen.size).toBe(2); // 12 customers at 50/50: both arms (a false failure has probability 2^-11)
  });

  it('serves the current offering to customers the targeting does not match', async () => {
    const id = await customer(mm.test);
    for (const attributes of [{ country: 'US' }, {}, { platform: 'ios' }, { country: ['US', 'DE'] }]) {
      const r = await ok(resolve(mm.test, { customer_id: id, attributes }));
      expect([r.offering.id, r.experiment]).toEqual([current.offering.id, null]);
    }
  });

  it('keeps a customer in its variant across calls, attributes and concurrent first resolves', async () => {
    const id = await customer(mm.test);
    const first = await Promise.all(
      Array.from({ length: 8 }, () => ok(resolve(mm.test, { customer_id: id, attributes: { country: 'IN' } }))),
    );
    const variants = new Set(first.map((r) => r.experiment.variant_id));
    expect(variants.size).toBe(1);
    const [variant] = [...variants];
    // later sessions: other attributes, even none, keep the sticky variant
    for (const attributes of [{ country: 'US' }, {}, { country: 'BR' }]) {
      const r = await ok(resolve(mm.test, { customer_id: id, attributes }));
      expect(r.experiment.variant_id).toBe(variant);
      expect(r.offering.id).toBe(first[0].offering.id);
    }
  });

  it('buckets the canonical id however it is spelled, and enrols nobody for an unknown customer', async () => {
    const id = await customer(mm.test);
    const upper = await ok(resolve(mm.test, { customer_id: id.toUpperCase(), attributes: { country: 'BR' } }));
    const want = expectedVariant(experiment.id, id, experiment.variants);
    expect([upper.customer_id, upper.experiment.variant_id]).toEqual([id, want.id]);
    const visitors = async () =>
      (await ok(mm.test.get(`/experiments/${experiment.id}/results`))).variants.reduce(
        (n: number, v: any) => n + v.visitors,
        0,
      );
    const before = await visitors();
    const ghosts = await Promise.all(
      [unknownId(), unknownId(), 'nope'].map((g) =>
        resolve(mm.test, { customer_id: g, attributes: { country: 'IN' } }),
      ),
    );
    expect(ghosts.map((r) => [r.status, r.body.error.code, r.body.error.param])).toEqual(
      Array(3).fill([404, 'resource_not_found', 'customer_id']),
    );
    expect(await visitors()).toBe(before);
  });

  it('agrees with GraphQL resolveOffering', async () => {
    const id = await customer(mm.test);
    const rest = await ok(resolve(mm.test, { customer_id: id, attributes: { country: 'IN' } }));
    const query = `mutation($input: ResolveOfferingInput!) { resolveOffering(input: $input) { ${selectionOf(rest)} } }`;
    const gql = await mm.test.gql(query, { input: { customerId: id, attributes: { country: 'IN' } } });
    expect(gql.errors).toBeUndefined();
    expect(asRest(gql.data.resolveOffering)).toEqual(rest);
    // and without an experiment
    const other = await customer(mm.test);
    const plain = await ok(resolve(mm.test, { customer_id: other }));
    // (the selection of the answer with an experiment: a null field gives no selection of its own)
    const gqlPlain = await mm.test.gql(
      `mutation($id: ID!) { resolveOffering(input: { customerId: $id }) { ${selectionOf(rest)} } }`,
      { id: other },
    );
    expect(gqlPlain.errors).toBeUndefined();
    expect(asRest(gqlPlain.data.resolveOffering)).toEqual(plain);
    expect(plain.offering.id).toBe(current.offering.id);
    // the same errors
    const missing = await mm.test.gql(
      'mutation($id: ID!) { resolveOffering(input: { customerId: $id }) { customerId } }',
      { id: unknownId() },
    );
    expect(missing.errors![0].extensions).toMatchObject({
      code: 'resource_not_found',
      param: 'customer_id',
      http: { status: 404 },
    });
  });

  it('serves the current offering to its customers once the experiment stops', async () => {
    const id = await customer(mm.test);
    const during = await ok(resolve(mm.test, { customer_id: id, attributes: { country: 'IN' } }));
    expect(during.experiment).not.toBeNull();
    await ok(mm.test.post(`/experiments/${experiment.id}/stop`));
    const after = await ok(resolve(mm.test, { customer_id: id, attributes: { country: 'IN' } }));
    expect([after.offering.id, after.paywall.id, after.experiment]).toEqual([
      current.offering.id,
      current.paywall.id,
      null,
    ]);
    const newcomer = await customer(mm.test);
    const fresh = await ok(resolve(mm.test, { customer_id: newcomer, attributes: { country: 'IN' } }));
    expect([fresh.offering.id, fresh.experiment]).toEqual([current.offering.id, null]);
  });
});

/**
 * The GraphQL gateway (docs/api.md): parity with REST, query limits, validation codes, the merchant query,
 * key rolling, and the offline IDE.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildSchema, getIntrospectionQuery, parse, specifiedRules, validate } from 'graphql';
import { fromGraphQLError } from '../../src/core/errors';
import { armor } from '../../src/http/graphql';
import { request, TestMerchant, useHarness, sleep } from '../harness';
import { startProcessServer, ProcessServer } from '../harness/process';
import { expectNoLeak, gqlRequest } from '../harness/http';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR', gstin: '27AAPFU0939F1ZV' });
});

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
/** Enum-typed fields of the catalog: upper case in GraphQL, lower case in REST. */
const ENUM_FIELDS = new Set(['type', 'status', 'billingFrequency', 'trialEndAction', 'taxBehavior']);

/** A GraphQL object in REST terms: snake_case keys, enum values lower-cased (nothing else changes). */
function asRest(v: unknown, key?: string): unknown {
  if (Array.isArray(v)) return v.map((x) => asRest(x));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), asRest(x, k)]));
  }
  if (key && ENUM_FIELDS.has(key) && typeof v === 'string') {
    expect(v).toBe(v.toUpperCase());
    return v.toLowerCase();
  }
  return v;
}

const PRICE = 'id object livemode createdAt planId currency amount setupFee taxBehavior isDefault providerPriceIds';
const PLAN = `id object livemode createdAt productId name billingFrequency billingInterval trialPeriodDays trialEndAction maxCycles usageRates { id object livemode createdAt planId eventType currency unitAmountDecimal }`;
const PRODUCT = 'id object livemode createdAt name description type status productFamilyId updatedAt';

describe('REST / GraphQL parity', () => {
  it('creates through GraphQL and reads the same values through REST', async () => {
    const fam = await m.test.gql('mutation { createProductFamily(input: { name: "Fam" }) { id } }');
    const p = await m.test.gql(
      `mutation($input: CreateProductInput!) { createProduct(input: $input) { ${PRODUCT} plans { id } } }`,
      {
        input: {
          name: 'GQL Pro',
          description: 'from graphql',
          type: 'SUBSCRIPTION',
          productFamilyId: fam.data.createProductFamily.id,
        },
      },
    );
    expect(p.errors).toBeUndefined();
    const product = p.data.createProduct;
    expect(product).toMatchObject({
      object: 'product',
      type: 'SUBSCRIPTION',
      status: 'ACTIVE',
      livemode: false,
      plans: [],
    });

    const plan = await m.test.gql(
      `mutation($id: ID!) { createPlan(productId: $id, input: { name: "Yearly", billingFrequency: YEARLY, billingInterval: 2, trialPeriodDays: 14, trialEndAction: CANCEL_SUBSCRIPTION, maxCycles: 3 }) { ${PLAN} } }`,
      { id: product.id },
    );
    expect(plan.errors).toBeUndefined();
    const price = await m.test.gql(
      `mutation($id: ID!) { createPrice(planId: $id, input: { currency: "usd", amount: 12345, setupFee: 500 }) { ${PRICE} } }`,
      { id: plan.data.createPlan.id },
    );
    expect(price.errors).toBeUndefined();
    expect(price.data.createPrice).toMatchObject({
      currency: 'USD',
      amount: 12345,
      setupFee: 500,
      isDefault: true,
      object: 'price',
    });

    const restPrice = await m.test.get(`/prices/${price.data.createPrice.id}`);
    expect(restPrice.status).toBe(200);
    expect(restPrice.body).toEqual(asRest(price.data.createPrice));

    const restPlan = await m.test.get(`/plans/${plan.data.createPlan.id}`);
    expect(restPlan.body).toEqual(
      asRest({ ...plan.data.createPlan, prices: [price.data.createPrice], defaultPrice: price.data.createPrice }),
    );
    expect(restPlan.body).toMatchObject({
      billing_frequency: 'yearly',
      trial_end_action: 'cancel_subscription',
      max_cycles: 3,
    });

    const restProduct = await m.test.get(`/products/${product.id}`);
    const { plans: _plans, ...productFields } = product;
    const { prices: _prices, ...planFields } = restPlan.body;
    expect(restProduct.body).toEqual({ ...(asRest(productFields) as object), plans: [planFields] });
    expect(restProduct.body).toMatchObject({
      type: 'subscription',
      status: 'active',
      product_family_id: fam.data.createProductFamily.id,
    });
  });

  it('creates through REST and reads the same values through GraphQL', async () => {
    const p = await m.test.post('/products', { name: 'REST Basic', type: 'one_time', status: 'inactive' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'Once' });
    const price = await m.test.post(`/plans/${plan.body.id}/prices`, { currency: 'inr', amount: 999 });
    const g = await m.test.gql(
      `query($id: ID!) { product(id: $id) { ${PRODUCT} plans { ${PLAN} defaultPrice { ${PRICE} } } } }`,
      { id: p.body.id },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.product).toMatchObject({ type: 'ONE_TIME', status: 'INACTIVE' });
    expect(g.data.product.plans[0]).toMatchObject({ billingFrequency: null, trialEndAction: 'START_SUBSCRIPTION' });
    expect(asRest(g.data.product)).toEqual((await m.test.get(`/products/${p.body.id}`)).body);
    // field by field against the REST reads
    const restPlan = (await m.test.get(`/plans/${plan.body.id}`)).body;
    const { prices: _p, ...planNoPrices } = restPlan;
    expect(asRest(g.data.product.plans[0])).toEqual(planNoPrices);
    expect(asRest(g.data.product.plans[0].defaultPrice)).toEqual(price.body);
    const listed = await m.test.gql(`{ products(first: 100, status: INACTIVE) { edges { node { ${PRODUCT} } } } }`);
    const node = listed.data.products.edges.find((e: any) => e.node.id === p.body.id).node;
    const { plans: _x, ...restProductFields } = (await m.test.get(`/products/${p.body.id}`)).body;
    expect(asRest(node)).toEqual(restProductFields);
  });

  it('every REST list entry equals its GraphQL node', async () => {
    const rest = await m.test.get('/products?limit=20');
    const g = await m.test.gql(
      `{ products(first: 20) { edges { node { ${PRODUCT} plans { ${PLAN} defaultPrice { ${PRICE} } } } } } }`,
    );
    expect(rest.body.data.length).toBeGreaterThanOrEqual(2);
    expect(g.errors).toBeUndefined();
    expect(g.data.products.edges.map((e: any) => asRest(e.node))).toEqual(rest.body.data);
  });
});

describe('query limits', () => {
  const refused = async (query: string) => {
    const r = await gqlRequest(h.app.url, m.keys.test, query);
    expect(r.status).toBe(400);
    expect(r.body.data).toBeUndefined();
    expect(r.body.errors[0].extensions).toMatchObject({
      code: 'query_too_complex',
      type: 'invalid_request_error',
      http: { status: 400 },
    });
    expect(r.body.errors[0].extensions.requestId).toBe(r.headers.get('request-id'));
    expect(r.body.errors[0].message).toMatch(/limit|tokens/i);
    expectNoLeak(r.text);
    return r;
  };

  it('refuses more than 20 aliases; 20 pass', async () => {
    const r = await refused(`{ ${Array.from({ length: 21 }, (_, i) => `a${i}: merchant { id }`).join(' ')} }`);
    expect(r.body.errors[0].message).toMatch(/Aliases limit of 20/);
    const ok = await m.test.gql(`{ ${Array.from({ length: 20 }, (_, i) => `a${i}: merchant { id }`).join(' ')} }`);
    expect(ok.errors).toBeUndefined();
  });

  it('refuses an over-cost query', async () => {
    const heavy = Array.from(
      { length: 20 },
      (_, i) =>
        `a${i}: products(first: 100) { edges { node { id name plans { id name prices { id amount currency } defaultPrice { id amount } } } } }`,
    ).join(' ');
    const r = await refused(`{ ${heavy} }`);
    expect(r.body.errors[0].message).toMatch(/Cost limit/i);
  });

  it('refuses a query deeper than 10 levels (the configured rule, on a schema with a cycle)', () => {
    // The catalog has no cycle, so no query over it gets past depth 6: check the service's own rule set instead.
    const schema = buildSchema('type Node { id: ID child: Node } type Query { node: Node }');
    const rules = armor.protect().validationRules ?? [];
    const nested = (n: number) => `{ node { ${'child { '.repeat(n)}id${' }'.repeat(n)} } }`;
    const errs = (q: string) => validate(schema, parse(q), [...specifiedRules, ...rules]);
    expect(errs(nested(8))).toEqual([]);
    const deep = errs(nested(12));
    expect(deep.length).toBeGreaterThan(0);
    expect(fromGraphQLError(deep[0])).toMatchObject({ code: 'query_too_complex' });
  });

  it("accepts the deepest catalog query and the IDE's introspection query", async () => {
    const frag = 'fragment P on Product { plans { prices { id } defaultPrice { id } } }';
    const ok = await m.test.gql(`{ products(first: 100) { edges { node { ...P } } } } ${frag}`);
    expect(ok.errors).toBeUndefined();
    const intro = await gqlRequest(h.app.url, m.keys.test, getIntrospectionQuery());
    expect(intro.status).toBe(200);
    expect(intro.body.errors).toBeUndefined();
    expect(intro.body.data.__schema.queryType.name).toBe('Query');
  });

  it('limits introspection depth too: a 400-deep ofType chain is refused, the full IDE query with every option passes', async () => {
    const chain = (n: number) =>
      `{ __schema { types { fields { type { ${'ofType { '.repeat(n)}name${' }'.repeat(n)} } } } } }`;
    const r = await refused(chain(400));
    expect(r.body.errors[0].message).toMatch(/Introspection depth limit of 20/);
    // Through a fragment, and by __type as well.
    await refused(
      `{ __type(name: "Query") { ...F } } fragment F on __Type { ${'ofType { '.repeat(30)}name${' }'.repeat(30)} }`,
    );
    const full = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const ok = await gqlRequest(h.app.url, m.keys.test, full);
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    expect((await gqlRequest(h.app.url, m.keys.test, chain(10))).body.errors).toBeUndefined();
  });

  it('refuses more than 20 directives', async () => {
    const r = await refused(
      `{ merchant { id ${Array.from({ length: 25 }, (_, i) => `a${i}: name @include(if: true)`).join(' ')} } }`,
    );
    expect(r.body.errors.map((e: any) => e.extensions.code)).toContain('query_too_complex');
  });

  it('refuses a query of more than 5000 tokens with a 400, not a 500', async () => {
    const r = await refused(`{ merchant { ${Array.from({ length: 5001 }, () => 'id').join(' ')} } }`);
    expect(r.body.errors[0].message).toMatch(/5000 tokens/);
  });

  it('a syntax error is a 400 parameter_invalid, not a 500', async () => {
    for (const q of ['{ merchant { ', '}', 'query(', '{ merchant { id } } }']) {
      const r = await gqlRequest(h.app.url, m.keys.test, q);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', http: { status: 400 } });
      expect(r.body.errors[0].extensions.requestId).toBe(r.headers.get('request-id'));
    }
  });

  it('a missing or non-string query is a 400', async () => {
    for (const body of [{}, { query: 5 }, { query: '' }, { variables: {} }]) {
      const r = await request(`${h.app.url}/graphql`, { key: m.keys.test, body });
      expect(r.status).toBe(400);
      expectNoLeak(r.text);
    }
  });
});

describe('validation errors carry the API error codes', () => {
  const CREATE = 'mutation($input: CreateProductInput!) { createProduct(input: $input) { id } }';
  const cases: [string, string, Record<string, unknown> | undefined, string, string | null][] = [
    ['missing field (variables)', CREATE, { input: { type: 'ONE_TIME' } }, 'parameter_missing', 'name'],
    [
      'missing field (inline)',
      'mutation { createProduct(input: { type: ONE_TIME }) { id } }',
      undefined,
      'parameter_missing',
      'name',
    ],
    ['missing variable', CREATE, undefined, 'parameter_missing', 'input'],
    [
      'unknown field (variables)',
      CREATE,
      { input: { name: 'x', type: 'ONE_TIME', bogusField: 1 } },
      'parameter_unknown',
      'bogus_field',
    ],
    [
      'unknown field (inline)',
      'mutation { createProduct(input: { name: "x", type: ONE_TIME, bogusField: 1 }) { id } }',
      undefined,
      'parameter_unknown',
      'bogus_field',
    ],
    ['invalid enum (variables)', CREATE, { input: { name: 'x', type: 'one_time' } }, 'parameter_invalid', 'type'],
    ['empty name (variables)', CREATE, { input: { name: '', type: 'ONE_TIME' } }, 'parameter_invalid', 'name'],
    [
      'empty name (inline)',
      'mutation { createProduct(input: { name: "", type: ONE_TIME }) { id } }',
      undefined,
      'parameter_invalid',
      'name',
    ],
    ['wrong scalar type', CREATE, { input: { name: 5, type: 'ONE_TIME' } }, 'parameter_invalid', 'name'],
    [
      'negative amount',
      'mutation($id: ID!) { createPrice(planId: $id, input: { currency: "INR", amount: -1 }) { id } }',
      { id: '01900000-0000-7000-8000-000000000000' },
      'parameter_invalid',
      'amount',
    ],
    [
      'bad currency',
      'mutation { createProductFamily(input: { name: "" }) { id } }',
      undefined,
      'parameter_invalid',
      'name',
    ],
    ['unknown root field', '{ nope }', undefined, 'parameter_invalid', null],
    ['unknown argument', '{ merchant(x: 1) { id } }', undefined, 'parameter_invalid', null],
  ];

  it.each(cases)('%s', async (_name, query, variables, code, param) => {
    const before = (await m.test.gql('{ products { totalCount } }')).data.products.totalCount;
    const r = await gqlRequest(h.app.url, m.keys.test, query, variables);
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0].extensions).toMatchObject({
      code,
      param,
      type: 'invalid_request_error',
      http: { status: 400 },
    });
    expect(r.body.data ?? null).toBeNull();
    expect([200, 400]).toContain(r.status);
    expectNoLeak(r.text);
    expect((await m.test.gql('{ products { totalCount } }')).data.products.totalCount).toBe(before);
  });

  it('the same mistakes answer the same codes and params through REST', async () => {
    const rest = await m.test.post('/products', { type: 'one_time' });
    const gql = await gqlRequest(h.app.url, m.keys.test, CREATE, { input: { type: 'ONE_TIME' } });
    expect(rest.body.error).toMatchObject({
      code: gql.body.errors[0].extensions.code,
      param: gql.body.errors[0].extensions.param,
    });
    const rest2 = await m.test.post('/products', { name: 'x', type: 'one_time', bogus_field: 1 });
    const gql2 = await gqlRequest(h.app.url, m.keys.test, CREATE, {
      input: { name: 'x', type: 'ONE_TIME', bogusField: 1 },
    });
    expect(rest2.body.error).toMatchObject({
      code: gql2.body.errors[0].extensions.code,
      param: gql2.body.errors[0].extensions.param,
    });
  });
});

describe('merchant', () => {
  it("answers the key's merchant, the same in both modes", async () => {
    const q = '{ merchant { id object name gstin stateCode reportingCurrency rateLimitPerSecond createdAt } }';
    const test = await m.test.gql(q);
    const live = await m.live.gql(q);
    expect(test.errors).toBeUndefined();
    expect(test.data.merchant).toMatchObject({
      id: m.id,
      object: 'merchant',
      gstin: '27AAPFU0939F1ZV',
      stateCode: '27',
      reportingCurrency: 'INR',
      rateLimitPerSecond: null,
    });
    expect(test.data.merchant.createdAt).toMatch(/Z$/);
    expect(live.data).toEqual(test.data);
    const other = await h.merchant({ rate_limit_per_second: 7 });
    const o = await other.test.gql(q);
    expect(o.data.merchant).toMatchObject({ id: other.id, rateLimitPerSecond: 7 });
    expect(o.data.merchant.id).not.toBe(m.id);
  });

  it('exposes no key material', async () => {
    const r = await gqlRequest(h.app.url, m.keys.test, '{ merchant { apiKeys { test } } }');
    expect(r.status).toBe(400);
    expect(r.text).not.toContain(m.keys.test);
  });
});

describe('rollApiKey', () => {
  const ROLL =
    'mutation($g: Int) { rollApiKey(graceSeconds: $g) { object secretKey mode last4 previousKeyExpiresAt } }';
  const works = async (key: string) => (await request(`${h.app.url}/v1/products`, { key })).status;
  const gqlWorks = async (key: string) => (await gqlRequest(h.app.url, key, '{ merchant { id } }')).status;

  it('graceSeconds 0: the new key works and the old one stops at once', async () => {
    const x = await h.merchant();
    expect(await works(x.keys.test)).toBe(200);
    const before = Date.now();
    const r = await x.test.gql(ROLL, { g: 0 });
    expect(r.errors).toBeUndefined();
    const rolled = r.data.rollApiKey;
    expect(rolled).toMatchObject({ object: 'api_key', mode: 'test' });
    expect(rolled.secretKey).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);
    expect(rolled.secretKey).not.toBe(x.keys.test);
    expect(rolled.last4).toBe(rolled.secretKey.slice(-4));
    expect(Math.abs(Date.parse(rolled.previousKeyExpiresAt) - before)).toBeLessThan(5000);
    expect(await works(x.keys.test)).toBe(401);
    expect(await gqlWorks(x.keys.test)).toBe(401);
    expect(await works(rolled.secretKey)).toBe(200);
    expect(await gqlWorks(rolled.secretKey)).toBe(200);
    // the new key is the same merchant and mode: it sees what the old one created
    expect(await works(x.keys.live)).toBe(200);
    const who = await gqlRequest(h.app.url, rolled.secretKey, '{ merchant { id } }');
    expect(who.body.data.merchant.id).toBe(x.id);
  });

  it('a grace period keeps the old key working until it ends', async () => {
    const x = await h.merchant();
    const p = await x.test.post('/products', { name: 'Kept', type: 'one_time' });
    const r = await x.test.gql(ROLL, { g: 2 });
    const rolled = r.data.rollApiKey;
    const expires = Date.parse(rolled.previousKeyExpiresAt);
    expect(expires - Date.now()).toBeGreaterThan(500);
    expect(expires - Date.now()).toBeLessThanOrEqual(2000);
    expect(await works(x.keys.test)).toBe(200);
    expect(await works(rolled.secretKey)).toBe(200);
    const seen = await request(`${h.app.url}/v1/products/${p.body.id}`, { key: rolled.secretKey });
    expect(seen.status).toBe(200);
    await sleep(Math.max(0, expires - Date.now()) + 200);
    expect(await works(x.keys.test)).toBe(401);
    expect(await gqlWorks(x.keys.test)).toBe(401);
    expect(await works(rolled.secretKey)).toBe(200);
  });

  it('rolls only the mode of the key, and refuses a negative grace', async () => {
    const x = await h.merchant();
    const r = await x.live.gql(ROLL, {});
    expect(r.data.rollApiKey.secretKey).toMatch(/^sk_live_/);
    expect(r.data.rollApiKey.mode).toBe('live');
    expect(await works(x.keys.live)).toBe(401);
    expect(await works(x.keys.test)).toBe(200);
    const bad = await gqlRequest(h.app.url, x.keys.test, ROLL, { g: -1 });
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'grace_seconds' });
    expect(await works(x.keys.test)).toBe(200);
  });
});

describe('the IDE', () => {
  // The IDE's asset server loads its bundle with a dynamic import, which jest's VM cannot run: these requests go to
  // the same service started as a plain Node process on this test's database.
  let server: ProcessServer;
  beforeAll(async () => {
    server = await startProcessServer(h.app.databaseUrl);
  });
  afterAll(() => server?.stop());

  it('GET /graphql for a browser serves the IDE page, referencing only local assets', async () => {
    const page = await request(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const html = page.text;
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/(?:src|href)="\/\//); // protocol-relative: another host
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g), ...html.matchAll(/from "([^"]+)"/g)].map((x) => x[1]);
    const staticPath = /"staticPath":\s*"([^"]+)"/.exec(html)?.[1];
    expect(staticPath).toBe('/graphql-ide/');
    const workers = [...html.matchAll(/worker\("([^"]+)"\)/g)].map((x) => staticPath + x[1]);
    const urls = [...new Set([...refs, ...workers])];
    expect(urls).toEqual(
      expect.arrayContaining(['/graphql-ide/ruru.js', '/graphql-ide/ruru.css', '/graphql-ide/jsonWorker.js']),
    );
    for (const u of urls) {
      const abs = new URL(u, `${server.url}/graphql`);
      expect(abs.origin).toBe(server.url);
      const r = await fetch(abs);
      expect({ u, status: r.status }).toEqual({ u, status: 200 });
      expect(r.headers.get('content-type')).toMatch(/javascript|css/);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
  });

  it('serves every file of the IDE bundle (the chunks, styles, font and workers the page loads at run time)', async () => {
    const dir = path.resolve(__dirname, '../../node_modules/ruru/static');
    const files = fs.readdirSync(dir).filter((f) => !f.endsWith('.map') && !f.endsWith('.txt'));
    expect(files.length).toBeGreaterThan(10);
    const missing: string[] = [];
    for (let i = 0; i < files.length; i += 16) {
      await Promise.all(
        files.slice(i, i + 16).map(async (f) => {
          const r = await fetch(`${server.url}/graphql-ide/${f}`);
          await r.arrayBuffer();
          if (r.status !== 200) missing.push(`${f}: ${r.status}`);
        }),
      );
    }
    expect(missing).toEqual([]);
    // and the main bundle does not fetch code or styles from elsewhere
    const main = await (await fetch(`${server.url}/graphql-ide/ruru.js`)).text();
    expect(main).not.toMatch(/import\(\s*["'`]https?:/);
    expect(main).not.toMatch(/(?:cdn\.jsdelivr|unpkg\.com|cdnjs|fonts\.googleapis)/);
  });

  it('an unknown IDE asset is a 404, not the page', async () => {
    const r = await fetch(`${server.url}/graphql-ide/nope.js`);
    expect(r.status).toBe(404);
  });

  it('API clients still get GraphQL at GET /graphql', async () => {
    const r = await request(`${h.app.url}/graphql?query=${encodeURIComponent('{ merchant { id } }')}`, {
      key: m.keys.test,
      headers: { accept: 'application/json', 'apollo-require-preflight': 'true' },
    });
    expect(r.status).toBe(200);
    expect(r.body.data.merchant.id).toBe(m.id);
  });
});

import { v7 as uuidv7 } from 'uuid';
import { TestMerchant, useHarness } from '../harness';
import { errorFingerprint, gqlRequest, unknownId } from '../harness/http';
import { ok } from '../subscriptions/helpers';
import { createEntitlement, link, rnd } from './helpers';

/**
 * Entitlements as resources (docs/growth.md): create (lookup_key unique per merchant and mode, also under concurrent
 * creates), list, retrieve, link products (idempotent, also concurrently; bounded), validation that changes nothing,
 * tenancy on every read and write, and REST and GraphQL answering the same.
 */

const h = useHarness();
let a: TestMerchant;
let b: TestMerchant;

const product = async (m: TestMerchant, mode: 'test' | 'live' = 'test') =>
  ok(m[mode].post('/products', { name: `P ${rnd()}`, type: 'subscription' }), 201);

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
});

async function listAll(m: TestMerchant, mode: 'test' | 'live' = 'test'): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await ok(m[mode].get(`/entitlements?limit=100${cursor ? `&cursor=${cursor}` : ''}`));
    expect(page.object).toBe('list');
    all.push(...page.data);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return all;
}

describe('create, retrieve, list', () => {
  it('creates with 201 and answers the documented fields; retrieve and list show the same object', async () => {
    const key = `premium.v2:${rnd()}`;
    const e = await ok(
      a.test.post('/entitlements', { lookup_key: key, name: '  Premium  ', description: 'All premium features' }),
      201,
    );
    expect(e).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'entitlement',
      lookup_key: key,
      name: 'Premium',
      description: 'All premium features',
      product_ids: [],
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(await ok(a.test.get(`/entitlements/${e.id}`))).toEqual(e);
    const list = await ok(a.test.get('/entitlements?limit=1'));
    expect(list).toEqual({
      object: 'list',
      data: [e],
      has_more: expect.any(Boolean),
      next_cursor: list.has_more ? expect.any(String) : null,
    });
  });

  it('lists newest first, page by page', async () => {
    const m = await h.merchant();
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createEntitlement(m.test, { lookup_key: `k${i}` }));
    const first = await ok(m.test.get('/entitlements?limit=2'));
    expect(first.data.map((e: any) => e.lookup_key)).toEqual(['k4', 'k3']);
    expect(first.has_more).toBe(true);
    const second = await ok(m.test.get(`/entitlements?limit=2&cursor=${first.next_cursor}`));
    expect(second.data.map((e: any) => e.lookup_key)).toEqual(['k2', 'k1']);
    expect((await listAll(m)).map((e) => e.id)).toEqual(made.reverse().map((e) => e.id));
    expect((await m.test.get('/entitlements?limit=0')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
    });
    expect((await m.test.get('/entitlements?cursor=nope')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'cursor',
    });
  });

  it('GraphQL: createEntitlement, entitlement(id) and the entitlements connection answer what REST answers', async () => {
    const p = await product(a);
    const created = await a.test.gql(
      `mutation($input: CreateEntitlementInput!) { createEntitlement(input: $input) { id object lookupKey name description productIds livemode createdAt } }`,
      { input: { lookupKey: `gql_${rnd()}`, name: 'From GraphQL' } },
    );
    expect(created.errors).toBeUndefined();
    const id = created.data.createEntitlement.id;
    const linked = await a.test.gql(
      `mutation($id: ID!, $input: LinkEntitlementProductsInput!) { linkEntitlementProducts(id: $id, input: $input) { id productIds } }`,
      { id, input: { productIds: [p.id] } },
    );
    expect(linked.data.linkEntitlementProducts).toEqual({ id, productIds: [p.id] });
    const rest = await ok(a.test.get(`/entitlements/${id}`));
    const gql = (
      await a.test.gql(
        `query($id: ID!) { entitlement(id: $id) { id object lookupKey name description productIds livemode createdAt } }`,
        { id },
      )
    ).data.entitlement;
    expect(gql).toEqual({
      id: rest.id,
      object: rest.object,
      lookupKey: rest.lookup_key,
      name: rest.name,
      description: rest.description,
      productIds: rest.product_ids,
      livemode: rest.livemode,
      createdAt: rest.created_at,
    });
    const conn = await a.test.gql(
      `{ entitlements(first: 100) { edges { cursor node { id productIds } } pageInfo { hasNextPage endCursor } totalCount } }`,
    );
    const restAll = await listAll(a);
    expect(conn.data.entitlements.edges.map((e: any) => e.node)).toEqual(
      restAll.map((e) => ({ id: e.id, productIds: e.product_ids })),
    );
    expect(conn.data.entitlements.totalCount).toBe(restAll.length);
  });
});

describe('lookup_key is unique per merchant and mode', () => {
  it('answers 409 lookup_key_exists to a second create, and allows the key in the other mode and to another merchant', async () => {
    const key = `dup_${rnd()}`;
    await createEntitlement(a.test, { lookup_key: key });
    const again = await a.test.post('/entitlements', { lookup_key: key, name: 'Again' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'lookup_key_exists',
      param: 'lookup_key',
    });
    expect(again.body.error.message).toContain(key);
    // Case-sensitive, like Stripe's lookup keys.
    await createEntitlement(a.test, { lookup_key: key.toUpperCase() });
    await createEntitlement(a.live, { lookup_key: key });
    await createEntitlement(b.test, { lookup_key: key });
    const gql = await gqlRequest(
      h.app.url,
      a.keys.test,
      'mutation { createEntitlement(input: { lookupKey: "' + key + '", name: "x" }) { id } }',
    );
    expect(gql.body.errors[0].extensions).toMatchObject({
      code: 'lookup_key_exists',
      param: 'lookup_key',
      http: { status: 409 },
    });
  });

  it('creates exactly one of 12 concurrent creates with the same lookup_key; the others answer 409', async () => {
    const m = await h.merchant();
    const key = `race_${rnd()}`;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => m.test.post('/entitlements', { lookup_key: key, name: `Racer ${i}` })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(11);
    for (const r of refused) expect([r.status, r.body.error.code]).toEqual([409, 'lookup_key_exists']);
    const all = await listAll(m);
    expect(all.map((e) => e.lookup_key)).toEqual([key]);
  });
});

describe('validation: 400 with param, nothing created', () => {
  it.each([
    ['no lookup_key', 'parameter_missing', 'lookup_key', { name: 'x' }],
    ['no name', 'parameter_missing', 'name', { lookup_key: 'pro' }],
    ['an empty lookup_key', 'parameter_invalid', 'lookup_key', { lookup_key: '', name: 'x' }],
    ['a space in lookup_key', 'parameter_invalid', 'lookup_key', { lookup_key: 'has space', name: 'x' }],
    ['a non-ASCII lookup_key', 'parameter_invalid', 'lookup_key', { lookup_key: 'emoji✓', name: 'x' }],
    ['a lookup_key of 101 characters', 'parameter_invalid', 'lookup_key', { lookup_key: 'k'.repeat(101), name: 'x' }],
    [
      'a lookup_key of 100,000 characters',
      'parameter_invalid',
      'lookup_key',
      { lookup_key: 'k'.repeat(100_000), name: 'x' },
    ],
    ['a blank name', 'parameter_invalid', 'name', { lookup_key: 'pro', name: '   ' }],
    ['a name of 256 characters', 'parameter_invalid', 'name', { lookup_key: 'pro', name: 'n'.repeat(256) }],
    [
      'a description of 5,001 characters',
      'parameter_invalid',
      'description',
      { lookup_key: 'pro', name: 'x', description: 'd'.repeat(5001) },
    ],
    ['an unknown field', 'parameter_unknown', 'bogus_field', { lookup_key: 'pro', name: 'x', bogus_field: 1 }],
    [
      'product_ids (linked separately)',
      'parameter_unknown',
      'product_ids',
      { lookup_key: 'pro', name: 'x', product_ids: [] },
    ],
    ['a number as lookup_key', 'parameter_invalid', 'lookup_key', { lookup_key: 7, name: 'x' }],
  ])('%s -> %s on %s', async (_what, code, param, body) => {
    const m = await h.merchant();
    const r = await m.test.post('/entitlements', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(await listAll(m)).toEqual([]);
  });

  it('accepts the longest lookup_key, name and description', async () => {
    const e = await createEntitlement(a.test, {
      lookup_key: `${'k'.repeat(92)}${rnd()}`,
      name: 'n'.repeat(255),
      description: 'd'.repeat(5000),
    });
    expect(e.lookup_key).toHaveLength(100);
  });
});

describe('linking products', () => {
  it('links products of the same merchant and mode; linking again is idempotent and keeps the first order', async () => {
    const [p1, p2, p3] = [await product(a), await product(a), await product(a)];
    const e = await createEntitlement(a.test);
    expect((await link(a.test, e.id, [p2.id, p1.id])).product_ids).toEqual([p2.id, p1.id]);
    // Again, with one new product, a duplicate in the list and an upper-case spelling of a linked id.
    const again = await link(a.test, e.id, [p1.id.toUpperCase(), p3.id, p3.id, p2.id]);
    expect(again).toEqual({ ...e, product_ids: [p2.id, p1.id, p3.id] });
    expect((await ok(a.test.get(`/entitlements/${e.id}`))).product_ids).toEqual([p2.id, p1.id, p3.id]);
  });

  it('12 concurrent links of overlapping products leave each product linked once', async () => {
    const ps = await Promise.all(Array.from({ length: 4 }, () => product(a)));
    const e = await createEntitlement(a.test);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        a.test.post(`/entitlements/${e.id}/products`, { product_ids: [ps[i % 4].id, ps[(i + 1) % 4].id] }),
      ),
    );
    for (const r of answers) expect(r.status).toBe(200);
    const now = (await ok(a.test.get(`/entitlements/${e.id}`))).product_ids;
    expect([...now].sort()).toEqual(ps.map((p) => p.id).sort());
  });

  it('refuses products of another merchant, of the other mode, unknown or malformed: 404 naming the entry, nothing linked', async () => {
    const mine = await product(a);
    const e = await createEntitlement(a.test);
    const cases: [string, string][] = [
      [(await product(b)).id, 'another merchant'],
      [(await product(a, 'live')).id, 'the live mode'],
      [unknownId(), 'unknown'],
      ['not-a-uuid', 'malformed'],
    ];
    for (const [id] of cases) {
      const r = await a.test.post(`/entitlements/${e.id}/products`, { product_ids: [mine.id, id] });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'resource_not_found',
        param: 'product_ids[1]',
      });
    }
    // Another tenant's product answers exactly like an unknown one.
    const theirs = await a.test.post(`/entitlements/${e.id}/products`, { product_ids: [cases[0][0]] });
    const ghost = unknownId();
    const none = await a.test.post(`/entitlements/${e.id}/products`, { product_ids: [ghost] });
    expect(errorFingerprint(theirs, cases[0][0])).toEqual(errorFingerprint(none, ghost));
    expect((await ok(a.test.get(`/entitlements/${e.id}`))).product_ids).toEqual([]);
  });

  it.each([
    ['an empty list', 'parameter_invalid', 'product_ids', { product_ids: [] }],
    ['no product_ids', 'parameter_missing', 'product_ids', {}],
    ['101 ids', 'parameter_invalid', 'product_ids', { product_ids: Array.from({ length: 101 }, () => uuidv7()) }],
    ['an id of 101 characters', 'parameter_invalid', 'product_ids', { product_ids: ['x'.repeat(101)] }],
    ['an unknown field', 'parameter_unknown', 'extra', { product_ids: [], extra: true }],
  ])('%s -> 400 %s on %s', async (_what, code, param, body) => {
    const p = await product(a);
    const e = await createEntitlement(a.test);
    await link(a.test, e.id, [p.id]);
    const r = await a.test.post(`/entitlements/${e.id}/products`, body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code, param });
    expect((await ok(a.test.get(`/entitlements/${e.id}`))).product_ids).toEqual([p.id]);
  });

  it('links at most 1,000 products to one entitlement, also when links race', async () => {
    const m = await h.merchant();
    // 1,001 products, written straight into the test database (through the API this would take minutes).
    const conn = h.app.orm.em.getConnection();
    const rows = await conn.execute<{ id: string }[]>(
      `insert into products (id, created_at, updated_at, merchant_id, mode, name, type, status)
       select gen_random_uuid(), now(), now(), ?, 'test', 'Bulk ' || i, 'subscription', 'active' from generate_series(1, 1001) i returning id`,
      [m.id],
    );
    const ids = rows.map((r) => r.id);
    const e = await createEntitlement(m.test);
    // 11 requests of 91 new products each: 1,001 in all, so exactly one of them must be refused, whole.
    const answers = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        m.test.post(`/entitlements/${e.id}/products`, { product_ids: ids.slice(i * 91, i * 91 + 91) }),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    const refused = answers.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(1);
    expect(refused[0].body.error).toMatchObject({ code: 'parameter_invalid', param: 'product_ids' });
    expect((await ok(m.test.get(`/entitlements/${e.id}`))).product_ids).toHaveLength(910);
  });
});

describe('tenancy', () => {
  it("answers 404 to another merchant's or mode's entitlement, exactly like an unknown id, and changes nothing", async () => {
    const p = await product(a);
    const e = await createEntitlement(a.test);
    for (const c of [b.test, b.live, a.live]) {
      const ghost = unknownId();
      for (const [method, path, body] of [
        ['get', `/entitlements/{id}`, undefined],
        ['post', `/entitlements/{id}/products`, { product_ids: [p.id] }],
      ] as const) {
        const theirs =
          method === 'get' ? await c.get(path.replace('{id}', e.id)) : await c.post(path.replace('{id}', e.id), body);
        const none =
          method === 'get' ? await c.get(path.replace('{id}', ghost)) : await c.post(path.replace('{id}', ghost), body);
        expect(theirs.status).toBe(404);
        expect(theirs.body.error).toMatchObject({ code: 'resource_not_found' });
        expect(errorFingerprint(theirs, e.id)).toEqual(errorFingerprint(none, ghost));
      }
      const list = await c.get('/entitlements?limit=100');
      expect(list.text).not.toContain(e.id);
      const gql = await c.gql('query($id: ID!) { entitlement(id: $id) { id } }', { id: e.id });
      expect(gql.errors![0].extensions.code).toBe('resource_not_found');
    }
    expect((await ok(a.test.get(`/entitlements/${e.id}`))).product_ids).toEqual([]);
  });

  it('lists show each tenant only its own entitlements', async () => {
    const m = await h.merchant();
    const t = await createEntitlement(m.test, { lookup_key: 'same' });
    const l = await createEntitlement(m.live, { lookup_key: 'same' });
    expect((await listAll(m)).map((e) => e.id)).toEqual([t.id]);
    expect((await listAll(m, 'live')).map((e) => [e.id, e.livemode])).toEqual([[l.id, true]]);
  });
});

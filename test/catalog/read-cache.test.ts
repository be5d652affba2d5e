import { CatalogReadCache, ENTRY_OVERHEAD_BYTES } from '../../src/core/read-cache';
import { graphqlReadKey, restReadKey } from '../../src/modules/catalog/catalog-cache';
import { request, startTestApp, TestMerchant, useHarness } from '../harness';

/**
 * The catalog read cache is bounded by bytes (READ_CACHE_MB), keyed by the request as parsed (so spellings of one
 * request share one entry), and still serves only answers of the current catalog version.
 */

const KiB = 1024;
const M = '00000000-0000-0000-0000-000000000001';

describe('CatalogReadCache', () => {
  // These tests never ask for a version.
  const cache = (budget: number) => new CatalogReadCache(async () => '0', budget);

  const body = (n: number, fill = 'x') => fill.repeat(n);

  it('weighs each entry as its body, its key and a fixed overhead', () => {
    const c = cache(64 * KiB);
    c.set('k1', '1', body(1000));
    expect(c.bytes).toBe(1000 + 2 + ENTRY_OVERHEAD_BYTES);
    c.set('k2', '1', Buffer.from('é'.repeat(100))); // bytes, not characters
    expect(c.bytes).toBe(1000 + 2 + ENTRY_OVERHEAD_BYTES + 200 + 2 + ENTRY_OVERHEAD_BYTES);
    expect(c.get('k2', '1')!.toString()).toBe('é'.repeat(100));
  });

  it('evicts the least recently used until the total is within the budget', () => {
    const c = cache(32 * KiB); // entries of ~3.4 KiB: nine fit, not ten
    const size = 3200;
    for (let i = 0; i < 9; i++) c.set(`k${i}`, '1', body(size, String(i)));
    expect(c.size).toBe(9);
    expect(c.get('k0', '1')).toBeDefined(); // k0 is now the most recently used; k1 the least
    c.set('k9', '1', body(size));
    expect(c.bytes).toBeLessThanOrEqual(32 * KiB);
    expect(c.has('k1')).toBe(false);
    expect(c.has('k0')).toBe(true);
    c.set('k10', '1', body(size));
    expect(c.has('k2')).toBe(false);
    expect([...Array(11).keys()].filter((i) => c.has(`k${i}`))).toEqual([0, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('does not keep an answer larger than an eighth of the budget', () => {
    const c = cache(80 * KiB);
    c.set('small', '1', body(1000));
    c.set('big', '1', body(10 * KiB)); // 10 KiB + overhead > 80 KiB / 8
    expect(c.has('big')).toBe(false);
    expect(c.has('small')).toBe(true);
    c.set('fits', '1', body(9 * KiB));
    expect(c.has('fits')).toBe(true);
  });

  it('stays within its budget whatever is stored', () => {
    const budget = 256 * KiB;
    const c = cache(budget);
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      c.set(`key-${Math.floor(rand() * 500)}`, '1', body(Math.floor(rand() * 40 * KiB)));
      expect(c.bytes).toBeLessThanOrEqual(budget);
    }
    expect(c.size).toBeGreaterThan(10);
  });

  it('answers only at the version the entry was computed at, and never goes back to an older one', () => {
    const c = cache(64 * KiB);
    c.set('k', '5', 'at five');
    expect(c.get('k', '5')?.toString()).toBe('at five');
    expect(c.get('k', '6')).toBeUndefined(); // a write happened since
    expect(c.get('k', '4')).toBeUndefined();
    c.set('k', '6', 'at six');
    c.set('k', '5', 'late, at five'); // a slower request that read the older version
    expect(c.get('k', '6')?.toString()).toBe('at six');
    expect(c.get('k', '5')).toBeUndefined();
    c.set('k', '10', 'at ten'); // compared as numbers, not text
    expect(c.get('k', '10')?.toString()).toBe('at ten');
  });

  it('is off at a budget of 0', async () => {
    const c = cache(0);
    expect(c.enabled).toBe(false);
    c.set('k', '1', 'x');
    expect(c.has('k')).toBe(false);
    let computed = 0;
    const compute = async () => [200, `n${++computed}`] as const;
    expect(await c.serve(M, 'test' as never, 'k', compute)).toEqual([200, 'n1']);
    expect(await c.serve(M, 'test' as never, 'k', compute)).toEqual([200, 'n2']);
    expect(c.bytes).toBe(0);
  });
});

describe('read keys', () => {
  const route = { method: 'get', path: '/products' };

  it('are the same for the same parsed variables in any order, and differ by tenant, route and value', () => {
    const a = restReadKey(M, 'test', route, () => ({ first: 100, after: 'c1' }));
    expect(restReadKey(M, 'test', route, () => ({ after: 'c1', first: 100 }))).toBe(a);
    expect(restReadKey(M, 'live', route, () => ({ first: 100, after: 'c1' }))).not.toBe(a);
    expect(
      restReadKey('00000000-0000-0000-0000-000000000002', 'test', route, () => ({ first: 100, after: 'c1' })),
    ).not.toBe(a);
    expect(
      restReadKey(M, 'test', { method: 'get', path: '/product-families' }, () => ({ first: 100, after: 'c1' })),
    ).not.toBe(a);
    expect(restReadKey(M, 'test', route, () => ({ first: 99, after: 'c1' }))).not.toBe(a);
    expect(a!.startsWith(`${M}:test:`)).toBe(true);
    expect(a!.length).toBeLessThan(120); // hashed: short whatever the request's size
  });

  it('are null (the read is computed, uncached) when the variables cannot be parsed', () => {
    expect(
      restReadKey(M, 'test', route, () => {
        throw new Error('Received unknown parameter: x');
      }),
    ).toBeNull();
  });

  it('GraphQL: same operation, text and variables in another key order are one key; another text is not', () => {
    const q = 'query P($first: Int, $after: String) { products(first: $first, after: $after) { totalCount } }';
    const a = graphqlReadKey(M, 'test', 'P', q, { first: 5, after: 'x', filter: { b: 1, a: [1, { d: 2, c: 3 }] } });
    expect(graphqlReadKey(M, 'test', 'P', q, { filter: { a: [1, { c: 3, d: 2 }], b: 1 }, after: 'x', first: 5 })).toBe(
      a,
    );
    expect(graphqlReadKey(M, 'test', null, q, {})).toBe(graphqlReadKey(M, 'test', undefined, q, undefined));
    expect(
      graphqlReadKey(M, 'test', 'Q', q, { first: 5, after: 'x', filter: { b: 1, a: [1, { d: 2, c: 3 }] } }),
    ).not.toBe(a);
    expect(
      graphqlReadKey(M, 'test', 'P', `${q} `, { first: 5, after: 'x', filter: { b: 1, a: [1, { d: 2, c: 3 }] } }),
    ).not.toBe(a);
    // The parts cannot run into each other.
    expect(graphqlReadKey(M, 'test', 'P', '{ a }', { x: 1 })).not.toBe(
      graphqlReadKey(M, 'test', 'P', '{ a }\n{"x":1}', {}),
    );
  });

  it('do not overflow the stack on variables nested 100,000 deep (that read is simply not cached)', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? { a: deep } : [deep];
    expect(graphqlReadKey(M, 'test', null, '{ products { totalCount } }', { x: deep })).toBeNull();
    expect(graphqlReadKey(M, 'test', deep, '{ products { totalCount } }', {})).toBeNull();
    expect(restReadKey(M, 'test', route, () => ({ x: deep as never }))).toBeNull();
  });
});

describe('catalog read cache through HTTP', () => {
  const budget = 1024 * KiB;
  const h = useHarness({ readCacheBytes: budget });
  let m: TestMerchant;
  let productIds: string[];

  beforeAll(async () => {
    m = await h.merchant({ reporting_currency: 'INR' });
    productIds = [];
    for (let i = 0; i < 20; i++) {
      // Long descriptions: a page of 20 is ~100 KB, just under an eighth of the budget.
      const p = await m.test.post('/products', {
        name: `Long ${i}`,
        description: `${i} `.padEnd(5000, 'lorem ipsum '),
        type: 'subscription',
      });
      expect(p.status).toBe(201);
      productIds.push(p.body.id);
    }
  });

  const cache = () => h.app.app.services.catalogCache;

  it('keys REST reads by the parsed parameters: spellings of one request are one entry, served without SQL', async () => {
    const first = await m.test.get('/products?limit=20');
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(20);
    const entries = cache().size;
    h.app.sql.reset();
    for (const qs of ['limit=20', 'limit=020', 'limit=0020', 'limit=00000000020']) {
      const r = await m.test.get(`/products?${qs}`);
      expect(r.status).toBe(200);
      expect(r.text).toBe(first.text);
    }
    expect(h.app.sql.count).toBe(0); // every one a hit (the version check runs on the cache's own connections)
    expect(cache().size).toBe(entries);

    const cursor = (await m.test.get('/products?limit=5')).body.next_cursor;
    expect(cursor).toEqual(expect.any(String));
    const a = await m.test.get(`/products?limit=5&cursor=${encodeURIComponent(cursor)}`);
    const withPage = cache().size;
    h.app.sql.reset();
    const b = await m.test.get(`/products?cursor=${encodeURIComponent(cursor)}&limit=05`);
    expect(b.text).toBe(a.text);
    expect(h.app.sql.count).toBe(0);
    expect(cache().size).toBe(withPage);
  });

  it('does not cache an error, and a bad spelling is still refused', async () => {
    const before = cache().size;
    expect((await m.test.get('/products?limit=0')).status).toBe(400);
    expect((await m.test.get('/products?limit=abc')).status).toBe(400);
    expect((await m.test.get('/products?bogus=1')).status).toBe(400);
    expect(cache().size).toBe(before);
  });

  it('keys GraphQL reads by operation, text and canonical variables', async () => {
    const q =
      'query Page($first: Int, $after: String) { products(first: $first, after: $after) { totalCount edges { node { id description } } } }';
    const r1 = await request(`${h.app.url}/graphql`, {
      key: m.keys.test,
      body: { query: q, operationName: 'Page', variables: { first: 3, after: null } },
    });
    expect(r1.status).toBe(200);
    expect(r1.body.data.products.edges).toHaveLength(3);
    const entries = cache().size;
    h.app.sql.reset();
    const r2 = await request(`${h.app.url}/graphql`, {
      key: m.keys.test,
      body: { variables: { after: null, first: 3 }, operationName: 'Page', query: q },
    });
    expect(r2.text).toBe(r1.text);
    expect(h.app.sql.count).toBe(0);
    expect(cache().size).toBe(entries);
  });

  it('stays within its byte budget under many large pages and spellings', async () => {
    const spellings = (n: number) => [`limit=${n}`, `limit=0${n}`, `limit=00${n}`];
    let pages = 0;
    for (let limit = 1; limit <= 20; limit++) {
      for (const qs of spellings(limit)) {
        const r = await m.test.get(`/products?${qs}`);
        expect(r.status).toBe(200);
        expect(cache().bytes).toBeLessThanOrEqual(budget);
      }
      pages++;
    }
    // Pages after each product as a cursor, in both parameter orders.
    const all = (await m.test.get('/products?limit=100')).body.data as { id: string }[];
    for (let i = 0; i < all.length - 1; i++) {
      const cursor = (await m.test.get(`/products?limit=${i + 1}`)).body.next_cursor as string;
      for (const qs of [`limit=20&cursor=${cursor}`, `cursor=${cursor}&limit=020`]) {
        const r = await m.test.get(`/products?${qs}`);
        expect(r.status).toBe(200);
        expect(r.body.data[0].id).toBe(all[i + 1].id);
        expect(cache().bytes).toBeLessThanOrEqual(budget);
      }
      pages++;
    }
    expect(pages).toBeGreaterThan(30);
    // Far more was read than fits: the cache is full, not grown past its budget, and not emptied either.
    expect(cache().bytes).toBeGreaterThan(budget / 2);
    expect(cache().bytes).toBeLessThanOrEqual(budget);
    expect(cache().size).toBeLessThan(pages);
  });

  it('keeps the memory of cached answers within the budget after serving 16 times as much', async () => {
    // Measured on what the cache keeps alive (its Buffers' backing stores), not on the process's arrayBuffers, which
    // also hold sockets' and the driver's buffers and are freed by V8 on its own schedule (a flaky measure).
    let served = 0;
    for (let i = 0; i < 200; i++) {
      // 200 distinct query texts (extra spaces), each a full page of 20 long descriptions.
      const query = `{ products(first: 20) {${' '.repeat(i)} edges { node { id description } } } }`;
      const r = await request(`${h.app.url}/graphql`, { key: m.keys.test, body: { query } });
      expect(r.status).toBe(200);
      expect(r.body.data.products.edges).toHaveLength(20);
      served += r.text.length;
    }
    expect(served).toBeGreaterThan(16 * budget);
    expect(cache().bytes).toBeLessThanOrEqual(budget);
    expect(cache().retainedBytes).toBeGreaterThan(budget / 2); // full, so the bound below is a real one
    expect(cache().retainedBytes).toBeLessThanOrEqual(cache().bytes);
  });

  it('serves a write at once: the next read is computed again', async () => {
    const before = await m.test.get(`/products/${productIds[0]}`);
    expect(before.body.plans).toEqual([]);
    await m.test.post(`/products/${productIds[0]}/plans`, { name: 'M', billing_frequency: 'monthly' });
    const after = await m.test.get(`/products/${productIds[0]}`);
    expect(after.body.plans).toHaveLength(1);
    expect((await m.test.get(`/products/${productIds[0]}?`)).body.plans).toHaveLength(1);
  });

  it('with READ_CACHE_MB=0 answers every read fresh', async () => {
    const off = await startTestApp({ readCacheBytes: 0 });
    try {
      const mm = await off.createMerchant();
      await mm.test.post('/products', { name: 'P', type: 'subscription' });
      off.sql.reset();
      expect((await mm.test.get('/products')).body.data).toHaveLength(1);
      const once = off.sql.count;
      expect(once).toBeGreaterThan(0);
      expect((await mm.test.get('/products')).body.data).toHaveLength(1);
      expect(off.sql.count).toBe(2 * once);
      expect(off.app.services.catalogCache.bytes).toBe(0);
    } finally {
      await off.close();
    }
  });
});

describe('GraphQL operation selection', () => {
  const h = useHarness();
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
  });

  const post = (body: unknown) => request(`${h.app.url}/graphql`, { key: m.keys.test, body });
  const catalogTwo = 'query A { products { totalCount } } query B { productFamilies { totalCount } }';
  const mixedTwo = 'query A { products { totalCount } } query B { customers { totalCount } }';

  it.each([
    ['two catalog operations, no operationName', { query: catalogTwo }],
    ['two operations, no operationName', { query: mixedTwo }],
    ['two operations, operationName null', { query: catalogTwo, operationName: null }],
    ['an unknown operationName', { query: 'query A { products { totalCount } }', operationName: 'Nope' }],
    ['an unknown operationName of two', { query: catalogTwo, operationName: 'C' }],
  ])('%s: 400 with an API error, not 500', async (_label, body) => {
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.body.data ?? null).toBeNull();
    const e = r.body.errors[0];
    expect(e.message).toMatch(/operation name|Unknown operation named/i);
    expect(e.extensions).toMatchObject({ type: 'invalid_request_error', http: { status: 400 } });
    expect(e.extensions.code).not.toBe('internal_error');
  });

  it('a named operation of two is answered (and then served from the cache)', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await post({ query: catalogTwo, operationName: 'B' });
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ productFamilies: { totalCount: 0 } });
    }
  });
});

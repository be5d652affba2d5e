/**
 * Keyset pagination (docs/api.md): limit bounds, walking every page, the last page, empty lists,
 * foreign and malformed cursors, and the GraphQL connections the REST lists are made from.
 */
import { Client_, TestMerchant, useHarness } from '../harness';
import { gqlRequest } from '../harness/http';

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;
/** Merchant m's 45 test-mode products, in creation order (oldest first). */
const created: string[] = [];
const familyIds: string[] = [];
const otherIds: string[] = [];

beforeAll(async () => {
  m = await h.merchant();
  other = await h.merchant();
  // Sequential, so creation order is known; one in three is inactive (for the filter cases).
  for (let i = 0; i < 45; i++) {
    const r = await m.test.post('/products', {
      name: `P${i}`,
      type: 'one_time',
      status: i % 3 === 0 ? 'inactive' : 'active',
    });
    expect(r.status).toBe(201);
    created.push(r.body.id);
  }
  for (let i = 0; i < 10; i++) familyIds.push((await m.test.post('/product-families', { name: `F${i}` })).body.id);
  for (let i = 0; i < 5; i++)
    otherIds.push((await other.test.post('/products', { name: `O${i}`, type: 'one_time' })).body.id);
});

const newestFirst = (ids: string[]) => [...ids].reverse();

/** Follows next_cursor to the end; checks the envelope of every page. */
async function walk(c: Client_, path: string, limit?: number) {
  const pages: { ids: string[]; has_more: boolean; next_cursor: string | null }[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const qs = new URLSearchParams();
    if (limit !== undefined) qs.set('limit', String(limit));
    if (cursor) qs.set('cursor', cursor);
    const sep = path.includes('?') ? '&' : '?';
    const r = await c.get(`${path}${qs.size ? sep + qs.toString() : ''}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
    expect(r.body.object).toBe('list');
    pages.push({ ids: r.body.data.map((x: any) => x.id), has_more: r.body.has_more, next_cursor: r.body.next_cursor });
    if (r.body.has_more) {
      expect(typeof r.body.next_cursor).toBe('string');
      cursor = r.body.next_cursor;
    } else {
      expect(r.body.next_cursor).toBeNull();
      return pages;
    }
  }
  throw new Error('pagination did not end');
}

describe('limit', () => {
  it('defaults to 20', async () => {
    const r = await m.test.get('/products');
    expect(r.body.data.map((x: any) => x.id)).toEqual(newestFirst(created).slice(0, 20));
    expect(r.body.has_more).toBe(true);
    expect(typeof r.body.next_cursor).toBe('string');
  });

  it.each([1, 2, 44, 45, 46, 100])('accepts %i', async (limit) => {
    const r = await m.test.get(`/products?limit=${limit}`);
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id)).toEqual(newestFirst(created).slice(0, limit));
    expect(r.body.has_more).toBe(limit < 45);
    expect(r.body.next_cursor === null).toBe(limit >= 45);
  });

  it.each(['0', '101', '-1', '1000000', 'ten', '1.5', '', ' 5', '0x10', '5abc', 'null'])(
    'refuses limit=%p with 400 param limit',
    async (v) => {
      for (const path of ['/products', '/product-families']) {
        const r = await m.test.get(`${path}?limit=${encodeURIComponent(v)}`);
        expect(r.status).toBe(400);
        expect(r.body.error).toMatchObject({
          type: 'invalid_request_error',
          code: 'parameter_invalid',
          param: 'limit',
        });
      }
    },
  );

  it('refuses a repeated limit', async () => {
    const r = await m.test.get('/products?limit=5&limit=6');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
  });
});

describe('walking the pages', () => {
  it.each([1, 7, 20, 44, 100])('limit %i returns every record exactly once, newest first', async (limit) => {
    const pages = await walk(m.test, '/products', limit);
    const ids = pages.flatMap((p) => p.ids);
    expect(ids).toEqual(newestFirst(created));
    expect(pages).toHaveLength(Math.ceil(45 / limit));
    for (const p of pages.slice(0, -1)) {
      expect(p.ids).toHaveLength(limit);
      expect(p.has_more).toBe(true);
    }
    expect(pages[pages.length - 1]).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('an exact multiple of the page size ends without an empty page', async () => {
    for (const limit of [5, 9, 15, 45]) {
      const pages = await walk(m.test, '/products', limit);
      expect(pages).toHaveLength(45 / limit);
      expect(pages[pages.length - 1].ids).toHaveLength(limit);
      expect(pages.flatMap((p) => p.ids)).toEqual(newestFirst(created));
    }
    const fams = await walk(m.test, '/product-families', 5);
    expect(fams.map((p) => p.ids.length)).toEqual([5, 5]);
    expect(fams.flatMap((p) => p.ids)).toEqual(newestFirst(familyIds));
  });

  it('keeps the filter across pages', async () => {
    const inactive = created.filter((_, i) => i % 3 === 0);
    const pages = await walk(m.test, '/products?status=inactive', 4);
    expect(pages.flatMap((p) => p.ids)).toEqual(newestFirst(inactive));
    const active = await walk(m.test, '/products?status=active', 8);
    expect(active.flatMap((p) => p.ids)).toEqual(newestFirst(created.filter((_, i) => i % 3 !== 0)));
  });

  it('a record created while walking does not shift later pages (keyset, not offset)', async () => {
    const c = await h.merchant();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await c.test.post('/products', { name: `K${i}`, type: 'one_time' })).body.id);
    const first = await c.test.get('/products?limit=3');
    expect(first.body.data.map((x: any) => x.id)).toEqual(newestFirst(ids).slice(0, 3));
    await c.test.post('/products', { name: 'late', type: 'one_time' });
    const second = await c.test.get(`/products?limit=3&cursor=${first.body.next_cursor}`);
    expect(second.body.data.map((x: any) => x.id)).toEqual(newestFirst(ids).slice(3));
    expect(second.body).toMatchObject({ has_more: false, next_cursor: null });
  });
});

describe('empty lists', () => {
  it('answer an empty page with has_more false and no cursor', async () => {
    const fresh = await h.merchant();
    for (const c of [fresh.test, fresh.live, m.live]) {
      for (const path of ['/products', '/product-families', '/products?limit=1', '/products?status=inactive']) {
        const r = await c.get(path);
        expect(r.status).toBe(200);
        expect(r.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
      }
    }
    const none = await m.test.get('/products?type=subscription');
    expect(none.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
  });
});

describe('cursors', () => {
  it("a cursor of another merchant or another list is harmless: only the caller's records, never foreign ones", async () => {
    const theirs = await other.test.get('/products?limit=2');
    const foreignCursor = theirs.body.next_cursor;
    expect(typeof foreignCursor).toBe('string');
    const famCursor = (await m.test.get('/product-families?limit=3')).body.next_cursor;
    const liveCursor = (await m.test.get('/products?limit=3')).body.next_cursor;
    for (const [c, cursor, own] of [
      [m.test, foreignCursor, created],
      [m.test, famCursor, created],
      [other.test, liveCursor, otherIds],
      [m.live, liveCursor, []],
    ] as [Client_, string, string[]][]) {
      const r = await c.get(`/products?limit=100&cursor=${cursor}`);
      expect(r.status).toBe(200);
      const ids: string[] = r.body.data.map((x: any) => x.id);
      for (const id of ids) expect(own).toContain(id);
    }
    // m's own cursor in other's list: other's records only (none of m's)
    const r = await other.test.get(`/products?limit=100&cursor=${liveCursor}`);
    for (const id of r.body.data.map((x: any) => x.id)) expect(created).not.toContain(id);
  });

  it.each([
    'abc',
    '!!!!',
    'AAAA',
    Buffer.from('not-a-uuid').toString('base64url'),
    `${Buffer.from('01900000-0000-7000-8000-000000000000').toString('base64url')}==`, // a valid cursor, padded
    Buffer.from('01900000-0000-7000-8000-000000000000x').toString('base64url'),
    'x'.repeat(2000),
  ])('refuses the malformed cursor %p with 400 param cursor', async (cursor) => {
    const r = await m.test.get(`/products?cursor=${encodeURIComponent(cursor)}`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'cursor' });
    const f = await m.test.get(`/product-families?cursor=${encodeURIComponent(cursor)}`);
    expect(f.body.error).toMatchObject({ code: 'parameter_invalid', param: 'cursor' });
  });

  it('a well-formed cursor past the oldest record answers an empty last page', async () => {
    const oldest = (await walk(m.test, '/products', 100)).flatMap((p) => p.ids).pop()!;
    const cursor = Buffer.from(oldest).toString('base64url');
    const r = await m.test.get(`/products?cursor=${cursor}`);
    expect(r.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
  });
});

describe('GraphQL connections', () => {
  const Q = `query($first: Int, $after: String, $status: ProductStatus) {
    products(first: $first, after: $after, status: $status) {
      totalCount edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }`;

  it('walks with first/after; endCursor is the last edge cursor; totalCount is the whole list', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const r: any = await m.test.gql(Q, { first: 7, after });
      expect(r.errors).toBeUndefined();
      const conn: any = r.data.products;
      pages++;
      expect(conn.totalCount).toBe(45);
      seen.push(...conn.edges.map((e: any) => e.node.id));
      expect(conn.pageInfo.endCursor).toBe(conn.edges[conn.edges.length - 1].cursor);
      if (!conn.pageInfo.hasNextPage) break;
      expect(conn.edges).toHaveLength(7);
      after = conn.pageInfo.endCursor;
    }
    expect(pages).toBe(7);
    expect(seen).toEqual(newestFirst(created));
  });

  it('REST cursors and GraphQL cursors are the same', async () => {
    const rest = await m.test.get('/products?limit=5');
    const gql = await m.test.gql(Q, { first: 5 });
    expect(gql.data.products.pageInfo.endCursor).toBe(rest.body.next_cursor);
    const rest2 = await m.test.get(`/products?limit=5&cursor=${rest.body.next_cursor}`);
    const gql2 = await m.test.gql(Q, { first: 5, after: rest.body.next_cursor });
    expect(gql2.data.products.edges.map((e: any) => e.node.id)).toEqual(rest2.body.data.map((x: any) => x.id));
  });

  it('totalCount follows the filter; an empty connection has no endCursor', async () => {
    const r = await m.test.gql(Q, { first: 100, status: 'INACTIVE' });
    expect(r.data.products.totalCount).toBe(15);
    expect(r.data.products.edges).toHaveLength(15);
    const fresh = await h.merchant();
    const e = await fresh.test.gql(Q, {});
    expect(e.data.products).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('defaults first to 20 and refuses out-of-range first and malformed after', async () => {
    const r = await m.test.gql(Q, {});
    expect(r.data.products.edges).toHaveLength(20);
    expect(r.data.products.pageInfo.hasNextPage).toBe(true);
    for (const first of [0, 101, -1]) {
      const bad = await gqlRequest(h.app.url, m.keys.test, Q, { first });
      expect(bad.body.errors[0].extensions).toMatchObject({
        code: 'parameter_invalid',
        param: 'first',
        http: { status: 400 },
      });
    }
    const cur = await gqlRequest(h.app.url, m.keys.test, Q, { after: 'garbage' });
    expect(cur.body.errors[0].extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'after',
      http: { status: 400 },
    });
    const str = await gqlRequest(h.app.url, m.keys.test, Q, { first: '5' });
    expect(str.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'first' });
  });

  it('productFamilies is a connection too', async () => {
    const r = await m.test.gql(
      '{ productFamilies(first: 4) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }',
    );
    expect(r.data.productFamilies.totalCount).toBe(10);
    expect(r.data.productFamilies.edges.map((e: any) => e.node.id)).toEqual(newestFirst(familyIds).slice(0, 4));
    expect(r.data.productFamilies.pageInfo.hasNextPage).toBe(true);
  });
});

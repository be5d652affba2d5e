/**
 * The error envelope on both transports (docs/api.md, docs/operations.md): authentication, Request-Id, body parsing,
 * unknown routes, the operator token, rate limits, and that no error ever shows internals.
 */
import { ADMIN_TOKEN, request, startTestApp, HttpResult, TestMerchant, useHarness, sleep } from '../harness';
import { expectNoLeak, gqlRequest, REQUEST_ID, unknownId } from '../harness/http';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
});

/** The REST error envelope, in full: exactly these five fields, and the request id of the header. */
function expectRestError(r: HttpResult, status: number, type: string, code: string, param: string | null = null) {
  expect({ status: r.status, body: r.body }).toMatchObject({ status, body: { error: { type, code, param } } });
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message', 'param', 'request_id', 'type']);
  expect(typeof r.body.error.message).toBe('string');
  expect(r.body.error.message.length).toBeGreaterThan(0);
  expect(r.headers.get('request-id')).toMatch(REQUEST_ID);
  expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expectNoLeak(r.text);
}

/** The GraphQL error shape: errors[].extensions carry code, type, param and http.status. */
function expectGqlError(r: HttpResult, status: number, type: string, code: string) {
  expect(r.body?.errors?.length).toBeGreaterThanOrEqual(1);
  const e = r.body.errors[0];
  expect(typeof e.message).toBe('string');
  expect(e.extensions).toMatchObject({ code, type, http: { status } });
  expect(r.headers.get('request-id')).toMatch(REQUEST_ID);
  expect(e.extensions.requestId).toBe(r.headers.get('request-id'));
  expectNoLeak(r.text);
}

const randomKey = (mode: 'test' | 'live') => `sk_${mode}_${'A1b2C3d4E5'.repeat(4)}`;

describe('401 invalid_api_key', () => {
  const badAuth: [string, Record<string, string>][] = [
    ['no Authorization header', {}],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['a non-bearer scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['a too-short key', { authorization: 'Bearer sk_test_abc' }],
    ['a key of an unknown mode', { authorization: `Bearer sk_prod_${'x'.repeat(40)}` }],
    ['two tokens', { authorization: `Bearer ${randomKey('test')} extra` }],
    ['an unknown test key', { authorization: `Bearer ${randomKey('test')}` }],
    ['an unknown live key', { authorization: `Bearer ${randomKey('live')}` }],
  ];

  it.each(badAuth)('REST: %s', async (_name, headers) => {
    const r = await request(`${h.app.url}/v1/products`, { headers });
    expectRestError(r, 401, 'authentication_error', 'invalid_api_key');
    const w = await request(`${h.app.url}/v1/products`, {
      headers: { ...headers, 'content-type': 'application/json' },
      rawBody: '{"name":"x","type":"one_time"}',
    });
    expectRestError(w, 401, 'authentication_error', 'invalid_api_key');
  });

  it.each(badAuth)('GraphQL: %s', async (_name, headers) => {
    const r = await request(`${h.app.url}/graphql`, {
      headers: { ...headers, 'content-type': 'application/json' },
      rawBody: JSON.stringify({ query: '{ products { totalCount } }' }),
    });
    expect(r.status).toBe(401);
    expectGqlError(r, 401, 'authentication_error', 'invalid_api_key');
    expect(r.body.data).toBeUndefined();
  });

  it('a real key with a different case or extra characters is unknown', async () => {
    for (const key of [m.keys.test.toUpperCase(), `${m.keys.test}x`, m.keys.test.slice(0, -1)]) {
      expectRestError(
        await request(`${h.app.url}/v1/products`, { key }),
        401,
        'authentication_error',
        'invalid_api_key',
      );
    }
    expect((await m.test.get('/products')).status).toBe(200); // control
  });

  it('a revoked (rolled, no grace) key is refused on both transports; the new key works', async () => {
    const x = await h.merchant();
    expect((await x.test.get('/products')).status).toBe(200);
    const rolled = await x.test.post('/api-keys/roll', { grace_seconds: 0 });
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret_key).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);
    expectRestError(await x.test.get('/products'), 401, 'authentication_error', 'invalid_api_key');
    const g = await gqlRequest(h.app.url, x.keys.test, '{ products { totalCount } }');
    expect(g.status).toBe(401);
    expectGqlError(g, 401, 'authentication_error', 'invalid_api_key');
    expect((await request(`${h.app.url}/v1/products`, { key: rolled.body.secret_key })).status).toBe(200);
    expect((await x.live.get('/products')).status).toBe(200); // the other mode's key is untouched
  });

  it('the operator token is not a merchant key', async () => {
    const r = await request(`${h.app.url}/v1/products`, { key: ADMIN_TOKEN });
    expectRestError(r, 401, 'authentication_error', 'invalid_api_key');
    const g = await gqlRequest(h.app.url, ADMIN_TOKEN, '{ merchant { id } }');
    expectGqlError(g, 401, 'authentication_error', 'invalid_api_key');
  });
});

describe('Request-Id', () => {
  it('is on every response, unique, and equal to error.request_id', async () => {
    const calls: Promise<HttpResult>[] = [
      request(`${h.app.url}/healthz`),
      request(`${h.app.url}/readyz`),
      request(`${h.app.url}/v1/openapi.json`),
      request(`${h.app.url}/docs`),
      request(`${h.app.url}/graphql`, { headers: { accept: 'text/html' } }),
      request(`${h.app.url}/nope`),
      request(`${h.app.url}/v1/nope`, { key: m.keys.test }),
      request(`${h.app.url}/v1/products`, { key: m.keys.test }),
      request(`${h.app.url}/v1/products`),
      request(`${h.app.url}/v1/products`, { key: m.keys.test, body: { name: 'R', type: 'one_time' } }),
      request(`${h.app.url}/v1/products`, {
        key: m.keys.test,
        rawBody: '{',
        headers: { 'content-type': 'application/json' },
      }),
      request(`${h.app.url}/v1/products/${unknownId()}`, { key: m.keys.test }),
      gqlRequest(h.app.url, m.keys.test, '{ products { totalCount } }'),
      gqlRequest(h.app.url, undefined, '{ products { totalCount } }'),
      gqlRequest(h.app.url, m.keys.test, '{ nope }'),
    ];
    const results = await Promise.all(calls);
    const ids = results.map((r) => r.headers.get('request-id'));
    for (const id of ids) expect(id).toMatch(REQUEST_ID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(results.map((r) => r.status)).toEqual([
      200, 200, 200, 200, 200, 404, 404, 200, 401, 201, 400, 404, 200, 401, 400,
    ]);
    for (const r of results) {
      if (r.body?.error) expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
      if (r.body?.errors) expect(r.body.errors[0].extensions.requestId).toBe(r.headers.get('request-id'));
    }
  });
});

describe('request bodies', () => {
  it('invalid JSON: 400 invalid_json', async () => {
    for (const raw of ['{', '{"name": "x",}', 'nope', '{"name": "x"} trailing']) {
      const r = await request(`${h.app.url}/v1/products`, {
        key: m.keys.test,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expectRestError(r, 400, 'invalid_request_error', 'invalid_json');
    }
  });

  it('invalid JSON on /graphql answers in the GraphQL shape', async () => {
    const r = await request(`${h.app.url}/graphql`, {
      key: m.keys.test,
      rawBody: '{"query":',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expectGqlError(r, 400, 'invalid_request_error', 'invalid_json');
  });

  it('a body over 1 MiB: 413 request_too_large; just under: an ordinary validation answer', async () => {
    const over = JSON.stringify({ name: 'x'.repeat(1024 * 1024), type: 'one_time' });
    const r = await request(`${h.app.url}/v1/products`, {
      key: m.keys.test,
      rawBody: over,
      headers: { 'content-type': 'application/json' },
    });
    expectRestError(r, 413, 'invalid_request_error', 'request_too_large');
    const under = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 100), type: 'one_time' });
    expect(Buffer.byteLength(under)).toBeLessThanOrEqual(1024 * 1024);
    const u = await request(`${h.app.url}/v1/products`, {
      key: m.keys.test,
      rawBody: under,
      headers: { 'content-type': 'application/json' },
    });
    expectRestError(u, 400, 'invalid_request_error', 'parameter_invalid', 'name');
    const g = await request(`${h.app.url}/graphql`, {
      key: m.keys.test,
      rawBody: JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(1024 * 1024) } }),
      headers: { 'content-type': 'application/json' },
    });
    expect(g.status).toBe(413);
    expectGqlError(g, 413, 'invalid_request_error', 'request_too_large');
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/v1/products/x/y/z'],
    ['DELETE', '/v1/products'],
    ['PUT', '/v1/products'],
    ['POST', '/v1/plans'],
    ['GET', '/v2/products'],
    ['GET', '/'],
    ['GET', '/nope'],
  ])('%s %s: 404 resource_not_found, with or without a key', async (method, path) => {
    for (const key of [m.keys.test, undefined]) {
      const r = await request(`${h.app.url}${path}`, { method, key });
      expectRestError(r, 404, 'invalid_request_error', 'resource_not_found');
    }
  });
});

describe('operator routes', () => {
  const create = (key: string | undefined, url = h.app.url) =>
    request(`${url}/v1/admin/merchants`, { key, method: 'POST', body: { name: 'Op' } });

  it('the right token creates a merchant (control)', async () => {
    expect((await create(ADMIN_TOKEN)).status).toBe(201);
  });

  it.each([
    ['no token', undefined],
    ['a wrong token', 'wrong-token'],
    ['the token with a suffix', `${ADMIN_TOKEN}x`],
    ['a prefix of the token', ADMIN_TOKEN.slice(0, -1)],
  ])('%s: 401', async (_name, key) => {
    expectRestError(await create(key), 401, 'authentication_error', 'invalid_api_key');
  });

  it("a merchant's key: 401", async () => {
    expectRestError(await create(m.keys.test), 401, 'authentication_error', 'invalid_api_key');
    expectRestError(await create(m.keys.live), 401, 'authentication_error', 'invalid_api_key');
  });

  it('without ADMIN_TOKEN on the server the operator API does not exist (404), whatever the token', async () => {
    const bare = await startTestApp({ adminToken: undefined });
    try {
      for (const key of [ADMIN_TOKEN, undefined, 'anything']) {
        expectRestError(await create(key, bare.url), 404, 'invalid_request_error', 'resource_not_found');
      }
      const g = await gqlRequest(bare.url, ADMIN_TOKEN, 'mutation { createMerchant(input: { name: "x" }) { id } }');
      expect(g.status).toBe(401);
    } finally {
      await bare.close();
    }
  });
});

describe('rate limits', () => {
  /** Fires n requests at once and returns their answers. */
  const burst = (n: number, fn: () => Promise<HttpResult>) => Promise.all(Array.from({ length: n }, fn));

  it('a merchant with rate_limit_per_second 2 gets twice that as a burst, then 429 with Retry-After', async () => {
    const slow = await h.merchant({ rate_limit_per_second: 2 });
    const other = await h.merchant({ rate_limit_per_second: 2 });
    const rs = await burst(10, () => slow.test.get('/products'));
    const ok = rs.filter((r) => r.status === 200);
    const limited = rs.filter((r) => r.status === 429);
    expect(ok.length).toBe(4);
    expect(limited.length).toBe(6);
    for (const r of limited) {
      expectRestError(r, 429, 'rate_limit_error', 'rate_limited');
      const after = Number(r.headers.get('retry-after'));
      expect(Number.isInteger(after)).toBe(true);
      expect(after).toBeGreaterThanOrEqual(1);
      expect(after).toBeLessThanOrEqual(10);
    }
    for (const r of ok) expect(r.headers.get('retry-after')).toBeNull();

    // per key: another merchant, and the same merchant's other mode, are unaffected
    expect((await other.test.get('/products')).status).toBe(200);
    expect((await slow.live.get('/products')).status).toBe(200);
    expect((await m.test.get('/products')).status).toBe(200);

    // GraphQL shares the key's budget and answers in its own shape
    const g = await gqlRequest(h.app.url, slow.keys.test, '{ products { totalCount } }');
    expect(g.status).toBe(429);
    expect(g.headers.get('retry-after')).toMatch(/^\d+$/);
    expectGqlError(g, 429, 'rate_limit_error', 'rate_limited');

    // after Retry-After the key works again
    await sleep(Number(limited[0].headers.get('retry-after')) * 1000 + 100);
    expect((await slow.test.get('/products')).status).toBe(200);
  });

  it('REST and GraphQL draw on one budget per key', async () => {
    const k = await h.merchant({ rate_limit_per_second: 2 });
    const rs = await Promise.all([
      ...Array.from({ length: 3 }, () => k.test.get('/products')),
      ...Array.from({ length: 3 }, () => gqlRequest(h.app.url, k.keys.test, '{ products { totalCount } }')),
    ]);
    expect(rs.filter((r) => r.status === 200).length).toBe(4);
    expect(rs.filter((r) => r.status === 429).length).toBe(2);
  });

  it('the server default applies to merchants without their own limit; a merchant limit overrides it', async () => {
    const s = await startTestApp({ rateLimitPerSecond: 3 });
    try {
      const plain = await s.createMerchant();
      const generous = await s.createMerchant({ rate_limit_per_second: 50 });
      const rs = await burst(12, () => plain.test.get('/products'));
      expect(rs.filter((r) => r.status === 200).length).toBe(6);
      expect(rs.filter((r) => r.status === 429).length).toBe(6);
      const gs = await burst(12, () => generous.test.get('/products'));
      expect(gs.every((r) => r.status === 200)).toBe(true);
    } finally {
      await s.close();
    }
  });
});

describe('no internals in error bodies', () => {
  const odd = [
    'x'.repeat(5000),
    '00000000-0000-0000-0000-000000000000',
    'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
    '0190000000007000800000000000000000', // hex, but not a UUID
    "1' OR '1'='1",
    '%00',
    '%E0%A4%A', // not valid percent-encoding
    '..%2F..%2Fetc%2Fpasswd',
    '%F0%9F%99%82',
    unknownId().toUpperCase(),
    '4d1c6e2a-9b1f-4c3e-8a2b-1f2e3d4c5b6a', // a v4 uuid
    '-1',
    '1e309',
  ];

  it.each(odd.map((id) => [id.slice(0, 40)]))('GET /products/%s and friends: 404, nothing leaked', async (short) => {
    const id = odd.find((x) => x.slice(0, 40) === short)!;
    for (const path of [`/products/${id}`, `/plans/${id}`, `/prices/${id}`, `/product-families/${id}`]) {
      const r = await request(`${h.app.url}/v1${path}`, { key: m.keys.test });
      expectRestError(r, 404, 'invalid_request_error', 'resource_not_found');
    }
    for (const path of [`/products/${id}/plans`, `/plans/${id}/prices`]) {
      const body = path.endsWith('plans')
        ? { name: 'x', billing_frequency: 'monthly' }
        : { currency: 'INR', amount: 1 };
      const r = await request(`${h.app.url}/v1${path}`, { key: m.keys.test, body });
      expectRestError(r, 404, 'invalid_request_error', 'resource_not_found');
    }
    const decoded = (() => {
      try {
        return decodeURIComponent(id);
      } catch {
        return id;
      }
    })();
    const g = await gqlRequest(
      h.app.url,
      m.keys.test,
      'query($id: ID!) { product(id: $id) { id } plan(id: $id) { id } }',
      { id: decoded },
    );
    expectGqlError(g, 404, 'invalid_request_error', 'resource_not_found');
  });

  it('odd query values: 400 with the parameter named, nothing leaked', async () => {
    const cases: [string, string][] = [
      ['limit=99999999999999999999', 'limit'],
      ['limit=1e3', 'limit'],
      ['limit=%00', 'limit'],
      [`cursor=${'A'.repeat(3000)}`, 'cursor'],
      ['cursor=%FF%FE', 'cursor'],
      [`cursor=${Buffer.from("' or 1=1 --").toString('base64url')}`, 'cursor'],
      ['status=deleted', 'status'],
      ['type=%27%3B', 'type'],
    ];
    for (const [qs, param] of cases) {
      const r = await request(`${h.app.url}/v1/products?${qs}`, { key: m.keys.test });
      expectRestError(r, 400, 'invalid_request_error', 'parameter_invalid', param);
    }
  });

  it('odd body values: 400, nothing leaked, nothing created', async () => {
    const before = (await m.test.get('/products?limit=100')).body.data.length;
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'a\u0000b', type: 'one_time' }, 'parameter_invalid'],
      [{ name: 'ok', description: 'nul \u0000 inside', type: 'one_time' }, 'parameter_invalid'],
      [{ name: { $ne: null }, type: 'one_time' }, 'parameter_invalid'],
      [{ name: ['a'], type: 'one_time' }, 'parameter_invalid'],
      [{ name: 'x', type: 'one_time', product_family_id: "'; drop table products; --" }, 'resource_not_found'],
    ];
    for (const [body, code] of cases) {
      const r = await m.test.post('/products', JSON.parse(JSON.stringify(body)));
      expect(r.status).toBe(code === 'resource_not_found' ? 404 : 400);
      expect(r.body.error.code).toBe(code);
      expectNoLeak(r.text);
    }
    const proto = await request(`${h.app.url}/v1/products`, {
      key: m.keys.test,
      rawBody: '{"name":"x","type":"one_time","__proto__":{"admin":true}}',
      headers: { 'content-type': 'application/json' },
    });
    expectRestError(proto, 400, 'invalid_request_error', 'parameter_unknown', '__proto__');
    const g = await gqlRequest(
      h.app.url,
      m.keys.test,
      'mutation { createProduct(input: { name: "a\\u0000b", type: ONE_TIME }) { id } }',
    );
    expectGqlError(g, 400, 'invalid_request_error', 'parameter_invalid');
    expect((await m.test.get('/products?limit=100')).body.data.length).toBe(before);
  });

  it('a huge amount is refused as invalid, not a database error', async () => {
    const p = await m.test.post('/products', { name: 'Huge', type: 'subscription' });
    const plan = await m.test.post(`/products/${p.body.id}/plans`, { name: 'M', billing_frequency: 'monthly' });
    for (const amount of [1e300, 2 ** 53, Number.MAX_SAFE_INTEGER + 2]) {
      const r = await request(`${h.app.url}/v1/plans/${plan.body.id}/prices`, {
        key: m.keys.test,
        rawBody: `{"currency":"INR","amount":${amount}}`,
        headers: { 'content-type': 'application/json' },
      });
      expectRestError(r, 400, 'invalid_request_error', 'parameter_invalid', 'amount');
    }
  });
});

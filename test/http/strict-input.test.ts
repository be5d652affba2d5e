/**
 * Strict input on every route and both transports (docs/operations.md). Each case an
 * attacker reported, and its class: a body that is not a JSON object, a string where a number, boolean or list goes,
 * a scalar where a list goes, an empty id, text that is not Unicode (a lone surrogate, bytes that are not UTF-8).
 * Every one is answered 400 in the API's error shape, naming the field, and changes no row.
 */
import { HttpResult, request, TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { SNAPSHOT_TABLES_SQL, snapshotSql as snapshotSqlOf } from '../harness/snapshot';
import { connect, paymentBody } from '../payments/helpers';
import { LONE_SURROGATE, NUL, textFaultAt } from '../../src/core/nul';

const h = useHarness({ worker: false });
let m: TestMerchant;
let key: string;
let endpointId: string;
let paymentId: string;

beforeAll(async () => {
  m = await h.merchant();
  key = m.keys.test;
  await connect(m.test, 'stripe');
  endpointId = (await m.test.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/strict', mode: 'test' })).body.id;
  paymentId = (await m.test.post('/payments', paymentBody())).body.id;
});

/** Rows and newest row version of every table (test/harness/snapshot.ts). */
async function snapshot(): Promise<Record<string, string>> {
  const conn = h.app.orm.em.getConnection();
  const tables = await conn.execute<{ table_name: string }[]>(SNAPSHOT_TABLES_SQL);
  const rows = await conn.execute<{ t: string; v: string }[]>(snapshotSqlOf(tables));
  return Object.fromEntries(rows.map((r) => [r.t, r.v]));
}

/** A request with exactly these body bytes (JSON text written by hand: `"\ud800"` stays an escape). */
const raw = (method: string, path: string, body: string | Buffer | undefined, headers: Record<string, string> = {}) =>
  request(`${h.app.url}${path}`, {
    method,
    key,
    rawBody: body as string,
    headers: { 'content-type': 'application/json', ...headers },
  });
const post = (path: string, body: string) => raw('POST', `/v1${path}`, body);
const gql = (query: string, variables?: Record<string, unknown>) => h.graphql(key, query, variables);

function expectRest(r: HttpResult, status: number, code: string, param: string | null) {
  expect({
    status: r.status,
    type: r.body?.error?.type,
    code: r.body?.error?.code,
    param: r.body?.error?.param,
  }).toEqual({
    status,
    type: 'invalid_request_error',
    code,
    param,
  });
  expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message', 'param', 'request_id', 'type']);
  expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
}

function expectGql(r: HttpResult, status: number, code: string, param: string | null) {
  const e = r.body?.errors?.[0];
  expect({
    code: e?.extensions?.code,
    status: e?.extensions?.http?.status,
    param: e?.extensions?.param ?? null,
  }).toEqual({ code, status, param });
}

/** Runs `fn` (which must be refused) and expects no row of any table to have changed. */
async function changesNothing(fn: () => Promise<void>): Promise<void> {
  const before = await snapshot();
  await fn();
  expect(await snapshot()).toEqual(before);
}

describe('POST /v1/products with "product_family_id": "" (was 500, a stack overflow in the ORM)', () => {
  it('REST: 400 parameter_invalid naming product_family_id; a malformed non-empty id stays 404', async () => {
    await changesNothing(async () => {
      expectRest(
        await post('/products', '{"name":"x","type":"one_time","product_family_id":""}'),
        400,
        'parameter_invalid',
        'product_family_id',
      );
      expectRest(
        await post('/products', '{"name":"x","type":"one_time","product_family_id":"nope"}'),
        404,
        'resource_not_found',
        'product_family_id',
      );
      expectRest(
        await post('/products', `{"name":"x","type":"one_time","product_family_id":"${unknownId()}"}`),
        404,
        'resource_not_found',
        'product_family_id',
      );
    });
  });

  it('GraphQL: the same, as a variable and as an inline literal', async () => {
    await changesNothing(async () => {
      const q = 'mutation($i: CreateProductInput!) { createProduct(input: $i) { id } }';
      expectGql(
        await gql(q, { i: { name: 'x', type: 'ONE_TIME', productFamilyId: '' } }),
        400,
        'parameter_invalid',
        'product_family_id',
      );
      expectGql(
        await gql('mutation { createProduct(input: { name: "x", type: ONE_TIME, productFamilyId: "" }) { id } }'),
        400,
        'parameter_invalid',
        'product_family_id',
      );
    });
  });

  it('an empty id is refused wherever an id goes: arguments, list elements, nested inputs, query strings', async () => {
    await changesNothing(async () => {
      expectGql(await gql('{ product(id: "") { id } }'), 400, 'parameter_invalid', 'id');
      expectGql(
        await gql('query($c: ID) { payments(customerId: $c) { totalCount } }', { c: '' }),
        400,
        'parameter_invalid',
        'customer_id',
      );
      expectRest(await raw('GET', '/v1/payments?customer_id=', undefined), 400, 'parameter_invalid', 'customer_id');
      expectRest(await post('/webhooks/trigger-test', '{"endpoint_id":""}'), 400, 'parameter_invalid', 'endpoint_id');
      const sub = unknownId();
      expectRest(
        await post(
          '/usage/events/batch',
          JSON.stringify({
            events: [
              { subscription_id: sub, event_type: 'api.call', quantity: 1, unit: 'call' },
              { subscription_id: '', event_type: 'api.call', quantity: 1, unit: 'call' },
            ],
          }),
        ),
        400,
        'parameter_invalid',
        'events[1].subscription_id',
      );
      expectRest(
        await post(
          '/subscriptions',
          JSON.stringify({
            plan_id: '',
            customer_email: 'a@example.com',
            success_url: 'https://a.example',
            cancel_url: 'https://a.example',
          }),
        ),
        400,
        'parameter_invalid',
        'plan_id',
      );
      expectRest(
        await post('/coupons/validate', JSON.stringify({ code: 'X', price_id: '' })),
        400,
        'parameter_invalid',
        'price_id',
      );
    });
  });
});

describe('a lone UTF-16 surrogate (was 502 "gateway did not answer" for reference_id)', () => {
  const payment = (extra: string) =>
    `{"amount":10000,"customer_email":"a@example.com","success_url":"https://a.example","cancel_url":"https://a.example",${extra}}`;

  it.each([
    ['"reference_id":"\\ud800"', 'reference_id'],
    ['"reference_id":"x\\udfff"', 'reference_id'],
    ['"reference_id":"\\udc00\\ud800"', 'reference_id'], // the pair reversed: two lone surrogates
    ['"customer_name":"Asha \\ud83d"', 'customer_name'],
    ['"metadata":{"order":"\\ud800"}', 'metadata'], // inside a free-form object: named by the field, as the services do
    ['"metadata":{"\\ud800":"v"}', 'metadata'], // in a key too
  ])('REST POST /payments with %s: 400 parameter_invalid naming %s, nothing created', async (field, param) => {
    await changesNothing(async () =>
      expectRest(await post('/payments', payment(field)), 400, 'parameter_invalid', param),
    );
  });

  it('a surrogate pair is text like any other', async () => {
    const r = await post('/payments', payment('"reference_id":"order \\ud83d\\ude00"'));
    expect(r.status).toBe(201);
    expect(r.body.reference_id).toBe('order 😀');
  });

  it('GraphQL variables: 400 naming the field; inline literals cannot carry one (a syntax error, 400)', async () => {
    await changesNothing(async () => {
      const q = 'mutation($i: CreatePaymentInput!) { createPayment(input: $i) { id } }';
      const input = {
        amount: 10000,
        customerEmail: 'a@example.com',
        successUrl: 'https://a.example',
        cancelUrl: 'https://a.example',
      };
      expectGql(await gql(q, { i: { ...input, referenceId: '\ud800' } }), 400, 'parameter_invalid', 'reference_id');
      expectGql(
        await gql(q, { i: { ...input, metadata: { a: ['x', '\udfff'] } } }),
        400,
        'parameter_invalid',
        'metadata',
      );
      expectGql(
        await gql('query($e: String) { customers(email: $e) { totalCount } }', { e: '\ud800@example.com' }),
        400,
        'parameter_invalid',
        'email',
      );
      // an id argument too (a NUL there stays a 404: a malformed id)
      expectGql(
        await gql('query($id: ID!) { payment(id: $id) { id } }', { id: '\ud800' }),
        400,
        'parameter_invalid',
        'id',
      );
      const literal = await gql(
        'mutation { createPayment(input: { amount: 10000, customerEmail: "a@example.com", successUrl: "https://a.example", cancelUrl: "https://a.example", referenceId: "\\ud800" }) { id } }',
      );
      expect(literal.status).toBe(400);
      expectGql(literal, 400, 'parameter_invalid', null);
    });
  });

  it('GraphQL GET: in the variables JSON of the query string', async () => {
    const query = encodeURIComponent('query($e: String) { customers(email: $e) { totalCount } }');
    const r = await raw(
      'GET',
      `/graphql?query=${query}&variables=${encodeURIComponent('{"e":"\\ud800"}')}`,
      undefined,
      { 'apollo-require-preflight': 'true' },
    );
    expectGql(r, 400, 'parameter_invalid', 'email');
  });

  it("percent-encoded bytes that are not UTF-8 (a surrogate's among them) in a query string: 400 naming the parameter", async () => {
    for (const bad of ['%ED%A0%80', '%FF', 'a%E0%A4%A', '%']) {
      expectRest(await raw('GET', `/v1/customers?email=${bad}`, undefined), 400, 'parameter_invalid', 'email');
    }
    const query = encodeURIComponent('{ customers { totalCount } }');
    const g = await raw('GET', `/graphql?query=${query}&variables=%7B%22e%22%3A%22%ED%A0%80%22%7D`, undefined, {
      'apollo-require-preflight': 'true',
    });
    expect(g.status).toBe(400);
    expectGql(g, 400, 'parameter_invalid', 'variables');
    expect((await raw('GET', '/v1/customers?email=%C3%A9%40example.com', undefined)).status).toBe(200); // é: fine
  });

  it('a body whose bytes are not UTF-8: 400, nothing created (REST and GraphQL)', async () => {
    await changesNothing(async () => {
      const body = Buffer.concat([
        Buffer.from('{"name":"'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('","type":"one_time"}'),
      ]);
      expectRest(await raw('POST', '/v1/products', body), 400, 'parameter_invalid', null);
      const latin1 = Buffer.concat([
        Buffer.from('{"name":"caf'),
        Buffer.from([0xe9]),
        Buffer.from('","type":"one_time"}'),
      ]);
      expectRest(await raw('POST', '/v1/products', latin1), 400, 'parameter_invalid', null);
      const g = Buffer.concat([
        Buffer.from('{"query":"mutation { createProduct(input: { name: \\"'),
        Buffer.from([0xff]),
        Buffer.from('\\", type: ONE_TIME }) { id } }"}'),
      ]);
      const r = await raw('POST', '/graphql', g);
      expect(r.status).toBe(400);
      expectGql(r, 400, 'parameter_invalid', null);
    });
  });

  it('a path id that percent-decodes to no text names nothing: 404, as any malformed id', async () => {
    expectRest(await raw('GET', '/v1/products/%ED%A0%80', undefined), 404, 'resource_not_found', null);
  });
});

describe('POST /v1/api-keys/roll and the other bodies read as arguments', () => {
  async function keyRows() {
    return h.app.orm.em
      .getConnection()
      .execute(`select id, expires_at from api_keys where merchant_id = ? order by id`, [m.id]);
  }

  it('a body of [] is refused, not read as "no body": the key is not rolled (it was rolled with no grace period)', async () => {
    const before = await keyRows();
    expectRest(await post('/api-keys/roll', '[]'), 400, 'parameter_invalid', null);
    expect(await keyRows()).toEqual(before);
    expect((await m.test.get('/products')).status).toBe(200); // the key still works
  });

  it.each(['[]', 'null', '"x"', '0', '60', 'true', 'false', '[{"grace_seconds":60}]'])(
    'a body of %s on every route that reads its body as arguments or an optional input: 400, nothing changed',
    async (body) => {
      await changesNothing(async () => {
        for (const path of [
          '/api-keys/roll',
          `/webhooks/endpoints/${endpointId}/toggle`,
          '/webhooks/trigger-test',
          '/test-clock/advance',
          '/merchant/billing-settings',
          `/payments/${paymentId}/refund`,
          `/webhooks/endpoints/${endpointId}/roll-secret`,
          '/products', // an input route
        ]) {
          expectRest(await post(path, body), 400, 'parameter_invalid', null);
        }
        expectRest(await raw('DELETE', `/v1/webhooks/endpoints/${endpointId}`, body), 400, 'parameter_invalid', null);
      });
      expect((await m.test.get(`/webhooks/endpoints/${endpointId}`)).body.enabled).toBe(true);
    },
  );

  it.each(['[]', 'null', '"{ products { totalCount } }"', '1', 'true', '[{"query":"{ products { totalCount } }"}]'])(
    'POST /graphql with a body of %s: 400 with a GraphQL error, nothing run',
    async (body) => {
      const r = await raw('POST', '/graphql', body);
      expect(r.status).toBe(400);
      expect(r.body.errors?.[0]?.extensions?.http?.status ?? r.status).toBe(400);
      expect(r.body.errors[0].extensions.code).toBe('parameter_invalid');
      expect(r.body.data).toBeUndefined();
    },
  );

  it('no body, or {}, is still "no arguments"', async () => {
    const a = await raw('POST', `/v1/webhooks/endpoints/${endpointId}/toggle`, undefined);
    const b = await post(`/webhooks/endpoints/${endpointId}/toggle`, '{}');
    expect([a.status, a.body.enabled, b.status, b.body.enabled]).toEqual([200, false, 200, true]);
  });

  it.each([
    ['/api-keys/roll', '{"grace_seconds":"10"}', 'grace_seconds'],
    ['/test-clock/advance', '{"seconds":"60"}', 'seconds'],
    ['/merchant/billing-settings', '{"max_retries":"3"}', 'max_retries'],
    [`/webhooks/endpoints/{endpoint}/toggle`, '{"enabled":"true"}', 'enabled'],
    [`/webhooks/endpoints/{endpoint}/toggle`, '{"enabled":1}', 'enabled'],
    ['/subscriptions/{id}/cancel', '{"cancel_at_period_end":"true"}', 'cancel_at_period_end'],
    ['/payments/{payment}/refund', '{"amount":"100"}', 'amount'],
    ['/products', '{"name":"x","type":"one_time","status":["active"]}', 'status'],
  ])('POST %s with %s: a string is no number or boolean (400 naming %s)', async (template, body, param) => {
    const path = template
      .replace('{endpoint}', endpointId)
      .replace('{payment}', paymentId)
      .replace('{id}', unknownId());
    const before = await keyRows();
    await changesNothing(async () => expectRest(await post(path, body), 400, 'parameter_invalid', param));
    expect(await keyRows()).toEqual(before);
  });

  it('GraphQL refuses the same strings, as variables (named by the variable) and literals, and rolls nothing', async () => {
    const before = await keyRows();
    await changesNothing(async () => {
      expectGql(
        await gql('mutation($graceSeconds: Int) { rollApiKey(graceSeconds: $graceSeconds) { secretKey } }', {
          graceSeconds: '10',
        }),
        400,
        'parameter_invalid',
        'grace_seconds',
      );
      expect((await gql('mutation { rollApiKey(graceSeconds: "10") { secretKey } }')).status).toBe(400);
      expectGql(
        await gql('mutation($seconds: Int) { advanceTestClock(seconds: $seconds) { now } }', { seconds: '60' }),
        400,
        'parameter_invalid',
        'seconds',
      );
      expectGql(
        await gql(
          `mutation($enabled: Boolean) { toggleWebhookEndpoint(id: "${endpointId}", enabled: $enabled) { id } }`,
          { enabled: 'true' },
        ),
        400,
        'parameter_invalid',
        'enabled',
      );
    });
    expect(await keyRows()).toEqual(before);
  });

  it('the query string still spells numbers and booleans as text', async () => {
    expect((await raw('GET', '/v1/products?limit=1', undefined)).status).toBe(200);
  });

  it('"enabled_events": "abc" is no list in REST (it was stored as ["abc"]); GraphQL keeps its list coercion', async () => {
    await changesNothing(async () => {
      expectRest(
        await post(
          '/webhooks/endpoints',
          '{"url":"http://127.0.0.1:9/x","mode":"test","enabled_events":"payment.succeeded"}',
        ),
        400,
        'parameter_invalid',
        'enabled_events',
      );
      expectRest(
        await post(
          '/webhooks/endpoints',
          '{"url":"http://127.0.0.1:9/x","mode":"test","enabled_events":{"0":"payment.succeeded"}}',
        ),
        400,
        'parameter_invalid',
        'enabled_events',
      );
      expectRest(
        await post(`/entitlements/${unknownId()}/products`, '{"product_ids":"x"}'),
        400,
        'parameter_invalid',
        'product_ids',
      );
      expectRest(
        await post('/usage/events/batch', '{"events":{"subscription_id":"x"}}'),
        400,
        'parameter_invalid',
        'events',
      );
    });
    // GraphQL: a single value where a list goes is a list of one (the GraphQL specification's input coercion).
    const g = await gql(
      'mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/g", mode: TEST, enabledEvents: "payment.succeeded" }) { enabledEvents } }',
    );
    expect(g.body.errors).toBeUndefined();
    expect(g.body.data.createWebhookEndpoint.enabledEvents).toEqual(['payment.succeeded']);
  });
});

describe('the text walk (src/core/nul.ts)', () => {
  it('finds NUL and lone surrogates in values and keys, in document order; pairs are text', () => {
    expect(textFaultAt({ a: 'ok 😀', b: ['x', '\ud800'] }, 'input')).toEqual({
      path: ['input', 'b', 1],
      fault: LONE_SURROGATE,
      key: false,
    });
    expect(textFaultAt({ a: { '\udfff': 1 } }, 'input')).toEqual({
      path: ['input', 'a', '\udfff'],
      fault: LONE_SURROGATE,
      key: true,
    });
    expect(textFaultAt({ a: 'x\u0000', b: '\ud800' }, 'v')).toEqual({ path: ['v', 'a'], fault: NUL, key: false });
    expect(textFaultAt({ a: 'x\u0000', b: '\ud800' }, 'v', LONE_SURROGATE)).toEqual({
      path: ['v', 'b'],
      fault: LONE_SURROGATE,
      key: false,
    });
    expect(textFaultAt(['😀', '\ud83d\ude00', 'é', 'a\u0301'], 'v')).toBeNull();
    expect(textFaultAt('\ud800', 'v')).toEqual({ path: ['v'], fault: LONE_SURROGATE, key: false });
  });
});

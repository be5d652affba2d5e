/**
 * REST errors name REST things (docs/api.md): the REST field (`amount`, `limit`, not GraphQL's `$first`), the expected
 * type in plain words, and enum values in REST's lower case. GraphQL shares the plain type words and keeps its own
 * upper-case enum values. Every message is checked in full, so a regression to graphql-js's text fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { HttpResult, TestMerchant, useHarness } from '../harness';
import { expectNoLeak, unknownId } from '../harness/http';

const h = useHarness();
let m: TestMerchant;
const schemas = JSON.parse(fs.readFileSync(path.join(__dirname, '../../schema/openapi.json'), 'utf8')).components
  .schemas;
/** `expected one of a, b, c` with the values the OpenAPI document lists for the enum. */
const oneOf = (enumName: string) => `expected one of ${(schemas[enumName].enum as string[]).join(', ')}`;

beforeAll(async () => {
  m = await h.merchant();
});

function expectInvalid(r: HttpResult, param: string, message: string) {
  expect({
    status: r.status,
    code: r.body?.error?.code,
    param: r.body?.error?.param,
    message: r.body?.error?.message,
  }).toEqual({
    status: 400,
    code: 'parameter_invalid',
    param,
    message,
  });
  expectNoLeak(r.text);
}

const payment = {
  amount: 10000,
  currency: 'INR',
  customer_email: 'a@example.com',
  success_url: 'https://s.example/ok',
  cancel_url: 'https://s.example/no',
};

describe('REST error messages', () => {
  it('a string amount: "Invalid value for amount: expected an integer"', async () => {
    expectInvalid(
      await m.test.post('/payments', { ...payment, amount: '100' }),
      'amount',
      'Invalid value for amount: expected an integer',
    );
    expectInvalid(
      await m.test.post('/payments', { ...payment, amount: 10.5 }),
      'amount',
      'Invalid value for amount: expected an integer',
    );
  });

  it('other scalars in plain words, named by their REST field', async () => {
    expectInvalid(
      await m.test.post('/payments', { ...payment, customer_email: 5 }),
      'customer_email',
      'Invalid value for customer_email: expected a string',
    );
    expectInvalid(
      await m.test.post('/payments', { ...payment, metadata: 'x' }),
      'metadata',
      'Invalid value for metadata: expected a JSON object',
    );
    expectInvalid(
      await m.test.post(`/webhooks/endpoints/${unknownId()}/toggle`, { enabled: 'yes' }),
      'enabled',
      'Invalid value for enabled: expected a boolean (true or false)',
    );
    expectInvalid(
      await m.test.post('/test-clock/advance', { to: 'tomorrow' }),
      'to',
      'Invalid value for to: expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z',
    );
    // The query string's names: `limit` (GraphQL `$first`), `customer_id`.
    expectInvalid(await m.test.get('/payments?limit=abc'), 'limit', 'Invalid value for limit: expected an integer');
  });

  it('a bad enum value lists the allowed values in lower case, in the query string and in bodies', async () => {
    expectInvalid(
      await m.test.get('/payments?status=paid'),
      'status',
      `Invalid value for status: ${oneOf('PaymentStatus')}`,
    );
    expectInvalid(await m.test.get('/products?type=bogus'), 'type', `Invalid value for type: ${oneOf('ProductType')}`); // a cached read
    expectInvalid(
      await m.test.post('/products', { name: 'x', type: 'ONE-TIME' }),
      'type',
      `Invalid value for type: ${oneOf('ProductType')}`,
    );
    expectInvalid(
      await m.test.post('/products', { name: 'x', type: 7 }),
      'type',
      `Invalid value for type: ${oneOf('ProductType')}`,
    );
    expect(oneOf('PaymentStatus')).toMatch(/^expected one of [a-z_]+(, [a-z_]+)+$/);
    // Valid values still work, as before.
    expect((await m.test.get('/payments?status=succeeded')).status).toBe(200);
  });
});

describe('GraphQL shares the plain type words and keeps its own enum names', () => {
  it('a string amount', async () => {
    const r = await h.graphql(
      m.keys.test,
      'mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id } }',
      {
        input: {
          amount: '100',
          customerEmail: 'a@example.com',
          successUrl: 'https://s.example/ok',
          cancelUrl: 'https://s.example/no',
        },
      },
    );
    expect(r.body.errors[0]).toMatchObject({
      message: 'Invalid value for amount: expected an integer',
      extensions: { code: 'parameter_invalid', param: 'amount', http: { status: 400 } },
    });
  });

  it('a bad enum value names GraphQL values', async () => {
    const r = await h.graphql(m.keys.test, 'query($s: PaymentStatus) { payments(status: $s) { totalCount } }', {
      s: 'paid',
    });
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 's' });
    expect(r.body.errors[0].message).toMatch(/^Invalid value for s: Value "paid" does not exist/);
  });
});

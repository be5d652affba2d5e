import { request, startTestApp, TestApp, TestMerchant } from '../harness/app';
import { connect, countRows, pay, paymentBody } from './helpers';

/**
 * The idempotency rules (docs/api.md) over GraphQL: createPayment and refundPayment take `idempotencyKey` (or the
 * Idempotency-Key header of POST /graphql) with REST's semantics, and share REST's keys (one key space per merchant and
 * mode).
 */

let t: TestApp;
let m: TestMerchant;
beforeAll(async () => {
  t = await startTestApp();
  m = await t.createMerchant();
  await connect(m.test, 'stripe');
});
afterAll(() => t.close());

const key = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

const CREATE = `mutation($input: CreatePaymentInput!, $key: String) {
  createPayment(input: $input, idempotencyKey: $key) { id amount status checkoutUrl createdAt }
}`;
const REFUND = `mutation($id: ID!, $input: RefundPaymentInput, $key: String) {
  refundPayment(id: $id, input: $input, idempotencyKey: $key) { id amount status }
}`;

/** The GraphQL spelling of the REST body helpers.paymentBody makes. */
function gqlInput(overrides: Record<string, unknown> = {}) {
  const b = paymentBody();
  return {
    amount: b.amount,
    currency: b.currency,
    customerEmail: b.customer_email,
    customerName: b.customer_name,
    successUrl: b.success_url,
    cancelUrl: b.cancel_url,
    ...overrides,
  };
}

function gql(query: string, variables: Record<string, unknown>, headers: Record<string, string> = {}) {
  return request<any>(`${t.url}/graphql`, { key: m.keys.test, body: { query, variables }, headers });
}

const paymentsOfMerchant = () => countRows(t, 'payments', 'merchant_id = ?', [m.id]);

describe('createPayment(idempotencyKey)', () => {
  it('the same key and input twice: one payment, the same answer, reported as a replay', async () => {
    const k = key('gql-same');
    const input = gqlInput();
    const before = await paymentsOfMerchant();
    const first = await gql(CREATE, { input, key: k });
    expect(first.body.errors).toBeUndefined();
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const second = await gql(CREATE, { input, key: k });
    expect(second.body.errors).toBeUndefined();
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.body.data).toEqual(first.body.data);
    expect(await paymentsOfMerchant()).toBe(before + 1);

    // The stored first answer, rendered again: another selection of the same object works too.
    const other = await gql(
      `mutation($input: CreatePaymentInput!, $key: String) {
      createPayment(input: $input, idempotencyKey: $key) { id livemode customerEmail }
    }`,
      { input, key: k },
    );
    expect(other.body.data.createPayment).toEqual({
      id: first.body.data.createPayment.id,
      livemode: false,
      customerEmail: input.customerEmail,
    });
    expect(await paymentsOfMerchant()).toBe(before + 1);
  });

  it('the same key with another input answers idempotency_key_reused and creates nothing', async () => {
    const k = key('gql-reused');
    const input = gqlInput();
    expect((await gql(CREATE, { input, key: k })).body.errors).toBeUndefined();
    const before = await paymentsOfMerchant();
    const other = await gql(CREATE, { input: { ...input, amount: 777 }, key: k });
    expect(other.body.data).toBeNull();
    expect(other.body.errors[0].extensions).toMatchObject({
      code: 'idempotency_key_reused',
      type: 'idempotency_error',
      http: { status: 400 },
    });
    expect(await paymentsOfMerchant()).toBe(before);
  });

  it('racing requests with one key create one payment; the others replay it or answer idempotency_key_in_use', async () => {
    const k = key('gql-race');
    const input = gqlInput();
    const before = await paymentsOfMerchant();
    const answers = await Promise.all(Array.from({ length: 12 }, () => gql(CREATE, { input, key: k })));
    const ids = new Set<string>();
    for (const a of answers) {
      if (a.body.errors) expect(a.body.errors[0].extensions.code).toBe('idempotency_key_in_use');
      else ids.add(a.body.data.createPayment.id);
    }
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => !a.body.errors && a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(await paymentsOfMerchant()).toBe(before + 1);
  });

  it('a 4xx answer is stored and replayed', async () => {
    const k = key('gql-4xx');
    const input = gqlInput({ amount: 5 });
    const first = await gql(CREATE, { input, key: k });
    expect(first.body.errors[0].extensions.code).toBe('amount_too_small');
    const again = await gql(CREATE, { input, key: k });
    expect(again.body.errors[0].extensions.code).toBe('amount_too_small');
    expect(again.body.errors[0].message).toBe(first.body.errors[0].message);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it("the Idempotency-Key header applies to the operation's idempotent mutation", async () => {
    const k = key('gql-header');
    const input = gqlInput();
    const before = await paymentsOfMerchant();
    const first = await gql(CREATE, { input }, { 'Idempotency-Key': k });
    const second = await gql(CREATE, { input }, { 'Idempotency-Key': k });
    expect(second.body.data.createPayment.id).toBe(first.body.data.createPayment.id);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await paymentsOfMerchant()).toBe(before + 1);
    // Invalid keys answer as over REST.
    const bad = await gql(CREATE, { input, key: 'x'.repeat(256) });
    expect(bad.body.errors[0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'Idempotency-Key' });

    // Two idempotent mutations in one operation cannot share the header: the first takes it, the second is refused
    // (createPayment is non-null, so the refusal nulls the whole answer; the first payment exists).
    const count = await paymentsOfMerchant();
    const two = await gql(
      `mutation($a: CreatePaymentInput!, $b: CreatePaymentInput!) {
      a: createPayment(input: $a) { id }
      b: createPayment(input: $b) { id }
    }`,
      { a: gqlInput(), b: gqlInput() },
      { 'Idempotency-Key': key('gql-two') },
    );
    expect(two.body.data).toBeNull();
    expect(two.body.errors).toHaveLength(1);
    expect(two.body.errors[0]).toMatchObject({
      path: ['b'],
      extensions: { code: 'parameter_invalid', param: 'Idempotency-Key' },
    });
    expect(await paymentsOfMerchant()).toBe(count + 1);
  });
});

describe('one key space for REST and GraphQL', () => {
  it('a key used over REST replays over GraphQL for the same request, and is reused for another', async () => {
    const k = key('cross');
    const body = paymentBody();
    const rest = await m.test.post('/payments', body, { 'Idempotency-Key': k });
    expect(rest.status).toBe(201);
    const before = await paymentsOfMerchant();
    const input = {
      amount: body.amount,
      currency: body.currency,
      customerEmail: body.customer_email,
      customerName: body.customer_name,
      successUrl: body.success_url,
      cancelUrl: body.cancel_url,
    };
    const same = await gql(CREATE, { input, key: k });
    expect(same.body.data.createPayment).toMatchObject({
      id: rest.body.id,
      checkoutUrl: rest.body.checkout_url,
      createdAt: rest.body.created_at,
    });
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    const other = await gql(CREATE, { input: { ...input, amount: 1234 }, key: k });
    expect(other.body.errors[0].extensions.code).toBe('idempotency_key_reused');
    expect(await paymentsOfMerchant()).toBe(before);

    // And back: the GraphQL request's key replays over REST with REST's bytes.
    const k2 = key('cross-back');
    const g = await gql(CREATE, { input, key: k2 });
    const r1 = await m.test.post('/payments', body, { 'Idempotency-Key': k2 });
    const r2 = await m.test.post('/payments', body, { 'Idempotency-Key': k2 });
    expect(r1.status).toBe(201);
    expect(r1.body.id).toBe(g.body.data.createPayment.id);
    expect(r1.headers.get('idempotent-replayed')).toBe('true');
    expect(r2.text).toBe(r1.text);
  });
});

describe('refundPayment(idempotencyKey)', () => {
  it('the same key refunds once; another amount is idempotency_key_reused', async () => {
    const created = await m.test.post('/payments', paymentBody({ amount: 10000 }));
    await pay(m.test, created.body);
    const k = key('gql-refund');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => gql(REFUND, { id: created.body.id, input: { amount: 2500 }, key: k })),
    );
    const ids = new Set(answers.filter((a) => !a.body.errors).map((a) => a.body.data.refundPayment.id));
    expect(ids.size).toBe(1);
    for (const a of answers.filter((x) => x.body.errors))
      expect(a.body.errors[0].extensions.code).toBe('idempotency_key_in_use');
    const again = await gql(REFUND, { id: created.body.id, input: { amount: 2500 }, key: k });
    expect(again.body.data.refundPayment.id).toBe([...ids][0]);
    const reused = await gql(REFUND, { id: created.body.id, input: { amount: 1000 }, key: k });
    expect(reused.body.errors[0].extensions.code).toBe('idempotency_key_reused');
    expect(await countRows(t, 'refunds', 'payment_id = ?', [created.body.id])).toBe(1);
    expect((await m.test.get(`/payments/${created.body.id}`)).body.amount_refunded).toBe(2500);
  });
});

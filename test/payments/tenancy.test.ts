import { Client_, HttpResult, TestMerchant, useHarness } from '../harness';
import { errorFingerprint, gqlErrorFingerprint, gqlRequest, unknownId } from '../harness/http';
import { connect, Connected, createPayment, pay, postEvent, stripeEvent } from './helpers';

/**
 * Every payments, refunds, customers and connections route, through another merchant's key and through the same
 * merchant's other mode: the record answers exactly as an unknown id, never appears in a list, and is left alone.
 */

const h = useHarness();
let a: TestMerchant;
let b: TestMerchant;
let aStripe: Connected;
let bStripe: Connected;
const A: { payment: any; refundable: any; customer: string; connection: string } = {} as never;

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
  aStripe = await connect(a.test, 'stripe');
  bStripe = await connect(b.test, 'stripe');
  await connect(a.live, 'stripe');
  await connect(b.live, 'razorpay');
  A.payment = await createPayment(a.test, { customer_email: 'shared@example.com' });
  A.refundable = await createPayment(a.test, { customer_email: 'shared@example.com', amount: 3000 });
  await pay(a.test, A.refundable);
  A.customer = A.payment.customer_id;
  A.connection = aStripe.connection.id;
  // The others have records of their own (same e-mail), so their lists are not trivially empty.
  await createPayment(b.test, { customer_email: 'shared@example.com' });
  await createPayment(a.live, { customer_email: 'shared@example.com' });
});

const strangers = () =>
  [
    ['another merchant', b.test],
    ['the other mode', a.live],
    ['another merchant in the other mode', b.live],
  ] as [string, Client_][];

/** A's records as A sees them, to prove nothing changed. */
async function snapshot() {
  return {
    payment: (await a.test.get(`/payments/${A.payment.id}`)).body,
    refundable: (await a.test.get(`/payments/${A.refundable.id}`)).body,
    customer: (await a.test.get(`/customers/${A.customer}`)).body,
    connections: (await a.test.get('/providers/connections')).body,
  };
}

type Req = { name: string; id: () => string; call: (c: Client_, id: string) => Promise<HttpResult<any>> };
const REST: Req[] = [
  { name: 'GET /payments/{id}', id: () => A.payment.id, call: (c, id) => c.get(`/payments/${id}`) },
  {
    name: 'POST /payments/{id}/refund',
    id: () => A.refundable.id,
    call: (c, id) => c.post(`/payments/${id}/refund`, { amount: 100 }),
  },
  {
    name: 'POST /payments/{id}/refund with Idempotency-Key',
    id: () => A.refundable.id,
    call: (c, id) => c.post(`/payments/${id}/refund`, {}, { 'Idempotency-Key': `k-${Math.random()}` }),
  },
  { name: 'GET /customers/{id}', id: () => A.customer, call: (c, id) => c.get(`/customers/${id}`) },
  {
    name: 'DELETE /providers/connections/{id}',
    id: () => A.connection,
    call: (c, id) => c.delete(`/providers/connections/${id}`),
  },
];

describe.each(REST)('$name', (route) => {
  it('answers 404 exactly as an unknown id, for every other tenant, and changes nothing', async () => {
    const before = await snapshot();
    for (const [label, c] of strangers()) {
      const missing = unknownId();
      const theirs = await route.call(c, route.id());
      const unknown = await route.call(c, missing);
      expect([label, theirs.status]).toEqual([label, 404]);
      expect(theirs.body.error.code).toBe('resource_not_found');
      expect([label, errorFingerprint(theirs, route.id())]).toEqual([label, errorFingerprint(unknown, missing)]);
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('lists', () => {
  it("never show another tenant's payments, customers or connections", async () => {
    for (const [label, c] of strangers()) {
      const payments = await c.get('/payments?limit=100');
      const ids = payments.body.data.map((p: any) => p.id);
      expect([label, ids]).toEqual([label, expect.not.arrayContaining([A.payment.id, A.refundable.id])]);
      const byCustomer = await c.get(`/payments?customer_id=${A.customer}`);
      expect([label, byCustomer.status, byCustomer.body.data]).toEqual([label, 200, []]);
      const customers = await c.get('/customers?limit=100');
      expect([label, customers.body.data.map((x: any) => x.id)]).toEqual([
        label,
        expect.not.arrayContaining([A.customer]),
      ]);
      const byEmail = await c.get('/customers?email=shared@example.com');
      for (const x of byEmail.body.data) expect(x.id).not.toBe(A.customer);
      const conns = await c.get('/providers/connections');
      const connIds = (Array.isArray(conns.body) ? conns.body : conns.body.data).map((x: any) => x.id);
      expect([label, connIds]).toEqual([label, expect.not.arrayContaining([A.connection])]);
    }
    // The same e-mail is a different customer for each tenant.
    const bCustomer = (await b.test.get('/customers?email=shared@example.com')).body.data[0];
    expect(bCustomer.id).not.toBe(A.customer);
    expect(bCustomer.total_lifetime_revenue).toBe(0);
  });
});

describe('GraphQL', () => {
  const ops: { name: string; query: string; id: () => string }[] = [
    { name: 'payment', query: 'query($id: ID!) { payment(id: $id) { id status } }', id: () => A.payment.id },
    { name: 'customer', query: 'query($id: ID!) { customer(id: $id) { id email } }', id: () => A.customer },
    { name: 'refundPayment', query: 'mutation($id: ID!) { refundPayment(id: $id) { id } }', id: () => A.refundable.id },
    {
      name: 'deleteProviderConnection',
      query: 'mutation($id: ID!) { deleteProviderConnection(id: $id) { id } }',
      id: () => A.connection,
    },
  ];
  it.each(ops)('$name answers as for an unknown id', async (op) => {
    const before = await snapshot();
    for (const [label, c] of strangers()) {
      const missing = unknownId();
      const theirs = await gqlRequest(h.app.url, c.key, op.query, { id: op.id() });
      const unknown = await gqlRequest(h.app.url, c.key, op.query, { id: missing });
      expect([label, theirs.body.errors?.[0]?.extensions?.code]).toEqual([label, 'resource_not_found']);
      expect([label, gqlErrorFingerprint(theirs, op.id())]).toEqual([label, gqlErrorFingerprint(unknown, missing)]);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('lists never show the other tenants’ records', async () => {
    for (const [, c] of strangers()) {
      const g = await c.gql(
        '{ payments(first: 100) { edges { node { id } } } customers(first: 100) { edges { node { id } } } providerConnections(first: 100) { edges { node { id } } } }',
      );
      expect(g.errors).toBeUndefined();
      const ids = [
        ...g.data.payments.edges.map((e: any) => e.node.id),
        ...g.data.customers.edges.map((e: any) => e.node.id),
        ...g.data.providerConnections.edges.map((e: any) => e.node.id),
      ];
      for (const id of [A.payment.id, A.refundable.id, A.customer, A.connection]) expect(ids).not.toContain(id);
    }
  });
});

describe('gateway webhooks', () => {
  it("an event about A's payment, sent to B's connection with B's secret, changes nothing at A", async () => {
    const before = await snapshot();
    const p = A.payment;
    const ev = stripeEvent(bStripe.webhookSecret, 'checkout.session.completed', {
      id: p.checkout_session_id,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status: 'paid',
      amount_total: p.amount,
      currency: 'inr',
      client_reference_id: p.id,
      metadata: { payment_id: p.id },
      payment_intent: 'pi_forged',
    });
    const r = await postEvent(bStripe.connection.webhook_url, ev);
    expect(r.status).toBe(200);
    expect(await snapshot()).toEqual(before);
    // Signed with A's secret but sent to B's URL: the signature does not verify there.
    const forged = stripeEvent(aStripe.webhookSecret, 'checkout.session.completed', JSON.parse(ev.payload).data.object);
    expect((await postEvent(bStripe.connection.webhook_url, forged)).status).toBe(400);
    // A's own URL with B's secret: refused too.
    expect(
      (
        await postEvent(
          aStripe.connection.webhook_url,
          stripeEvent(bStripe.webhookSecret, 'checkout.session.completed', {}),
        )
      ).status,
    ).toBe(400);
    expect(await snapshot()).toEqual(before);
    expect((await a.test.get(`/payments/${p.id}`)).body.status).toBe('pending');
  });

  it("an event to A's URL under the wrong provider answers 404", async () => {
    const url = aStripe.connection.webhook_url.replace('/stripe/', '/razorpay/');
    const r = await postEvent(url, stripeEvent(aStripe.webhookSecret, 'checkout.session.completed', {}));
    expect(r.status).toBe(404);
  });
});

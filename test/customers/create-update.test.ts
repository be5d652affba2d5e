import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { gstinCheckCharacter } from '../../src/core/gstin';
import { createPayment, connect } from '../payments/helpers';
import { ok } from '../subscriptions/helpers';

/**
 * Customers made before any purchase (docs/payments.md, "Customers"): POST /customers and POST /customers/{id} and
 * the createCustomer / updateCustomer mutations; e-mail unique per merchant and mode (409 customer_exists, also under
 * racing writes), GSTIN and state code rules, validation that changes nothing, tenancy, Idempotency-Key.
 */

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;
beforeAll(async () => {
  m = await h.merchant();
  other = await h.merchant();
});

const rnd = () => crypto.randomBytes(4).toString('hex');
const email = () => `c-${rnd()}@example.com`;
/** A GSTIN of `state` with a correct check character. */
const gstin = (state = '27', pan = 'AAPFU0939F') => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const byEmail = async (c: TestMerchant['test'], e: string) =>
  (await ok(c.get(`/customers?email=${encodeURIComponent(e)}`))).data;

describe('POST /customers', () => {
  it('makes a customer (201) with every field; GET and the list show the same object', async () => {
    const e = email();
    const g = gstin('27');
    const created = await ok(
      m.test.post('/customers', {
        email: e.toUpperCase(),
        name: 'Priya Shah',
        phone: '+91 98765 43210',
        state_code: '27',
        gstin: g.toLowerCase(),
        address: '12 MG Road, Pune 411001',
        metadata: { crm_id: 'A-17' },
      }),
      201,
    );
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'customer',
      email: e,
      name: 'Priya Shah',
      phone: '+91 98765 43210',
      state_code: '27',
      gstin: g,
      address: '12 MG Road, Pune 411001',
      metadata: { crm_id: 'A-17' },
      active_subscription_count: 0,
      total_lifetime_revenue: 0,
      lifetime_revenue: [],
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    expect(await ok(m.test.get(`/customers/${created.id}`))).toEqual(created);
    expect(await byEmail(m.test, e)).toEqual([created]);

    // Only the e-mail is required; the rest starts empty.
    const bare = await ok(m.test.post('/customers', { email: email() }), 201);
    expect(bare).toMatchObject({ name: null, phone: null, state_code: null, gstin: null, address: null, metadata: {} });
  });

  it('createCustomer and updateCustomer over GraphQL answer as REST does', async () => {
    const e = email();
    const r = await m.test.gql(
      `mutation($input: CreateCustomerInput!) { createCustomer(input: $input) {
        id email name stateCode gstin address metadata livemode activeSubscriptionCount totalLifetimeRevenue } }`,
      { input: { email: e, name: 'Ravi', stateCode: '29', address: 'Bengaluru' } },
    );
    expect(r.errors).toBeUndefined();
    const c = r.data.createCustomer;
    expect(c).toMatchObject({ email: e, name: 'Ravi', stateCode: '29', gstin: null, address: 'Bengaluru' });
    expect(c).toMatchObject({ metadata: {}, livemode: false, activeSubscriptionCount: 0, totalLifetimeRevenue: 0 });

    const u = await m.test.gql(
      `mutation($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { id name stateCode gstin address } }`,
      { id: c.id, input: { gstin: gstin('29'), address: null } },
    );
    expect(u.errors).toBeUndefined();
    expect(u.data.updateCustomer).toEqual({
      id: c.id,
      name: 'Ravi',
      stateCode: '29',
      gstin: gstin('29'),
      address: null,
    });
    expect(await ok(m.test.get(`/customers/${c.id}`))).toMatchObject({ gstin: gstin('29'), address: null });

    const dup = await m.test.gql(`mutation($input: CreateCustomerInput!) { createCustomer(input: $input) { id } }`, {
      input: { email: e.toUpperCase() },
    });
    expect(dup.errors![0].extensions).toMatchObject({ code: 'customer_exists', http: { status: 409 } });
  });

  it('an e-mail in use (made here or by a payment) answers 409 customer_exists naming the customer', async () => {
    const e = email();
    const first = await ok(m.test.post('/customers', { email: e }), 201);
    const again = await m.test.post('/customers', { email: e.toUpperCase(), name: 'Other' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'customer_exists', param: 'email' });
    expect(again.body.error.message).toContain(first.id);
    expect((await ok(m.test.get(`/customers/${first.id}`))).name).toBeNull(); // unchanged

    await connect(m.test, 'stripe');
    const paid = email();
    const p = await createPayment(m.test, { customer_email: paid });
    const taken = await m.test.post('/customers', { email: paid });
    expect(taken.status).toBe(409);
    expect(taken.body.error.message).toContain(p.customer_id);

    // The same e-mail in the other mode, or at another merchant, is another customer.
    expect((await m.live.post('/customers', { email: e })).status).toBe(201);
    expect((await other.test.post('/customers', { email: e })).status).toBe(201);
  });

  it('accepts Idempotency-Key: the same request replays the first answer, another request is refused', async () => {
    const key = `cust-${rnd()}`;
    const body = { email: email(), name: 'Idem' };
    const a = await m.test.post('/customers', body, { 'Idempotency-Key': key });
    const b = await m.test.post('/customers', body, { 'Idempotency-Key': key });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.text).toBe(a.text);
    const c = await m.test.post('/customers', { ...body, name: 'Changed' }, { 'Idempotency-Key': key });
    expect(c.status).toBe(400);
    expect(c.body.error.code).toBe('idempotency_key_reused');
    expect(await byEmail(m.test, body.email)).toHaveLength(1);
  });
});

describe('validation changes nothing', () => {
  const BAD: [string, Record<string, unknown>, string, string | null][] = [
    ['a malformed e-mail', { email: 'not-an-email' }, 'email', null],
    ['no e-mail', {}, 'email', 'parameter_missing'],
    ['an e-mail that is not a string', { email: 42 }, 'email', null],
    ['a GSTIN with a wrong check character', { gstin: gstin('27').slice(0, 14) + 'A' }, 'gstin', null],
    ['a GSTIN of a state that does not exist', { gstin: gstin('40') }, 'gstin', null],
    ['a GSTIN of 14 characters', { gstin: gstin('27').slice(0, 14) }, 'gstin', null],
    ['a state code that does not exist', { state_code: '40' }, 'state_code', null],
    ['state code 00', { state_code: '00' }, 'state_code', null],
    ['a state code of one digit', { state_code: '7' }, 'state_code', null],
    ['a state code that is a number', { state_code: 27 }, 'state_code', null],
    ['a malformed phone', { phone: 'call me' }, 'phone', null],
    ['an address over 500 characters', { address: 'x'.repeat(501) }, 'address', null],
    ['metadata that is not an object', { metadata: 'x' }, 'metadata', null],
    ['a metadata value that is not a string', { metadata: { a: 1 } }, 'metadata.a', null],
    ['a name that is not a string', { name: 5 }, 'name', null],
    ['an unknown field', { nickname: 'P' }, 'nickname', 'parameter_unknown'],
    ['a camelCase field', { stateCode: '27' }, 'stateCode', 'parameter_unknown'],
  ];

  it.each(BAD)('create with %s: 400 naming the field, no customer', async (_, fields, param, code) => {
    const e = email();
    const body = 'email' in fields || code === 'parameter_missing' ? fields : { email: e, ...fields };
    const r = await m.test.post('/customers', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: code ?? 'parameter_invalid',
      param,
    });
    expect(await byEmail(m.test, e)).toEqual([]);
  });

  it.each(BAD.filter(([, , param]) => param !== 'email'))(
    'update with %s: 400 naming the field, the customer unchanged',
    async (_, fields, param, code) => {
      const c = await ok(m.test.post('/customers', { email: email(), name: 'Kept', state_code: '27' }), 201);
      const r = await m.test.post(`/customers/${c.id}`, fields);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: code ?? 'parameter_invalid', param });
      expect(await ok(m.test.get(`/customers/${c.id}`))).toEqual(c);
    },
  );

  it('update refuses clearing or mangling the e-mail, changing nothing', async () => {
    const c = await ok(m.test.post('/customers', { email: email() }), 201);
    for (const [body, param] of [
      [{ email: null }, 'email'],
      [{ email: 'nope' }, 'email'],
    ] as const) {
      const r = await m.test.post(`/customers/${c.id}`, body);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param });
    }
    expect(await ok(m.test.get(`/customers/${c.id}`))).toEqual(c);
  });

  it('a GSTIN is accepted in any case and kept upper case; 97 and 99 are state codes', async () => {
    const g = gstin('97');
    const c = await ok(m.test.post('/customers', { email: email(), gstin: g.toLowerCase(), state_code: '99' }), 201);
    expect(c).toMatchObject({ gstin: g, state_code: '99' });
  });
});

describe('POST /customers/{id}', () => {
  it('changes the given fields, keeps omitted ones, clears nulls, replaces metadata whole', async () => {
    const c = await ok(
      m.test.post('/customers', {
        email: email(),
        name: 'Asha',
        phone: '+91 90000 00000',
        state_code: '27',
        address: 'Mumbai',
        metadata: { a: '1', b: '2' },
      }),
      201,
    );
    const newEmail = email();
    const u = await ok(
      m.test.post(`/customers/${c.id}`, { email: newEmail.toUpperCase(), phone: null, metadata: { c: '3' } }),
    );
    expect(u).toMatchObject({
      id: c.id,
      email: newEmail,
      name: 'Asha',
      phone: null,
      state_code: '27',
      address: 'Mumbai',
      metadata: { c: '3' },
    });
    expect(Date.parse(u.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    expect(await ok(m.test.get(`/customers/${c.id}`))).toEqual(u);
    expect(await byEmail(m.test, c.email)).toEqual([]);
    // An empty body changes nothing.
    expect(await ok(m.test.post(`/customers/${c.id}`, {}))).toEqual(u);
    // metadata null clears it.
    expect((await ok(m.test.post(`/customers/${c.id}`, { metadata: null }))).metadata).toEqual({});
  });

  it("moving to another customer's e-mail answers 409 customer_exists and changes nothing", async () => {
    const a = await ok(m.test.post('/customers', { email: email() }), 201);
    const b = await ok(m.test.post('/customers', { email: email(), name: 'B' }), 201);
    const r = await m.test.post(`/customers/${b.id}`, { email: a.email, name: 'Renamed' });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: 'customer_exists', param: 'email' });
    expect(await ok(m.test.get(`/customers/${b.id}`))).toEqual(b);
    // Its own e-mail is no conflict.
    expect((await ok(m.test.post(`/customers/${b.id}`, { email: b.email.toUpperCase() }))).email).toBe(b.email);
  });

  it("another merchant's or the other mode's customer is 404 over both transports, and stays unchanged", async () => {
    const c = await ok(m.test.post('/customers', { email: email(), name: 'Mine' }), 201);
    for (const client of [m.live, other.test]) {
      expect((await client.get(`/customers/${c.id}`)).status).toBe(404);
      const r = await client.post(`/customers/${c.id}`, { name: 'Stolen' });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'resource_not_found' });
      const g = await client.gql(`mutation($id: ID!) { updateCustomer(id: $id, input: { name: "Stolen" }) { id } }`, {
        id: c.id,
      });
      expect(g.errors![0].extensions.code).toBe('resource_not_found');
    }
    for (const id of [unknownId(), 'nope'])
      expect((await m.test.post(`/customers/${id}`, { name: 'x' })).status).toBe(404);
    expect((await ok(m.test.get(`/customers/${c.id}`))).name).toBe('Mine');
  });
});

describe('racing writes (real PostgreSQL)', () => {
  it('concurrent creates of one e-mail: exactly one 201, the others 409, one customer', async () => {
    for (let round = 0; round < 3; round++) {
      const e = email();
      const rs = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          m.test.post('/customers', { email: i % 2 ? e : e.toUpperCase(), name: `n${i}` }),
        ),
      );
      expect(rs.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
      const winner = rs.find((r) => r.status === 201)!.body;
      for (const r of rs.filter((x) => x.status === 409)) expect(r.body.error.message).toContain(winner.id);
      expect((await byEmail(m.test, e)).map((c: any) => c.id)).toEqual([winner.id]);
    }
  });

  it('a create racing payments for the same new e-mail: one customer, either 201 or 409 naming it', async () => {
    await connect(m.test, 'razorpay').catch(() => undefined);
    const e = email();
    const [made, ...payments] = await Promise.all([
      m.test.post('/customers', { email: e }),
      ...Array.from({ length: 4 }, () =>
        m.test.post('/payments', {
          amount: 1000,
          customer_email: e,
          success_url: 'https://x.example/ok',
          cancel_url: 'https://x.example/no',
        }),
      ),
    ]);
    const ids = new Set(payments.map((p) => p.body.customer_id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    if (made.status === 201) expect(made.body.id).toBe(id);
    else expect([made.status, made.body.error.message.includes(id)]).toEqual([409, true]);
    expect(await byEmail(m.test, e)).toHaveLength(1);
  });

  it('concurrent updates of one customer each keep the fields of the others', async () => {
    const c = await ok(m.test.post('/customers', { email: email() }), 201);
    const rs = await Promise.all([
      m.test.post(`/customers/${c.id}`, { name: 'Name' }),
      m.test.post(`/customers/${c.id}`, { phone: '+91 91234 56789' }),
      m.test.post(`/customers/${c.id}`, { state_code: '07' }),
      m.test.post(`/customers/${c.id}`, { address: 'Delhi' }),
      m.test.post(`/customers/${c.id}`, { metadata: { k: 'v' } }),
    ]);
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await ok(m.test.get(`/customers/${c.id}`))).toMatchObject({
      name: 'Name',
      phone: '+91 91234 56789',
      state_code: '07',
      address: 'Delhi',
      metadata: { k: 'v' },
    });
  });

  it('concurrent updates moving two customers to one free e-mail: one 200, one 409', async () => {
    for (let round = 0; round < 3; round++) {
      const a = await ok(m.test.post('/customers', { email: email() }), 201);
      const b = await ok(m.test.post('/customers', { email: email() }), 201);
      const target = email();
      const rs = await Promise.all([
        m.test.post(`/customers/${a.id}`, { email: target }),
        m.test.post(`/customers/${b.id}`, { email: target }),
      ]);
      expect(rs.map((r) => r.status).sort()).toEqual([200, 409]);
      const won = rs.find((r) => r.status === 200)!.body.id;
      const lost = won === a.id ? b : a;
      expect(rs.find((r) => r.status === 409)!.body.error).toMatchObject({ code: 'customer_exists', param: 'email' });
      expect((await byEmail(m.test, target)).map((x: any) => x.id)).toEqual([won]);
      expect((await ok(m.test.get(`/customers/${lost.id}`))).email).toBe(lost.email);
    }
  });
});

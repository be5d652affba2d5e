import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { gstinCheckCharacter } from '../../src/core/gstin';
import { connect, createPayment, pay } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { createEntitlement, link } from '../entitlements/helpers';

/**
 * A customer made before any purchase (POST /customers) is a customer like any other (docs/payments.md,
 * "Customers"): entitlement evaluation (none yet) and resolve work for it at once, and payments and subscriptions take
 * it as `customer_id` (their `customer_email`, when also given, must be its e-mail; their details fill in what it
 * lacks). Another merchant's or mode's customer is 404 everywhere. Invoices state its address as their recipient's.
 */

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;
beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
  other = await h.merchant();
  await connect(m.test, 'stripe');
  await connect(m.live, 'stripe');
  await connect(other.test, 'stripe');
});

const rnd = () => crypto.randomBytes(4).toString('hex');
const email = () => `pre-${rnd()}@example.com`;
const newCustomer = (c: TestMerchant['test'], body: Record<string, unknown> = {}) =>
  ok(c.post('/customers', { email: email(), ...body }), 201);
const gstin = (state: string) => `${state}AAPFU0939F1Z` + gstinCheckCharacter(`${state}AAPFU0939F1Z`);

describe('a customer made before any purchase', () => {
  it('has no entitlements yet (REST and GraphQL), and resolve answers for it', async () => {
    const c = await newCustomer(m.test);
    const e = await ok(m.test.get(`/subscriptions/customer/${c.id}/entitlements`));
    expect(e).toEqual({ customer_id: c.id, entitlements: [] });
    const g = await m.test.gql(
      `query($id: ID!) { customerEntitlements(customerId: $id) { customerId entitlements { lookupKey } } }`,
      { id: c.id },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.customerEntitlements).toEqual({ customerId: c.id, entitlements: [] });

    const r = await ok(m.test.post('/offerings/resolve', { customer_id: c.id, attributes: { country: 'IN' } }));
    expect(r).toEqual({ customer_id: c.id, offering: null, paywall: null, experiment: null });
    const rg = await m.test.gql(
      `mutation($input: ResolveOfferingInput!) { resolveOffering(input: $input) { customerId offering { id } } }`,
      { input: { customerId: c.id } },
    );
    expect(rg.errors).toBeUndefined();
    expect(rg.data.resolveOffering).toEqual({ customerId: c.id, offering: null });
  });

  it('is 404 to another merchant and to the other mode: entitlements, resolve, payments, subscriptions', async () => {
    const c = await newCustomer(m.test);
    const { plan } = await recurringPlan(other.test);
    for (const client of [m.live, other.test]) {
      const e = await client.get(`/subscriptions/customer/${c.id}/entitlements`);
      expect(e.status).toBe(404);
      const r = await client.post('/offerings/resolve', { customer_id: c.id });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'resource_not_found', param: 'customer_id' });
      const p = await client.post('/payments', {
        amount: 5000,
        customer_id: c.id,
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
      });
      expect(p.status).toBe(404);
      expect(p.body.error).toMatchObject({ code: 'resource_not_found', param: 'customer_id' });
    }
    const s = await other.test.post('/subscriptions', {
      plan_id: plan.id,
      customer_id: c.id,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(s.status).toBe(404);
    expect(s.body.error).toMatchObject({ code: 'resource_not_found', param: 'customer_id' });
    expect((await ok(other.test.get('/payments?limit=100'))).data.every((p: any) => p.customer_id !== c.id)).toBe(true);
    // And an id nobody has: 404 before anything reaches the gateway.
    const unknown = await m.test.post('/payments', {
      amount: 5000,
      customer_id: unknownId(),
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(unknown.status).toBe(404);
  });

  it('pays a payment as customer_id; customer_email must then be its e-mail; details fill in what it lacks', async () => {
    const c = await newCustomer(m.test, { name: 'Kiran' });
    const p = await createPayment(m.test, {
      customer_email: undefined,
      customer_name: undefined,
      customer_id: c.id,
      customer_phone: '+91 99999 11111',
      amount: 10000,
    });
    expect(p).toMatchObject({ customer_id: c.id, customer_email: c.email, customer_name: 'Kiran' });
    expect(p.customer_phone).toBe('+91 99999 11111');
    await pay(m.test, p);
    const after = await ok(m.test.get(`/customers/${c.id}`));
    expect(after).toMatchObject({ name: 'Kiran', phone: '+91 99999 11111', total_lifetime_revenue: 10000 });

    // The same e-mail in another case agrees; a name given does not replace the record's.
    const p2 = await createPayment(m.test, {
      customer_id: c.id,
      customer_email: c.email.toUpperCase(),
      customer_name: 'Someone Else',
    });
    expect(p2.customer_id).toBe(c.id);
    expect((await ok(m.test.get(`/customers/${c.id}`))).name).toBe('Kiran');

    const before = (await ok(m.test.get(`/payments?customer_id=${c.id}&limit=100`))).data.length;
    const mismatch = await m.test.post('/payments', {
      amount: 5000,
      customer_id: c.id,
      customer_email: 'someone-else@example.com',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_email' });
    const badGstin = await m.test.post('/payments', {
      amount: 5000,
      customer_id: c.id,
      customer_gstin: '27AAPFU0939F1ZZ',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(badGstin.status).toBe(400);
    expect(badGstin.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_gstin' });
    expect((await ok(m.test.get(`/payments?customer_id=${c.id}&limit=100`))).data).toHaveLength(before);

    // Neither customer_id nor customer_email: 400 parameter_missing.
    const none = await m.test.post('/payments', {
      amount: 5000,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ code: 'parameter_missing', param: 'customer_email' });

    // GraphQL takes customerId too.
    const g = await m.test.gql(
      `mutation($input: CreatePaymentInput!) { createPayment(input: $input) { customerId customerEmail } }`,
      {
        input: {
          amount: 5000,
          customerId: c.id,
          successUrl: 'https://shop.example/ok',
          cancelUrl: 'https://shop.example/no',
        },
      },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.createPayment).toEqual({ customerId: c.id, customerEmail: c.email });
  });

  it('subscribes as customer_id and then holds the entitlements of the product', async () => {
    const c = await newCustomer(m.test);
    const { product, plan } = await recurringPlan(m.test);
    const ent = await createEntitlement(m.test);
    await link(m.test, ent.id, [product.id]);
    expect((await ok(m.test.get(`/subscriptions/customer/${c.id}/entitlements`))).entitlements).toEqual([]);

    const mismatch = await m.test.post('/subscriptions', {
      plan_id: plan.id,
      customer_id: c.id,
      customer_email: email(),
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({ code: 'parameter_invalid', param: 'customer_email' });

    const sub = await createSubscription(m.test, plan.id, {
      customer_id: c.id,
      customer_email: c.email,
      customer_state_code: '29',
    });
    expect(sub.customer_id).toBe(c.id);
    // The state it lacked is filled in.
    expect((await ok(m.test.get(`/customers/${c.id}`))).state_code).toBe('29');
    expect((await authorise(m.test, sub)).subscription.status).toBe('active');
    const e = await ok(m.test.get(`/subscriptions/customer/${c.id}/entitlements`));
    expect(e.entitlements.map((x: any) => [x.lookup_key, x.subscription_ids])).toEqual([[ent.lookup_key, [sub.id]]]);
    expect((await ok(m.test.get(`/customers/${c.id}`))).active_subscription_count).toBe(1);
  });

  it("invoices state the customer's address at issue; a later change leaves them as issued", async () => {
    const g = await h.merchant({ reporting_currency: 'INR', gstin: '29ABCDE1234F1ZW' });
    await connect(g.test, 'stripe');
    const c = await newCustomer(g.test, {
      name: 'Meera Traders',
      gstin: gstin('27'),
      address: '4 Linking Road, Mumbai 400050',
    });
    const p = await createPayment(g.test, { customer_id: c.id, customer_email: undefined, amount: 10000 });
    // Its GSTIN (Maharashtra) places the supply outside Karnataka: IGST.
    expect(p.tax_amount).toBe(1800);
    await pay(g.test, p);
    const [invoice] = (await ok(g.test.get(`/invoices?customer_id=${c.id}`))).data;
    expect(invoice.recipient).toEqual({
      name: 'Meera Traders',
      email: c.email,
      gstin: gstin('27'),
      state_code: '27',
      address: '4 Linking Road, Mumbai 400050',
    });
    expect(invoice.igst_amount).toBe(1800);

    await ok(g.test.post(`/customers/${c.id}`, { address: 'Elsewhere', name: 'Renamed' }));
    const again = await ok(g.test.get(`/invoices/${invoice.id}`));
    expect(again.recipient).toEqual(invoice.recipient);
  });
});

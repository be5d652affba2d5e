import { TestMerchant, useHarness } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * Customers are found or created by e-mail from payments; lifetime revenue = what the customer paid (paid invoices,
 * subscriptions included, and payments no invoice records) less refunds (docs/payments.md).
 */

const h = useHarness();
let m: TestMerchant;
beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
  await connect(m.test, 'stripe');
  await connect(m.test, 'razorpay');
  await connect(m.live, 'razorpay');
});

describe('customers', () => {
  it('are found or created by e-mail, per merchant and mode, and show lifetime revenue less refunds', async () => {
    const email = 'Priya.Shah@Example.com';
    const a = await createPayment(m.test, {
      customer_email: email,
      customer_name: 'Priya Shah',
      amount: 10000,
      customer_state_code: '27',
    });
    const b = await createPayment(m.test, {
      customer_email: email.toLowerCase(),
      amount: 5000,
      provider: 'razorpay',
      customer_phone: '+91 98765 43210',
    });
    const usd = await createPayment(m.test, { customer_email: email, amount: 2000, currency: 'usd' });
    const pending = await createPayment(m.test, { customer_email: email, amount: 7000 });
    const failed = await createPayment(m.test, { customer_email: email, amount: 9000 });
    expect(new Set([a, b, usd, pending, failed].map((p) => p.customer_id)).size).toBe(1);
    const id = a.customer_id;

    await pay(m.test, a);
    await pay(m.test, b);
    await pay(m.test, usd);
    await pay(m.test, failed, { outcome: 'success', card_number: '4000000000000002' });
    expect((await m.test.post(`/payments/${a.id}/refund`, { amount: 2500 })).status).toBe(201);
    expect((await m.test.post(`/payments/${usd.id}/refund`, {})).status).toBe(201);

    const c = await m.test.get(`/customers/${id}`);
    expect(c.status).toBe(200);
    expect(c.body).toMatchObject({
      id,
      object: 'customer',
      email: 'priya.shah@example.com',
      name: 'Priya Shah',
      phone: '+91 98765 43210', // filled from the later payment, never overwritten
      state_code: '27',
      gstin: null,
      active_subscription_count: 0,
      total_lifetime_revenue: 10000 - 2500 + 5000, // INR, the reporting currency
      livemode: false,
    });
    expect(c.body.created_at).toMatch(/Z$/);
    const revenue = [...c.body.lifetime_revenue].sort((x: any, y: any) => x.currency.localeCompare(y.currency));
    // Pending and failed payments count for nothing; a fully refunded USD payment nets 0.
    expect(revenue).toEqual([
      { currency: 'INR', amount: 12500 },
      { currency: 'USD', amount: 0 },
    ]);

    const g = await m.test.gql(
      `query($id: ID!) { customer(id: $id) { id email activeSubscriptionCount totalLifetimeRevenue lifetimeRevenue { currency amount } } }`,
      { id },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.customer).toMatchObject({
      id,
      email: 'priya.shah@example.com',
      activeSubscriptionCount: 0,
      totalLifetimeRevenue: 12500,
    });

    // Live mode has its own customer for the same e-mail.
    const live = await createPayment(m.live, { customer_email: email, amount: 3000 });
    expect(live.customer_id).not.toBe(id);
    await pay(m.live, live);
    expect((await m.test.get(`/customers/${id}`)).body.total_lifetime_revenue).toBe(12500);
    const lc = await m.live.get(`/customers/${live.customer_id}`);
    expect(lc.body).toMatchObject({ email: 'priya.shah@example.com', total_lifetime_revenue: 3000, livemode: true });
  });

  it('GET /customers lists newest first and filters by e-mail without regard to case', async () => {
    const emails = ['one@example.com', 'two@example.com', 'three@example.com'];
    const ids: string[] = [];
    for (const e of emails) ids.push((await createPayment(m.test, { customer_email: e })).customer_id);

    const all = await m.test.get('/customers?limit=100');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const order = all.body.data.map((c: any) => c.id).filter((x: string) => ids.includes(x));
    expect(order).toEqual([...ids].reverse());
    for (const c of all.body.data) expect(c).toHaveProperty('lifetime_revenue');

    const one = await m.test.get('/customers?email=TWO@Example.com');
    expect(one.body.data.map((c: any) => c.id)).toEqual([ids[1]]);
    const none = await m.test.get('/customers?email=nobody@example.com');
    expect(none.body).toMatchObject({ object: 'list', data: [], has_more: false });

    const page = await m.test.get('/customers?limit=2');
    expect(page.body.data).toHaveLength(2);
    expect(page.body.has_more).toBe(true);
    const next = await m.test.get(`/customers?limit=2&cursor=${encodeURIComponent(page.body.next_cursor)}`);
    expect(next.status).toBe(200);
    expect(next.body.data[0].id).not.toBe(page.body.data[1].id);

    const bad = await m.test.get('/customers?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('limit');
  });

  it('concurrent payments for a new e-mail create one customer', async () => {
    const email = `race-${Date.now()}@example.com`;
    const payments = await Promise.all(
      Array.from({ length: 10 }, () => createPayment(m.test, { customer_email: email })),
    );
    expect(new Set(payments.map((p) => p.customer_id)).size).toBe(1);
    const list = await m.test.get(`/customers?email=${encodeURIComponent(email)}`);
    expect(list.body.data).toHaveLength(1);
  });

  it('lifetime revenue counts every paid invoice of a subscription (its renewal too), a one-off payment once, less its refund; GST included', async () => {
    const DAY = 86_400_000;
    const g = await h.merchant({ reporting_currency: 'INR', gstin: '29ABCDE1234F1ZW' });
    await connect(g.test, 'stripe');
    const { plan } = await recurringPlan(g.test); // INR 49900 a month, tax-exclusive
    const email = `lifetime-${Date.now()}@example.com`;
    const sub = await createSubscription(g.test, plan.id, { customer_email: email, customer_state_code: '29' });
    expect((await authorise(g.test, sub)).subscription.status).toBe('active');
    const id = sub.customer_id;
    // A subscription alone: its first invoice, 49900 + CGST 4491 + SGST 4491 = 58882 paid.
    expect(await ok(g.test.get(`/customers/${id}`))).toMatchObject({
      total_lifetime_revenue: 58882,
      lifetime_revenue: [{ currency: 'INR', amount: 58882 }],
    });

    // A month on the test clock: the renewal is charged and its invoice paid.
    await h.clock.advance(g, new Date((await h.clock.now(g)).getTime() + 32 * DAY));
    expect((await ok(g.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    // A one-off payment of 10000 (+ 1800 GST = 11800 charged), which also has its invoice; 2950 of it refunded
    // (refund amounts are money returned, GST included: docs/payments.md).
    const p = await createPayment(g.test, { customer_email: email, amount: 10000 });
    expect(p.customer_id).toBe(id);
    await pay(g.test, p);
    const refund = await ok(g.test.post(`/payments/${p.id}/refund`, { amount: 2950 }), 201);

    const invoices = (await ok(g.test.get(`/invoices?customer_id=${id}&limit=100`))).data.filter(
      (i: any) => i.type === 'invoice',
    );
    const bySubscription = invoices.filter((i: any) => i.subscription_id === sub.id);
    expect(bySubscription.map((i: any) => [i.status, i.amount_paid])).toEqual([
      ['paid', 58882],
      ['paid', 58882],
    ]);
    expect(invoices.filter((i: any) => i.payment_id === p.id).map((i: any) => i.amount_paid)).toEqual([11800]);
    const paid = invoices.reduce((n: number, i: any) => n + i.amount_paid, 0);
    const returned = refund.gateway_amount;
    expect(returned).toBe(2950);
    const expected = 2 * 58882 + 11800 - 2950; // 126614: the payment counted once (through its invoice)
    expect(paid - returned).toBe(expected);

    const c = await ok(g.test.get(`/customers/${id}`));
    expect(c).toMatchObject({
      total_lifetime_revenue: expected,
      lifetime_revenue: [{ currency: 'INR', amount: expected }],
      active_subscription_count: 1,
    });
    const q = await g.test.gql(
      `query($id: ID!) { customer(id: $id) { totalLifetimeRevenue lifetimeRevenue { currency amount } } }`,
      { id },
    );
    expect(q.data.customer).toEqual({
      totalLifetimeRevenue: expected,
      lifetimeRevenue: [{ currency: 'INR', amount: expected }],
    });
    const listed = (await ok(g.test.get(`/customers?email=${encodeURIComponent(email)}`))).data[0];
    expect(listed.lifetime_revenue).toEqual([{ currency: 'INR', amount: expected }]);
  });

  it('an unknown or malformed id answers 404', async () => {
    for (const id of ['01900000-0000-7000-8000-000000000000', 'nope']) {
      const r = await m.test.get(`/customers/${id}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
    }
  });
});

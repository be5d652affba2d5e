import { TestMerchant, useHarness } from '../harness';
import { connect, createPayment, outbox, paymentBody, PROVIDERS } from './helpers';

/** The whole one-off payment flow through each adapter against the gateway sandbox. */

const h = useHarness();

describe.each(PROVIDERS)('payment flow through %s', (provider) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
  });

  it('connects, creates, completes checkout by posting the form, applies the webhook and refunds', async () => {
    const { connection } = await connect(m.test, provider);
    expect(connection).toMatchObject({
      object: 'provider_connection',
      provider,
      mode: 'test',
      status: 'active',
      is_default: true,
    });
    expect(connection.webhook_url).toBe(`${h.app.url}/v1/providers/${provider}/webhooks/${connection.id}`);

    const body = paymentBody({
      currency: undefined,
      reference_id: 'order-42',
      metadata: { cart: '7' },
      customer_phone: '+919876543210',
    });
    const created = await m.test.post('/payments', body);
    expect(created.status).toBe(201);
    const p = created.body;
    expect(p).toMatchObject({
      object: 'payment',
      amount: 49900,
      amount_refunded: 0,
      currency: 'INR', // omitted: INR
      status: 'pending',
      customer_email: body.customer_email,
      customer_name: 'Asha Rao',
      customer_phone: '+919876543210',
      reference_id: 'order-42',
      metadata: { cart: '7' },
      provider,
      failure_reason: null,
      livemode: false,
    });
    expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.customer_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.checkout_session_id).toBeTruthy();
    expect(p.checkout_url.startsWith(`${h.app.app.sandboxUrl}/checkout/`)).toBe(true);
    expect(p.success_url).toBe(`https://merchant.example/thanks?payment=${p.id}&session={CHECKOUT_SESSION_ID}`);
    expect(p.cancel_url).toBe(`https://merchant.example/cart?payment=${p.id}`);
    expect(p.created_at).toMatch(/Z$/);
    expect(p.updated_at).toMatch(/Z$/);

    // The hosted page is an HTML form.
    const page = await fetch(p.checkout_url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<form method="post"');
    expect(html).toContain('₹499.00');

    const done = await h.sandbox.submitCheckout(p.checkout_url, {
      outcome: 'success',
      method: 'card',
      card_number: '4242424242424242',
    });
    expect(done.status).toBe(303);
    const redirect = new URL(done.location!);
    expect(`${redirect.origin}${redirect.pathname}`).toBe('https://merchant.example/thanks');
    expect(redirect.searchParams.get('payment')).toBe(p.id);
    expect(redirect.searchParams.get('session')).toBe(p.checkout_session_id);

    // By the time the redirect is answered the webhook has been applied.
    const paid = await m.test.get(`/payments/${p.id}`);
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ id: p.id, status: 'succeeded', failure_reason: null, amount_refunded: 0 });
    expect(paid.body.provider_payment_id).toBeTruthy();

    const succeeded = await outbox(h.app, m.id, 'payment.succeeded');
    expect(succeeded).toHaveLength(1);
    expect(succeeded[0].mode).toBe('test');
    expect(succeeded[0].payload).toMatchObject({
      object: 'event',
      type: 'payment.succeeded',
      livemode: false,
      data: { object: { id: p.id, object: 'payment', status: 'succeeded' } },
    });
    expect(succeeded[0].payload.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(succeeded[0].payload.created_at).toMatch(/Z$/);

    // Partial refund, then the remainder.
    const r1 = await m.test.post(`/payments/${p.id}/refund`, { amount: 10000, reason: 'requested_by_customer' });
    expect(r1.status).toBe(201);
    expect(r1.body).toMatchObject({
      object: 'refund',
      payment_id: p.id,
      amount: 10000,
      currency: 'INR',
      reason: 'requested_by_customer',
    });
    expect(['pending', 'succeeded']).toContain(r1.body.status);
    expect(r1.body.provider_refund_id).toBeTruthy();
    const partial = await m.test.get(`/payments/${p.id}`);
    expect(partial.body).toMatchObject({ status: 'partially_refunded', amount_refunded: 10000 });

    const r2 = await m.test.post(`/payments/${p.id}/refund`, {});
    expect(r2.status).toBe(201);
    expect(r2.body.amount).toBe(39900);
    const full = await m.test.get(`/payments/${p.id}`);
    expect(full.body).toMatchObject({ status: 'refunded', amount_refunded: 49900 });

    const refunded = await outbox(h.app, m.id, 'payment.refunded');
    expect(refunded.map((e) => e.payload.data.object.status)).toEqual(['partially_refunded', 'refunded']);

    const again = await m.test.post(`/payments/${p.id}/refund`, { amount: 100 });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payment_not_refundable' });

    // GraphQL shows the same payment with its refunds.
    const g = await m.test.gql(
      `query($id: ID!) { payment(id: $id) { id status amountRefunded provider refunds { amount status } } }`,
      { id: p.id },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.payment).toMatchObject({
      id: p.id,
      status: 'REFUNDED',
      amountRefunded: 49900,
      provider: provider.toUpperCase(),
    });
    expect(g.data.payment.refunds.map((r: any) => r.amount)).toEqual([10000, 39900]);
  });

  it('lists payments newest first with status and customer filters', async () => {
    const email = `list-${provider}@example.com`;
    const a = await createPayment(m.test, { customer_email: email });
    const b = await createPayment(m.test, { customer_email: email.toUpperCase(), amount: 1000 });
    expect(b.customer_id).toBe(a.customer_id); // found by e-mail, without regard to case
    await h.sandbox.submitCheckout(b.checkout_url, { outcome: 'success' });

    const all = await m.test.get(`/payments?customer_id=${a.customer_id}`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(all.body.data.map((x: any) => x.id)).toEqual([b.id, a.id]);

    const pending = await m.test.get(`/payments?customer_id=${a.customer_id}&status=pending`);
    expect(pending.body.data.map((x: any) => x.id)).toEqual([a.id]);
    const ok = await m.test.get(`/payments?status=succeeded&limit=100`);
    expect(ok.body.data.every((x: any) => x.status === 'succeeded')).toBe(true);
    expect(ok.body.data.map((x: any) => x.id)).toContain(b.id);

    const page1 = await m.test.get(`/payments?customer_id=${a.customer_id}&limit=1`);
    expect(page1.body).toMatchObject({ has_more: true });
    const page2 = await m.test.get(
      `/payments?customer_id=${a.customer_id}&limit=1&cursor=${encodeURIComponent(page1.body.next_cursor)}`,
    );
    expect(page2.body.data.map((x: any) => x.id)).toEqual([a.id]);
  });

  it('accepts the checkout form as JSON too, with UPI', async () => {
    const p = await createPayment(m.test, { amount: 2500 });
    const done = await h.sandbox.submitCheckout(
      p.checkout_url,
      { outcome: 'success', method: 'upi', vpa: 'success@sandbox', bank: 'HDFC' },
      'json',
    );
    expect(done.status).toBe(303);
    const got = await m.test.get(`/payments/${p.id}`);
    expect(got.body.status).toBe('succeeded');
  });
});

describe('payments across both connections', () => {
  it('uses the default connection unless provider is named, and converts currencies for each gateway', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    await connect(m.test, 'razorpay');
    const conns = await m.test.get('/providers/connections');
    expect(conns.body.data.find((c: any) => c.provider === 'stripe').is_default).toBe(true);

    const dflt = await createPayment(m.test);
    expect(dflt.provider).toBe('stripe');
    const rzp = await createPayment(m.test, { provider: 'razorpay' });
    expect(rzp.provider).toBe('razorpay');

    // The formulas (docs/catalog.md): JPY 500 stays 500 (no subunits); the checkout shows JPY 500.
    const jpy = await createPayment(m.test, { currency: 'jpy', amount: 500 });
    expect(jpy.currency).toBe('JPY');
    const html = await (await fetch(jpy.checkout_url)).text();
    expect(html).toContain('¥500');
    await h.sandbox.submitCheckout(jpy.checkout_url);
    expect((await m.test.get(`/payments/${jpy.id}`)).body).toMatchObject({
      status: 'succeeded',
      amount: 500,
      currency: 'JPY',
    });
  });
});

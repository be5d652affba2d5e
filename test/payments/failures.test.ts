import { TestMerchant, useHarness } from '../harness';
import { eventually } from '../harness/wait';
import { expectNoLeak } from '../harness/http';
import {
  connect,
  Connected,
  countRows,
  createPayment,
  outbox,
  pay,
  paymentBody,
  postEvent,
  PROVIDERS,
  razorpayEvent,
  signedHeaders,
  stripeEvent,
} from './helpers';

/** Every way a payment can fail: at the checkout, at the gateway, and in the gateway's events. */

// Gateway commands the gateway could not take are tried again soon (a refund made while it was down).
const h = useHarness({ gatewayCommandFirstRetryMs: 200 });

const gatewayCheckouts = (paymentId: string) =>
  countRows(h.app, 'sandbox_objects', `type in ('checkout_session', 'payment_link') and data::text like ?`, [
    `%${paymentId}%`,
  ]);

describe.each(PROVIDERS)('checkout failures through %s', (provider) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });

  it('a declined card fails the payment and redirects to cancel_url', async () => {
    const p = await createPayment(m.test);
    const { redirect, payment } = await pay(m.test, p, {
      outcome: 'success',
      method: 'card',
      card_number: '4000000000000002',
    });
    expect(redirect.startsWith(`https://merchant.example/cart?payment=${p.id}`)).toBe(true);
    expect(payment).toMatchObject({ status: 'failed', failure_reason: 'card_declined', amount_refunded: 0 });
    const events = await outbox(h.app, m.id);
    expect(events.filter((e) => e.payload.data.object.id === p.id).map((e) => e.type)).toEqual(['payment.failed']);
    const refund = await m.test.post(`/payments/${p.id}/refund`, {});
    expect(refund.status).toBe(409);
    expect(refund.body.error.code).toBe('payment_not_refundable');
  });

  it('a declined VPA fails the payment', async () => {
    const p = await createPayment(m.test);
    const { payment } = await pay(m.test, p, { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' });
    expect(payment.status).toBe('failed');
    expect(payment.failure_reason).toBeTruthy();
  });

  it('outcome failure fails the payment', async () => {
    const p = await createPayment(m.test);
    const { payment } = await pay(m.test, p, { outcome: 'failure' });
    expect(payment).toMatchObject({ status: 'failed' });
    expect(payment.failure_reason).toBeTruthy();
  });

  it('a cancelled checkout expires the payment, redirects to cancel_url, and is not refundable', async () => {
    const p = await createPayment(m.test);
    const { redirect, payment } = await pay(m.test, p, { outcome: 'cancel' });
    expect(redirect.startsWith(`https://merchant.example/cart?payment=${p.id}`)).toBe(true);
    expect(payment.status).toBe('expired');
    const events = await outbox(h.app, m.id);
    expect(events.filter((e) => e.payload.data.object.id === p.id)).toEqual([]); // no payment.* event for an expiry
    const refund = await m.test.post(`/payments/${p.id}/refund`, {});
    expect(refund.status).toBe(409);
    expect(refund.body.error.code).toBe('payment_not_refundable');
    // The page is closed now; posting it again lands where the first submission did and changes nothing.
    const again = await h.sandbox.submitCheckout(p.checkout_url, { outcome: 'success' });
    expect([303, 409]).toContain(again.status);
    expect((await m.test.get(`/payments/${p.id}`)).body.status).toBe('expired');
  });

  it('a pending payment cannot be refunded', async () => {
    const p = await createPayment(m.test);
    const r = await m.test.post(`/payments/${p.id}/refund`, { amount: 100 });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'payment_not_refundable' });
    expect(r.body.error.message).toContain('pending');
  });
});

describe('validation', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, 'stripe');
  });

  it.each([
    [{ amount: 99 }, 400, 'amount_too_small', 'amount'],
    [{ amount: 100.5 }, 400, 'parameter_invalid', 'amount'],
    [{ amount: undefined }, 400, 'parameter_missing', 'amount'],
    [{ currency: 'XYZ' }, 400, 'parameter_invalid', 'currency'],
    [{ customer_email: 'not-an-email' }, 400, 'parameter_invalid', 'customer_email'],
    [{ success_url: 'nope' }, 400, 'parameter_invalid', 'success_url'],
    [{ cancel_url: undefined }, 400, 'parameter_missing', 'cancel_url'],
    [{ customer_state_code: '7' }, 400, 'parameter_invalid', 'customer_state_code'],
    [{ bogus_field: 1 }, 400, 'parameter_unknown', 'bogus_field'],
    [{ provider: 'paypal' }, 400, 'parameter_invalid', 'provider'],
    [{ provider: 'razorpay' }, 409, 'provider_not_connected', 'provider'],
  ])('%j -> %i %s', async (override, status, code, param) => {
    const before = await countRows(h.app, 'payments', 'merchant_id = ?', [m.id]);
    const r = await m.test.post('/payments', paymentBody(override));
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, param });
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(before);
    expect(await countRows(h.app, 'customers', 'merchant_id = ?', [m.id])).toBe(0);
  });

  it('refund amounts are validated', async () => {
    const p = await createPayment(m.test, { amount: 1000 });
    await pay(m.test, p);
    for (const [amount, code] of [
      [0, 'parameter_invalid'],
      [-5, 'parameter_invalid'],
      [1001, 'amount_exceeds_refundable'],
      [1.5, 'parameter_invalid'],
    ] as const) {
      const r = await m.test.post(`/payments/${p.id}/refund`, { amount });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code, param: 'amount' });
    }
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
  });
});

describe.each(PROVIDERS)('gateway down through %s', (provider) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });
  afterEach(() => h.sandbox.start());

  it('answers 502 gateway_unavailable, writes nothing, and a retry with the same key creates exactly one payment', async () => {
    const key = `down-${provider}-${Date.now()}`;
    const body = paymentBody();
    await h.sandbox.stop();
    const down = await m.test.post('/payments', body, { 'Idempotency-Key': key });
    expect(down.status).toBe(502);
    expect(down.body.error).toMatchObject({ type: 'gateway_error', code: 'gateway_unavailable', param: null });
    expect(down.headers.get('request-id')).toBe(down.body.error.request_id);
    expectNoLeak(down.text);
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(0);
    expect(await countRows(h.app, 'customers', 'merchant_id = ?', [m.id])).toBe(0);
    expect(await outbox(h.app, m.id)).toEqual([]);

    // Not stored: the same key retried while still down fails the same way, not a replay.
    const down2 = await m.test.post('/payments', body, { 'Idempotency-Key': key });
    expect(down2.status).toBe(502);
    expect(down2.headers.get('idempotent-replayed')).toBeNull();

    await h.sandbox.start();
    const ok = await m.test.post('/payments', body, { 'Idempotency-Key': key });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
    const replay = await m.test.post('/payments', body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(ok.text);
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(1);
    expect(await countRows(h.app, 'customers', 'merchant_id = ?', [m.id])).toBe(1);
    expect(await gatewayCheckouts(ok.body.id)).toBe(1);

    // And the payment completes normally.
    const { payment } = await pay(m.test, ok.body);
    expect(payment.status).toBe('succeeded');
  });

  it('a refund while the gateway is down answers 502 and stays pending, its amount reserved, until the gateway is back and it is done', async () => {
    const p = await createPayment(m.test, { amount: 5000 });
    await pay(m.test, p);
    await h.sandbox.stop();
    const r = await m.test.post(`/payments/${p.id}/refund`, { amount: 2000 });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('gateway_unavailable');
    // Not dropped (docs/durable-work.md): the refund is pending and its amount counts against what is refundable.
    const during = (await m.test.get(`/payments/${p.id}`)).body;
    expect(during).toMatchObject({ status: 'succeeded', amount_refunded: 2000 });
    const refunds = (
      await m.test.gql(`query($id: ID!) { payment(id: $id) { refunds { amount status } } }`, { id: p.id })
    ).data.payment.refunds;
    expect(refunds).toEqual([{ amount: 2000, status: 'PENDING' }]);
    expect(await outbox(h.app, m.id, 'payment.refunded')).toEqual([]);
    await h.sandbox.start();
    // What is left can be refunded meanwhile; the pending one is done by the worker's next attempt.
    const rest = await m.test.post(`/payments/${p.id}/refund`, {});
    expect(rest.status).toBe(201);
    expect(rest.body.amount).toBe(3000);
    await eventually(
      async () => (await m.test.get(`/payments/${p.id}`)).body.status === 'refunded',
      15_000,
      'the pending refund done',
    );
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'refunded', amount_refunded: 5000 });
  });

  it('connecting while the gateway is down answers 502 and stores no connection', async () => {
    const other = await h.merchant();
    await h.sandbox.stop();
    const creds =
      provider === 'stripe'
        ? { secret_key: 'sk_test_downdowndowndown', webhook_secret: 'whsec_down' }
        : { key_id: 'rzp_test_downdown', key_secret: 'x', webhook_secret: 'y' };
    const r = await other.test.post('/providers/connections', { provider, credentials: creds });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe('gateway_unavailable');
    expect(await countRows(h.app, 'provider_connections', 'merchant_id = ?', [other.id])).toBe(0);
  });
});

describe.each(PROVIDERS)('gateway events through %s', (provider) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
  });

  /** The events the sandbox really sent for a payment (exact bodies), oldest first. */
  async function sandboxEvents(p: any): Promise<{ id: string; type: string; body: string }[]> {
    return h.app.orm.em
      .getConnection()
      .execute(`select id, type, body from sandbox_events where body like ? order by created_at, id`, [
        `%${p.checkout_session_id}%`,
      ]);
  }
  const sign = (ev: { id: string; body: string }) => ({
    payload: ev.body,
    headers: signedHeaders(provider, conn.webhookSecret, ev.body, ev.id),
  });

  /** A late failure event for a payment, in the gateway's own shape. */
  function lateFailure(p: any) {
    return provider === 'stripe'
      ? stripeEvent(conn.webhookSecret, 'payment_intent.payment_failed', {
          id: p.provider_payment_id ?? 'pi_late',
          object: 'payment_intent',
          amount: p.amount,
          currency: 'inr',
          status: 'requires_payment_method',
          metadata: { payment_id: p.id },
          last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' },
        })
      : razorpayEvent(conn.webhookSecret, 'payment.failed', {
          payment: {
            id: 'pay_late',
            entity: 'payment',
            amount: p.amount,
            currency: 'INR',
            status: 'failed',
            method: 'card',
            notes: { payment_id: p.id, payment_link_id: p.checkout_session_id },
            error_code: 'BAD_REQUEST_ERROR',
            error_reason: 'payment_failed',
          },
        });
  }

  /** A success event for a payment, in the gateway's own shape. */
  function success(p: any, id?: string) {
    return provider === 'stripe'
      ? stripeEvent(
          conn.webhookSecret,
          'checkout.session.completed',
          {
            id: p.checkout_session_id,
            object: 'checkout.session',
            mode: 'payment',
            status: 'complete',
            payment_status: 'paid',
            amount_total: p.amount,
            currency: 'inr',
            client_reference_id: p.id,
            metadata: { payment_id: p.id },
            payment_intent: {
              id: 'pi_manual_1',
              object: 'payment_intent',
              status: 'succeeded',
              metadata: { payment_id: p.id },
            },
          },
          id,
        )
      : razorpayEvent(
          conn.webhookSecret,
          'payment_link.paid',
          {
            payment_link: {
              id: p.checkout_session_id,
              entity: 'payment_link',
              status: 'paid',
              amount: p.amount,
              amount_paid: p.amount,
              currency: 'INR',
              reference_id: p.id,
              notes: { payment_id: p.id },
            },
            payment: {
              id: 'pay_manual_1',
              entity: 'payment',
              amount: p.amount,
              currency: 'INR',
              status: 'captured',
              method: 'card',
              notes: { payment_id: p.id },
            },
          },
          id,
        );
  }

  it('a gateway event delivered twice is applied once', async () => {
    const p = await createPayment(m.test);
    await pay(m.test, p);
    const sent = await sandboxEvents(p);
    expect(sent.length).toBeGreaterThan(0);
    const before = await outbox(h.app, m.id);
    for (const ev of sent) {
      const r = await postEvent(conn.connection.webhook_url, sign(ev));
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ received: true, duplicate: true });
    }
    expect(await outbox(h.app, m.id)).toEqual(before);
    expect(
      await countRows(h.app, 'gateway_events', 'merchant_id = ? and event_id = any(?::text[])', [
        m.id,
        `{${sent.map((e) => e.id).join(',')}}`,
      ]),
    ).toBe(sent.length);

    // The same new event posted concurrently: one of them applies it.
    const q = await createPayment(m.test);
    const ev = success(q);
    const answers = await Promise.all(Array.from({ length: 8 }, () => postEvent(conn.connection.webhook_url, ev)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    expect((await m.test.get(`/payments/${q.id}`)).body.status).toBe('succeeded');
    const succeeded = (await outbox(h.app, m.id, 'payment.succeeded')).filter((e) => e.payload.data.object.id === q.id);
    expect(succeeded).toHaveLength(1);
  });

  it('a late failure after success changes nothing', async () => {
    const p = await createPayment(m.test);
    const { payment: paid } = await pay(m.test, p);
    expect(paid.status).toBe('succeeded');
    const before = await outbox(h.app, m.id);
    const r = await postEvent(conn.connection.webhook_url, lateFailure(paid));
    expect(r.status).toBe(200);
    expect(r.body.duplicate).toBe(false);
    const after = (await m.test.get(`/payments/${p.id}`)).body;
    expect(after).toEqual(paid);
    expect(await outbox(h.app, m.id)).toEqual(before);
  });

  it('a late expiry after success changes nothing, and success after a failed attempt wins', async () => {
    const p = await createPayment(m.test);
    await pay(m.test, p);
    const paid = (await m.test.get(`/payments/${p.id}`)).body;
    const expiry =
      provider === 'stripe'
        ? stripeEvent(conn.webhookSecret, 'checkout.session.expired', {
            id: p.checkout_session_id,
            object: 'checkout.session',
            mode: 'payment',
            status: 'expired',
            client_reference_id: p.id,
            metadata: { payment_id: p.id },
          })
        : razorpayEvent(conn.webhookSecret, 'payment_link.expired', {
            payment_link: {
              id: p.checkout_session_id,
              entity: 'payment_link',
              status: 'expired',
              amount: p.amount,
              currency: 'INR',
              reference_id: p.id,
            },
          });
    expect((await postEvent(conn.connection.webhook_url, expiry)).status).toBe(200);
    expect((await m.test.get(`/payments/${p.id}`)).body).toEqual(paid);

    // Out of order the other way: a failed attempt first, then the success (the buyer retried).
    const q = await createPayment(m.test);
    expect((await postEvent(conn.connection.webhook_url, lateFailure(q))).status).toBe(200);
    expect((await m.test.get(`/payments/${q.id}`)).body.status).toBe('failed');
    expect((await postEvent(conn.connection.webhook_url, success(q))).status).toBe(200);
    const won = (await m.test.get(`/payments/${q.id}`)).body;
    expect(won).toMatchObject({ status: 'succeeded', failure_reason: null });
    const types = (await outbox(h.app, m.id)).filter((e) => e.payload.data.object.id === q.id).map((e) => e.type);
    expect(types).toEqual(['payment.failed', 'payment.succeeded']);
  });

  it('a bad signature answers 400 and changes nothing', async () => {
    const p = await createPayment(m.test);
    const before = (await m.test.get(`/payments/${p.id}`)).body;
    const good = success(p);
    const variants: { payload: string; headers: Record<string, string> }[] = [
      { payload: good.payload.replace(String(p.amount), String(p.amount + 1)), headers: good.headers }, // body tampered
      {
        payload: good.payload,
        headers: Object.fromEntries(Object.entries(good.headers).filter(([k]) => !k.includes('signature'))),
      }, // missing
      provider === 'stripe'
        ? stripeEvent('whsec_wrong', 'checkout.session.completed', JSON.parse(good.payload).data.object)
        : razorpayEvent('wrong', 'payment_link.paid', {
            payment_link: JSON.parse(good.payload).payload.payment_link.entity,
          }),
    ];
    for (const v of variants) {
      const r = await postEvent(conn.connection.webhook_url, v);
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'signature_invalid' });
    }
    expect((await m.test.get(`/payments/${p.id}`)).body).toEqual(before);
    expect(await countRows(h.app, 'gateway_events', 'event_id = ?', [good.id])).toBe(0);
    // The genuine event still applies afterwards.
    expect((await postEvent(conn.connection.webhook_url, good)).status).toBe(200);
    expect((await m.test.get(`/payments/${p.id}`)).body.status).toBe('succeeded');
  });

  it('an unknown connection answers 404', async () => {
    const url = conn.connection.webhook_url.replace(conn.connection.id, '01900000-0000-7000-8000-000000000000');
    const r = await postEvent(url, success({ id: 'x', checkout_session_id: 'cs_x', amount: 100 }));
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('resource_not_found');
  });
});

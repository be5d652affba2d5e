import { eventually, TestMerchant, useHarness } from '../harness';
import { useSandboxFaults } from '../harness/faults';
import crypto from 'node:crypto';
import {
  connect,
  Connected,
  countRows,
  createPayment,
  gatewayCharge,
  gatewayRefundId,
  LOST_TIMES,
  outbox,
  pay,
  postEvent,
  PROVIDERS,
  REFUND_ROUTE,
  refundSucceededEvent,
} from './helpers';

/**
 * Refunds never exceed the payment, also under concurrent requests (docs/payments.md, refund); one whose gateway call
 * got no answer is settled by the gateway's refund event (docs/durable-work.md).
 */

// The harness's default retry: a gateway command failed once is tried again 30 s later, past every wait below.
const h = useHarness();
const { fault } = useSandboxFaults(h);

/** Waits for the sandbox's background webhooks (refund events) to be delivered and answered. */
const settle = () => h.app.app.sandbox!.sandbox.settle();

async function refundSum(paymentId: string, status = 'succeeded'): Promise<number> {
  const [row] = await h.app.orm.em
    .getConnection()
    .execute<{ s: string | null }[]>(
      'select sum(amount)::bigint as s from refunds where payment_id = ? and status = ?',
      [paymentId, status],
    );
  return Number(row.s ?? 0);
}

describe.each(PROVIDERS)('refunds through %s', (provider) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
  });

  async function paid(amount: number) {
    const p = await createPayment(m.test, { amount });
    const { payment } = await pay(m.test, p);
    expect(payment.status).toBe('succeeded');
    return payment;
  }

  it('20 concurrent partial refunds: exactly as many succeed as fit, the rest answer amount_exceeds_refundable', async () => {
    const p = await paid(10000);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => m.test.post(`/payments/${p.id}/refund`, { amount: 1000 })),
    );
    const ok = answers.filter((a) => a.status === 201);
    // On a loaded machine a gateway call can outlast the timeout: 502 gateway_unavailable, the refund kept pending
    // and counted against what is refundable (docs/payments.md) until the gateway's event settles it. It fits as
    // an answered one does; nothing else may answer but the refusals.
    const late = answers.filter((a) => a.status === 502 && a.body.error.code === 'gateway_unavailable');
    expect(ok.length + late.length).toBe(10);
    for (const a of answers.filter((x) => x.status !== 201 && !late.includes(x))) {
      expect([400, 409]).toContain(a.status);
      expect(['amount_exceeds_refundable', 'payment_not_refundable']).toContain(a.body.error.code);
    }
    expect(new Set(ok.map((a) => a.body.id)).size).toBe(ok.length);
    expect(new Set(ok.map((a) => a.body.provider_refund_id)).size).toBe(ok.length);
    await settle();
    await eventually(async () => (await refundSum(p.id)) === 10000, 15_000, 'the late refunds settled');
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'refunded', amount_refunded: 10000 });
    expect(await refundSum(p.id)).toBe(10000);
    expect(await countRows(h.app, 'refunds', 'payment_id = ?', [p.id])).toBe(10);
    const events = (await outbox(h.app, m.id, 'payment.refunded')).filter((e) => e.payload.data.object.id === p.id);
    expect(events).toHaveLength(10);
    expect(events.filter((e) => e.payload.data.object.status === 'refunded')).toHaveLength(1);
  });

  it("a refund whose gateway answer is lost is settled by the gateway's refund event, not left for the retry", async () => {
    const p = await paid(6000);
    await fault({ ...REFUND_ROUTE[provider], kind: 'lost', times: LOST_TIMES[provider] });
    const r = await m.test.post(`/payments/${p.id}/refund`, { amount: 2500 });
    // 502 when the call gave up first; 201 when the event settled the refund while stripe-node was still retrying.
    expect(r.status === 502 ? r.body.error.code : r.body.status).toBe(
      r.status === 502 ? 'gateway_unavailable' : 'succeeded',
    );
    await settle();
    // The event names the refund by Cadence's id, so it settles it although the gateway's id was never answered.
    await eventually(async () => (await refundSum(p.id)) === 2500, 10_000, 'the refund settled by its event');
    const [refund] = await h.app.orm.em
      .getConnection()
      .execute<{ id: string; provider_refund_id: string | null }[]>(
        'select id, provider_refund_id from refunds where payment_id = ?',
        [p.id],
      );
    const [atGateway] = await h.app.orm.em
      .getConnection()
      .execute<{ id: string }[]>(`select id from sandbox_objects where type = 'refund' and data::text like ?`, [
        `%${refund.id}%`,
      ]);
    expect(refund.provider_refund_id).toBe(atGateway.id);
    // Tried once, its retry still 30 s off: the event alone settled it.
    const [command] = await h.app.orm.em
      .getConnection()
      .execute<{ status: string; attempts: number }[]>(
        'select status, attempts from gateway_commands where payment_id = ? and action = ?',
        [p.id, 'refund'],
      );
    expect(command).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 2500,
    });
    expect(await gatewayCharge(h.app, provider, p.provider_payment_id)).toEqual({ charged: 6000, refunded: 2500 });
    const events = (await outbox(h.app, m.id, 'payment.refunded')).filter((e) => e.payload.data.object.id === p.id);
    expect(events).toHaveLength(1);
  });

  it("a refund event naming Cadence's refund settles only that refund of its own payment and merchant", async () => {
    const p = await paid(4000);
    const other = await paid(4000);
    // A refund awaiting the gateway's id, as one whose call got no answer is.
    const refundId = crypto.randomUUID();
    const db = h.app.orm.em.getConnection();
    await db.execute(
      `insert into refunds (id, created_at, merchant_id, mode, payment_id, amount, gateway_amount, currency, status)
       values (?, now(), ?, 'test', ?, 1500, 1500, 'INR', 'pending')`,
      [refundId, m.id, p.id],
    );
    await db.execute('update payments set amount_refunded = 1500, gateway_amount_refunded = 1500 where id = ?', [p.id]);
    const event = (secret: string, providerPaymentId: string) => {
      const id = gatewayRefundId(provider);
      const signed = refundSucceededEvent(provider, secret, {
        id,
        amount: 1500,
        providerPaymentId,
        reference: { refund_id: refundId },
      });
      return { id, signed };
    };
    const status = async () =>
      (
        await db.execute<{ status: string; provider_refund_id: string | null }[]>(
          'select status, provider_refund_id from refunds where id = ?',
          [refundId],
        )
      )[0];
    // Another merchant's gateway account reporting that id: not this merchant's refund.
    const stranger = await h.merchant();
    const strangerConn = await connect(stranger.test, provider);
    const foreign = event(strangerConn.webhookSecret, p.provider_payment_id);
    expect((await postEvent(strangerConn.connection.webhook_url, foreign.signed)).status).toBe(200);
    expect(await status()).toEqual({ status: 'pending', provider_refund_id: null });
    // This merchant's event, but a refund of another payment: not matched by the id (a refund of that payment made at
    // the gateway, recorded as such).
    const elsewhere = event(conn.webhookSecret, other.provider_payment_id);
    expect((await postEvent(conn.connection.webhook_url, elsewhere.signed)).status).toBe(200);
    expect(await status()).toEqual({ status: 'pending', provider_refund_id: null });
    // Its own payment: settled, the gateway's id recorded.
    const own = event(conn.webhookSecret, p.provider_payment_id);
    expect((await postEvent(conn.connection.webhook_url, own.signed)).status).toBe(200);
    expect(await status()).toEqual({ status: 'succeeded', provider_refund_id: own.id });
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 1500,
    });
  });

  it('concurrent full refunds: one succeeds', async () => {
    const p = await paid(5000);
    const answers = await Promise.all(Array.from({ length: 10 }, () => m.test.post(`/payments/${p.id}/refund`, {})));
    const ok = answers.filter((a) => a.status === 201);
    expect(ok).toHaveLength(1);
    expect(ok[0].body.amount).toBe(5000);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(['amount_exceeds_refundable', 'payment_not_refundable']).toContain(a.body.error.code);
    }
    await settle();
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'refunded', amount_refunded: 5000 });
    expect(await refundSum(p.id)).toBe(5000);
  });

  it('concurrent refunds of different sizes never add up to more than the amount', async () => {
    const p = await paid(10000);
    const amounts = [3000, 4000, 5000, 2500, 6000, 1000, 7000, 1500];
    const answers = await Promise.all(amounts.map((amount) => m.test.post(`/payments/${p.id}/refund`, { amount })));
    const refunded = answers.filter((a) => a.status === 201).reduce((s, a) => s + a.body.amount, 0);
    expect(refunded).toBeLessThanOrEqual(10000);
    expect(refunded).toBeGreaterThan(0);
    await settle();
    const got = (await m.test.get(`/payments/${p.id}`)).body;
    expect(got.amount_refunded).toBe(refunded);
    expect(got.status).toBe(refunded === 10000 ? 'refunded' : 'partially_refunded');
    expect(await refundSum(p.id)).toBe(refunded);
    // Whatever is left can still be refunded, and not a subunit more.
    const left = 10000 - refunded;
    if (left > 0) {
      const over = await m.test.post(`/payments/${p.id}/refund`, { amount: left + 1 });
      expect(over.status).toBe(400);
      expect(over.body.error).toMatchObject({ code: 'amount_exceeds_refundable', param: 'amount' });
      const rest = await m.test.post(`/payments/${p.id}/refund`, {});
      expect(rest.status).toBe(201);
      expect(rest.body.amount).toBe(left);
    }
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'refunded', amount_refunded: 10000 });
  });

  it.each([
    [false, 'refused until it has its id (the event may be its own)'],
    [true, 'recorded at once as a refund made at the gateway (its own event would name it)'],
  ])("an unnamed refund event while a refund awaits the gateway's id, the refund named there %s: %s", async (named) => {
    const p = await paid(5000);
    // A refund still waiting for its call's answer; before refunds carried their id (named false) or since.
    const db = h.app.orm.em.getConnection();
    const waiting = crypto.randomUUID();
    await db.execute(
      `insert into refunds (id, created_at, merchant_id, mode, payment_id, amount, gateway_amount, currency, status, named_at_gateway)
         values (?, now(), ?, 'test', ?, 1000, 1000, 'INR', 'pending', ?)`,
      [waiting, m.id, p.id, named],
    );
    await db.execute('update payments set amount_refunded = 1000, gateway_amount_refunded = 1000 where id = ?', [p.id]);
    // A refund made in the gateway's dashboard: its event names no Cadence refund.
    const dashboard = refundSucceededEvent(provider, conn.webhookSecret, {
      id: gatewayRefundId(provider),
      amount: 2000,
      providerPaymentId: p.provider_payment_id,
    });
    const answer = await postEvent(conn.connection.webhook_url, dashboard);
    const recorded = await db.execute<{ amount: string; reason: string }[]>(
      'select amount, reason from refunds where payment_id = ? and id <> ?',
      [p.id, waiting],
    );
    if (!named) {
      expect(answer.status).toBeGreaterThanOrEqual(500); // the gateway delivers it again
      expect(recorded).toEqual([]);
    } else {
      expect(answer.status).toBe(200);
      expect(recorded).toEqual([{ amount: '2000', reason: 'Refunded at the gateway' }]);
      expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ amount_refunded: 3000 });
    }
  });

  it("the gateway's refund events change nothing more once the refund settled", async () => {
    const p = await paid(8000);
    const r = await m.test.post(`/payments/${p.id}/refund`, { amount: 3000 });
    expect(r.status).toBe(201);
    const before = (await m.test.get(`/payments/${p.id}`)).body;
    const eventsBefore = await outbox(h.app, m.id);
    await settle();
    await h.app.app.sandbox!.redeliverPending();
    expect((await m.test.get(`/payments/${p.id}`)).body).toEqual(before);
    expect(await outbox(h.app, m.id)).toEqual(eventsBefore);
    expect(before).toMatchObject({ status: 'partially_refunded', amount_refunded: 3000 });
    const refund = await h.app.orm.em
      .getConnection()
      .execute<{ status: string }[]>('select status from refunds where id = ?', [r.body.id]);
    expect(refund[0].status).toBe('succeeded');
  });

  it('refunds through GraphQL too', async () => {
    const p = await paid(4000);
    const g = await m.test.gql(
      `mutation($id: ID!, $input: RefundPaymentInput) { refundPayment(id: $id, input: $input) { id object paymentId amount currency status reason } }`,
      { id: p.id, input: { amount: 1500, reason: 'duplicate' } },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.refundPayment).toMatchObject({
      object: 'refund',
      paymentId: p.id,
      amount: 1500,
      currency: 'INR',
      reason: 'duplicate',
    });
    const over = await m.test.gql(`mutation($id: ID!) { refundPayment(id: $id, input: { amount: 999999 }) { id } }`, {
      id: p.id,
    });
    expect(over.errors?.[0].extensions).toMatchObject({ code: 'amount_exceeds_refundable', http: { status: 400 } });
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 1500,
    });
  });
});

import { Client } from 'pg';
import { HttpResult, TestMerchant, useHarness, sleep } from '../harness';
import { connect, countRows, createPayment, pay, paymentBody, PROVIDERS } from './helpers';

/** The idempotency rules (docs/api.md) on POST /payments and POST /payments/{id}/refund. */

const h = useHarness();

const key = (label: string) => `${label}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
const gatewayCheckouts = (paymentId: string) =>
  countRows(h.app, 'sandbox_objects', `type in ('checkout_session', 'payment_link') and data::text like ?`, [
    `%${paymentId}%`,
  ]);

/** Holds an exclusive lock on a table from another connection, so writes to it wait (reads do not). */
async function lockTable(table: string): Promise<{ release(): Promise<void> }> {
  const c = new Client({ connectionString: h.app.databaseUrl });
  await c.connect();
  await c.query('begin');
  await c.query(`lock table ${table} in exclusive mode`);
  return {
    async release() {
      await c.query('rollback');
      await c.end();
    },
  };
}

/** Waits until some session waits on a lock (the request under test is blocked where we want it). */
async function waitForLockWaiter(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
      );
    if (rows[0].n > 0) return;
    await sleep(25);
  }
  throw new Error('no request ever waited on the lock');
}

describe.each(PROVIDERS)('POST /payments with Idempotency-Key through %s', (provider) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });

  it('20 identical racing requests create one payment and one gateway checkout; every 201 is the same bytes', async () => {
    const k = key('race');
    const body = paymentBody();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => m.test.post('/payments', body, { 'Idempotency-Key': k })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(new Set(created.map((a) => a.text)).size).toBe(1);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use' });
    }
    const id = created[0].body.id;
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(1);
    expect(await countRows(h.app, 'customers', 'merchant_id = ?', [m.id])).toBe(1);
    expect(await gatewayCheckouts(id)).toBe(1);

    // Afterwards the same request is replayed byte for byte, with its status, however often.
    const replays = await Promise.all(
      Array.from({ length: 10 }, () => m.test.post('/payments', body, { 'Idempotency-Key': k })),
    );
    for (const r of replays) {
      expect(r.status).toBe(201);
      expect(r.headers.get('idempotent-replayed')).toBe('true');
      expect(r.text).toBe(created[0].text);
    }
    // Even after the payment moved on: the stored answer, not the current state.
    await pay(m.test, created[0].body);
    const late = await m.test.post('/payments', body, { 'Idempotency-Key': k });
    expect(late.text).toBe(created[0].text);
    expect(late.body.status).toBe('pending');
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(1);
  });

  it('the same key with keys of the body reordered is the same request', async () => {
    const k = key('order');
    const body = paymentBody({ metadata: { a: '1', b: '2' } });
    const first = await m.test.post('/payments', body, { 'Idempotency-Key': k });
    expect(first.status).toBe(201);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    (reordered as any).metadata = { b: '2', a: '1' };
    const second = await m.test.post('/payments', reordered, { 'Idempotency-Key': k });
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
  });

  it('the same key with a different body answers 400 idempotency_key_reused and creates nothing', async () => {
    const k = key('reuse');
    const body = paymentBody();
    const first = await m.test.post('/payments', body, { 'Idempotency-Key': k });
    expect(first.status).toBe(201);
    const before = await countRows(h.app, 'payments', 'merchant_id = ?', [m.id]);
    const other = await m.test.post('/payments', { ...body, amount: 50000 }, { 'Idempotency-Key': k });
    expect(other.status).toBe(400);
    expect(other.body.error).toMatchObject({ type: 'idempotency_error', code: 'idempotency_key_reused' });
    // The same key on another idempotent route is another request too.
    const refund = await m.test.post(`/payments/${first.body.id}/refund`, {}, { 'Idempotency-Key': k });
    expect(refund.status).toBe(400);
    expect(refund.body.error.code).toBe('idempotency_key_reused');
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(before);
  });

  it('answers 409 idempotency_key_in_use while the first request is still running, then replays it', async () => {
    const k = key('inflight');
    const body = paymentBody();
    const lock = await lockTable('payments'); // the first request gets through the gateway and waits to insert
    let first: Promise<HttpResult>;
    try {
      first = m.test.post('/payments', body, { 'Idempotency-Key': k });
      await waitForLockWaiter();
      const same = await m.test.post('/payments', body, { 'Idempotency-Key': k });
      expect(same.status).toBe(409);
      expect(same.body.error).toMatchObject({ type: 'invalid_request_error', code: 'idempotency_key_in_use' });
      const different = await m.test.post('/payments', { ...body, amount: 777 }, { 'Idempotency-Key': k });
      expect(different.status).toBe(400);
      expect(different.body.error.code).toBe('idempotency_key_reused');
    } finally {
      await lock.release();
    }
    const done = await first!;
    expect(done.status).toBe(201);
    const replay = await m.test.post('/payments', body, { 'Idempotency-Key': k });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(done.text);
    expect(await gatewayCheckouts(done.body.id)).toBe(1);
  });

  it('stores 4xx answers and replays them; scopes keys by mode and by merchant', async () => {
    const k = key('scoped');
    const small = paymentBody({ amount: 5 });
    const bad = await m.test.post('/payments', small, { 'Idempotency-Key': k });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('amount_too_small');
    const again = await m.test.post('/payments', small, { 'Idempotency-Key': k });
    expect(again.status).toBe(400);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(bad.text);

    // The same key in live mode and for another merchant are other keys.
    await connect(m.live, provider);
    const body = paymentBody();
    const other = await h.merchant();
    await connect(other.test, provider);
    const k2 = key('shared');
    const a = await m.test.post('/payments', body, { 'Idempotency-Key': k2 });
    const b = await m.live.post('/payments', body, { 'Idempotency-Key': k2 });
    const c = await other.test.post('/payments', body, { 'Idempotency-Key': k2 });
    for (const r of [a, b, c]) {
      expect(r.status).toBe(201);
      expect(r.headers.get('idempotent-replayed')).toBeNull();
    }
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
    expect([a.body.livemode, b.body.livemode, c.body.livemode]).toEqual([false, true, false]);
  });
});

describe('Idempotency-Key validation', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, 'stripe');
  });

  it.each([['x'.repeat(256)], ['caf\u00e9']])('%s answers 400 parameter_invalid on Idempotency-Key', async (k) => {
    const r = await fetch(`${h.app.url}/v1/payments`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${m.keys.test}`,
        'content-type': 'application/json',
        'idempotency-key': encodeURIComponent(k) === k ? k : Buffer.from(k, 'utf8').toString('latin1'),
      },
      body: JSON.stringify(paymentBody()),
    });
    const body: any = await r.json();
    expect(r.status).toBe(400);
    expect(body.error).toMatchObject({ code: 'parameter_invalid', param: 'Idempotency-Key' });
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(0);
  });

  it('255 characters are accepted', async () => {
    const r = await m.test.post('/payments', paymentBody(), { 'Idempotency-Key': 'k'.repeat(255) });
    expect(r.status).toBe(201);
  });
});

describe.each(PROVIDERS)('POST /payments/{id}/refund with Idempotency-Key through %s', (provider) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });

  it('15 identical racing refunds refund once', async () => {
    const p = await createPayment(m.test, { amount: 10000 });
    await pay(m.test, p);
    const k = key('refund-race');
    const answers = await Promise.all(
      Array.from({ length: 15 }, () =>
        m.test.post(`/payments/${p.id}/refund`, { amount: 3000 }, { 'Idempotency-Key': k }),
      ),
    );
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    const created = answers.filter((a) => a.status === 201);
    expect(created.filter((a) => a.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(new Set(created.map((a) => a.text)).size).toBe(1);
    expect(await countRows(h.app, 'refunds', 'payment_id = ?', [p.id])).toBe(1);
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 3000,
    });
    const refunds = await countRows(h.app, 'sandbox_objects', `type = 'refund' and data::text like ?`, [
      `%${created[0].body.provider_refund_id}%`,
    ]);
    expect(refunds).toBe(1);

    const replay = await m.test.post(`/payments/${p.id}/refund`, { amount: 3000 }, { 'Idempotency-Key': k });
    expect(replay.text).toBe(created[0].text);
    // A new key is a new refund.
    const next = await m.test.post(
      `/payments/${p.id}/refund`,
      { amount: 3000 },
      { 'Idempotency-Key': key('refund-2') },
    );
    expect(next.status).toBe(201);
    expect(next.body.id).not.toBe(created[0].body.id);
    expect((await m.test.get(`/payments/${p.id}`)).body.amount_refunded).toBe(6000);
  });
});

import { Client } from 'pg';
import { Client as WsClient, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { v7 as uuidv7 } from 'uuid';
import { backoffDelay } from '../../src/core/listener';
import { withClient } from '../../src/core/pool';
import { request, TestMerchant, eventually, Receiver, sleep, useHarness } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';

/**
 * Database connection loss (docs/operations.md): the service's backends are terminated again and again and the database
 * then refuses connections for seconds. Afterwards the process is alive, it holds one LISTEN connection and no more
 * connections than its pools allow, subscribers get each change exactly once (and, by catch-up, the changes made
 * while it was cut off), and webhooks are delivered at once: the worker polls only every 60 s here, so only NOTIFY
 * or the sweep after the reconnection can wake it.
 */

const h = useHarness({ workerPollMs: 60_000 });
let rx: Receiver;
let m: TestMerchant;
let ws: WsClient;
/** On the `postgres` database: terminates backends, refuses connections. */
let admin: Client;
/** On the test database, never terminated: stands for another API process, changing data while ours is cut off. */
let other: Client;
let otherPid: number;
let db: string;
const events: { id: string; status: string }[] = [];
const subErrors: unknown[] = [];

beforeAll(async () => {
  db = new URL(h.app.databaseUrl).pathname.slice(1);
  m = await h.merchant();
  await connect(m.test, 'stripe');
  rx = await h.receiver();
  expect((await m.test.post('/webhooks/endpoints', { url: `${rx.url}/hook`, mode: 'test' })).status).toBe(201);
  admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  other = new Client({ connectionString: h.app.databaseUrl });
  await other.connect();
  otherPid = (await other.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;

  ws = createClient({
    url: `${h.app.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { Authorization: `Bearer ${m.keys.test}` },
    retryAttempts: 0,
  });
  ws.subscribe(
    { query: 'subscription { paymentUpdated { id status } }' },
    {
      next: (v) => (v.errors ? subErrors.push(...v.errors) : events.push((v.data as any).paymentUpdated)),
      error: (e) => subErrors.push(e),
      complete: () => undefined,
    },
  );
  // The subscription is live once a change reaches it.
  const warm = await createPayment(m.test);
  await pay(m.test, warm);
  await eventually(async () => events.some((e) => e.id === warm.id), 10_000, 'the first live update');
  await eventually(async () => rx.received.length >= 1, 10_000, 'the first webhook');
});

h.cleanup(async () => {
  await admin?.query(`alter database "${db}" allow_connections true`).catch(() => undefined);
  await ws?.dispose();
  await other?.end();
  await admin?.end();
});

const eventsOf = (id: string) => events.filter((e) => e.id === id);

/** Terminates every backend of the service's database (not `other`); answers how many. */
async function terminateAll(): Promise<number> {
  return (await terminateAllPids()).length;
}

/** Terminates the service's connections, answering their server processes' ids. */
async function terminateAllPids(): Promise<number[]> {
  const r = await admin.query<{ pid: number }>(
    'select pid, pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and pid <> $2',
    [db, otherPid],
  );
  return r.rows.map((row) => row.pid);
}

/**
 * Until those server processes have exited: pg_terminate_backend only signals them, and a statement sent before one
 * exits fails like any statement in flight when its server goes away.
 */
const exited = (pids: number[]) =>
  eventually(
    async () => (await admin.query('select 1 from pg_stat_activity where pid = any($1::int[])', [pids])).rowCount === 0,
    10_000,
    'the terminated server processes to exit',
  );

/** Connections that LISTEN, and the listener's connections whatever they run (open or opening: never two). */
async function listenConnections(): Promise<number> {
  const r = await admin.query<{ listening: number; listener: number }>(
    `select count(*) filter (where query ilike 'listen%')::int as listening,
            count(*) filter (where application_name = 'cadence-listener')::int as listener
     from pg_stat_activity where datname = $1`,
    [db],
  );
  return Math.max(r.rows[0].listening, r.rows[0].listener);
}

async function serviceConnections(): Promise<number> {
  const r = await admin.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where datname = $1 and backend_type = 'client backend' and pid <> $2`,
    [db, otherPid],
  );
  return r.rows[0].n;
}

/** Every connection the process may open: its one pool's maximum, its sandbox's and the one LISTEN connection. */
function configuredConnections(): number {
  const s = h.app.app.services;
  const ormMax = (h.app.orm.config.get('pool') as { max: number }).max;
  // One pool (src/core/orm-pool.ts): the ORM's connections also run plain statements, catalog version lookups,
  // webhook delivery and the test clock.
  expect(s.plainPool.options.max).toBe(ormMax);
  expect(s.delivery.db).toBe(s.plainPool);
  const sandboxMax = h.app.app.sandbox?.connections ?? 0; // its own ORM and plain pools
  return ormMax + sandboxMax + 1;
}

/** Recovered: the listener is back, LISTENing every channel, and has caught up. */
const recovered = () =>
  eventually(
    async () => h.app.app.listener.ready && (await listenConnections()) === 1,
    25_000,
    'the LISTEN connection to come back',
  );

describe('database connection loss', () => {
  it('survives repeated terminations and an outage, with one LISTEN connection, catch-up and prompt webhooks', async () => {
    let maxListen = await listenConnections();
    expect(maxListen).toBe(1);
    const missed = await createPayment(m.test); // changed by "another process" during the outage

    // Terminations in a row, with traffic in between (connections are checked out as they are killed).
    for (let i = 0; i < 6; i++) {
      expect(await terminateAll()).toBeGreaterThan(0);
      await Promise.allSettled([
        m.test.get('/payments?limit=5'),
        m.test.post('/test-clock/advance', { seconds: 60 }),
        m.test.post('/webhooks/trigger-test'),
      ]);
      await sleep(150 + 50 * i);
      maxListen = Math.max(maxListen, await listenConnections());
    }

    // The database refuses connections for several seconds.
    await admin.query(`alter database "${db}" allow_connections false`);
    try {
      await terminateAll();
      await eventually(async () => (await serviceConnections()) === 0, 5_000, 'every backend gone');
      // Meanwhile another process changes a payment and writes an event: their NOTIFYs reach no listener of ours.
      await other.query(
        `update payments set status = 'failed', failure_reason = 'changed during the outage', updated_at = now() where id = $1`,
        [missed.id],
      );
      await other.query('select pg_notify($1, $2)', [
        'cadence_changes',
        JSON.stringify({ topic: 'payment', merchantId: m.id, mode: 'test', id: missed.id }),
      ]);
      const eventId = uuidv7();
      await other.query(
        `insert into outbox_events (id, created_at, merchant_id, mode, type, payload) values ($1, now(), $2, 'test', 'payment.failed', $3)`,
        [
          eventId,
          m.id,
          {
            id: eventId,
            object: 'event',
            type: 'payment.failed',
            livemode: false,
            created_at: new Date().toISOString(),
            data: { object: { id: missed.id, object: 'payment' } },
          },
        ],
      );
      const outageEnds = Date.now() + 3_500;
      while (Date.now() < outageEnds) {
        maxListen = Math.max(maxListen, await listenConnections());
        await sleep(250);
      }
      expect(await serviceConnections()).toBe(0);
      await admin.query(`alter database "${db}" allow_connections true`);
      const back = Date.now();

      await recovered();
      // Catch-up: the subscriber re-reads the payment changed while we were cut off...
      await eventually(async () => eventsOf(missed.id).some((e) => e.status === 'FAILED'), 10_000, 'the missed change');
      // ...and the sweep after the reconnection delivers the event, long before the 60 s poll.
      const hook = await eventually(
        async () => rx.received.find((r) => r.headers['webhook-id'] === eventId),
        10_000,
        'the missed webhook',
      );
      expect(hook.at - back).toBeLessThan(10_000);
    } finally {
      await admin.query(`alter database "${db}" allow_connections true`);
    }
    expect(maxListen).toBeLessThanOrEqual(1);

    // After recovery: one event per change, and webhooks without waiting for the poll.
    const p = await createPayment(m.test);
    const hooksBefore = rx.received.length;
    const paidAt = Date.now();
    await pay(m.test, p);
    await eventually(async () => eventsOf(p.id).length >= 1, 10_000, 'the live update');
    const hook = await eventually(
      async () => rx.received.slice(hooksBefore).find((r) => JSON.parse(r.body).data.object.id === p.id),
      5_000,
      'the payment.succeeded webhook',
    );
    expect(hook.at - paidAt).toBeLessThan(5_000);
    await sleep(1_000); // a duplicate would have arrived by now
    expect(eventsOf(p.id)).toEqual([{ id: p.id, status: 'SUCCEEDED' }]);
    expect(subErrors).toEqual([]);

    // Alive, serving, and back within its connection budget, with exactly one LISTEN connection.
    expect((await request(`${h.app.url}/readyz`)).status).toBe(200);
    expect((await m.test.get(`/payments/${p.id}`)).body.status).toBe('succeeded');
    expect(await listenConnections()).toBe(1);
    expect(await serviceConnections()).toBeLessThanOrEqual(configuredConnections());
  });

  it('a connection lost while checked out of a pool does not crash the process', async () => {
    const pool = h.app.app.services.delivery.db;
    await withClient(pool, async (c) => {
      await exited(await terminateAllPids());
      // The server closed it: the next statement fails, and the 'error' event is absorbed by withClient.
      await expect(c.query('select 1')).rejects.toThrow();
      await sleep(100);
    });
    // The pool's idle connections died too and were noticed: the next statement gets a live one.
    await recovered();
    expect((await pool.query<{ n: number }>('select 1 as n')).rows[0].n).toBe(1);
    expect(await listenConnections()).toBe(1);
    expect((await request(`${h.app.url}/readyz`)).status).toBe(200);
  });

  it('reconnects after 100 ms doubling up to 10 s, with full jitter', () => {
    const top = () => 0.999_999;
    expect([0, 1, 2, 3, 6, 7, 50].map((n) => backoffDelay(n, 100, 10_000, top))).toEqual([
      99, 199, 399, 799, 6399, 9999, 9999,
    ]);
    expect(backoffDelay(5, 100, 10_000, () => 0)).toBe(0);
  });
});

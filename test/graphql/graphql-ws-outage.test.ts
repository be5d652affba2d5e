/**
 * The GraphQL WebSocket channel during a database outage (docs/api.md): nothing a socket receives ever carries
 * `internal_error` (nor closes with 4500, which graphql-ws clients never retry). While the database is away:
 * - an event whose payload cannot be read reaches each subscription as a `next` with a retryable error
 *   (`service_unavailable`, `retryable: true`, `http.status` 503) and the subscription stays open;
 * - a `subscribe` that cannot check its key is answered `service_unavailable` for that operation; the socket stays open;
 * - a `connection_init` whose key cannot be checked closes the socket with 1013 Try Again Later (retried by clients).
 * Over HTTP, a request whose key cannot be checked answers the same 503. When it is back, the same subscriptions receive events again, and new connections and subscriptions work; after the
 * LISTEN connection itself was lost, its reconnection brings events (and the catch-up of missed changes) back to them.
 */
import { Client as PgClient } from 'pg';
import WebSocket from 'ws';
import { eventually, sleep, TestMerchant, useHarness } from '../harness';
import { connect as connectProvider, createPayment } from '../payments/helpers';

const h = useHarness();

/** On the `postgres` database: terminates backends, refuses connections. */
let admin: PgClient;
/** On the test database, never terminated: stands for another process (NOTIFYs, changes during the outage). */
let other: PgClient;
let otherPid: number;
let db: string;
let m: TestMerchant;
/** Its key is never used before the outage: this process has not cached it. */
let fresh: TestMerchant;
let payment: { id: string };

interface Closed {
  code: number;
  reason: string;
}

/** A graphql-ws socket driven by hand, keeping every frame it receives and how it closed. */
interface Raw {
  ws: WebSocket;
  frames: any[];
  closed: Closed | null;
  acked: boolean;
  send(msg: Record<string, unknown>): void;
  of(id: string): any[];
}

const sockets: Raw[] = [];

async function rawSocket(key: string): Promise<Raw> {
  const ws = new WebSocket(`${h.app.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const s: Raw = {
    ws,
    frames: [],
    closed: null,
    get acked() {
      return this.frames.some((f) => f.type === 'connection_ack');
    },
    send: (msg) => ws.send(JSON.stringify(msg)),
    of: (id) => s.frames.filter((f) => f.id === id),
  };
  sockets.push(s);
  ws.on('message', (d) => s.frames.push(JSON.parse(String(d))));
  ws.on('close', (code, reason) => (s.closed ??= { code, reason: String(reason) }));
  ws.on('error', () => undefined);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  s.send({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } });
  await eventually(() => s.acked || s.closed, 10_000, 'connection_ack or close');
  return s;
}

const PAYMENT_UPDATED = 'subscription($id: ID) { paymentUpdated(id: $id) { id status } }';
const subscribe = (s: Raw, id: string, query: string, variables?: Record<string, unknown>) =>
  s.send({ id, type: 'subscribe', payload: { query, variables } });

const dataEvents = (s: Raw, id: string) => s.of(id).filter((f) => f.type === 'next' && f.payload.data?.paymentUpdated);
const errorEvents = (s: Raw, id: string) => s.of(id).filter((f) => f.type === 'next' && f.payload.errors?.length);
/** The subscription ended (an `error` or `complete` frame). */
const ended = (s: Raw, id: string) => s.of(id).some((f) => f.type === 'error' || f.type === 'complete');

/** A change of the payment as the service announces it, NOTIFYed by "another process". */
const notifyChange = (id: string) =>
  other.query('select pg_notify($1, $2)', [
    'cadence_changes',
    JSON.stringify({ topic: 'payment', merchantId: m.id, mode: 'test', id }),
  ]);

/** Terminates the service's backends (not `other`; not the LISTEN connection unless `listener`); answers how many. */
async function terminate(listener: boolean): Promise<number> {
  const r = await admin.query(
    `select pg_terminate_backend(pid) from pg_stat_activity
     where datname = $1 and pid <> pg_backend_pid() and pid <> $2 and ($3 or application_name is distinct from 'cadence-listener')`,
    [db, otherPid, listener],
  );
  return r.rowCount ?? 0;
}

async function connections(listener: boolean): Promise<number> {
  const r = await admin.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = $1 and backend_type = 'client backend' and pid <> $2 and ($3 or application_name is distinct from 'cadence-listener')`,
    [db, otherPid, listener],
  );
  return r.rows[0].n;
}

const refuseConnections = (refuse: boolean) =>
  admin.query(`alter database "${db}" allow_connections ${refuse ? 'false' : 'true'}`);

/** Every error any socket received is the retryable one; none is internal_error; no socket closed with 4500. */
function expectNoInternalErrors() {
  const text = JSON.stringify(sockets.map((s) => [s.frames, s.closed]));
  expect(text).not.toContain('internal_error');
  expect(text).not.toMatch(/internal server error/i);
  for (const s of sockets) {
    expect(s.closed?.code).not.toBe(4500);
    for (const f of s.frames) {
      const errors = f.type === 'error' ? f.payload : f.type === 'next' ? (f.payload.errors ?? []) : [];
      for (const e of errors) {
        expect(e.extensions).toMatchObject({
          code: 'service_unavailable',
          type: 'api_error',
          retryable: true,
          http: { status: 503 },
        });
        expect(e.message).not.toMatch(/ECONNREFUSED|accepting connections|terminat|select |knex/i);
      }
    }
  }
}

beforeAll(async () => {
  db = new URL(h.app.databaseUrl).pathname.slice(1);
  m = await h.merchant();
  fresh = await h.merchant();
  await connectProvider(m.test, 'stripe');
  payment = await createPayment(m.test);
  admin = new PgClient({ connectionString: process.env.TEST_PG_ADMIN_URL });
  await admin.connect();
  other = new PgClient({ connectionString: h.app.databaseUrl });
  await other.connect();
  otherPid = (await other.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid;
});

h.cleanup(async () => {
  await refuseConnections(false).catch(() => undefined);
  for (const s of sockets) s.ws.terminate();
  await other?.end();
  await admin?.end();
});

describe('graphql-ws during a database outage', () => {
  let a: Raw;

  it('answers retryable errors (never internal_error) while the database is away, and resumes on the same socket', async () => {
    a = await rawSocket(m.keys.test);
    expect(a.acked).toBe(true);
    subscribe(a, 'all', PAYMENT_UPDATED);
    subscribe(a, 'one', PAYMENT_UPDATED, { id: payment.id });
    await sleep(300);
    await notifyChange(payment.id);
    await eventually(
      () => dataEvents(a, 'all').length === 1 && dataEvents(a, 'one').length === 1,
      10_000,
      'the first events',
    );

    await refuseConnections(true);
    try {
      const outageStart = Date.now();
      // Every pool connection goes; the LISTEN connection stays: notifications still arrive, their payloads cannot be read.
      await terminate(false);
      await eventually(async () => (await connections(false)) === 0, 5_000, 'every pool connection gone');
      expect(h.app.app.listener.ready).toBe(true);

      // An event during the outage: a retryable error on each subscription, which stays open.
      await notifyChange(payment.id);
      await eventually(
        () => errorEvents(a, 'all').length === 1 && errorEvents(a, 'one').length === 1,
        10_000,
        'the outage errors',
      );
      for (const id of ['all', 'one']) {
        const [e] = errorEvents(a, id)[0].payload.errors;
        expect(e.extensions).toMatchObject({
          code: 'service_unavailable',
          type: 'api_error',
          retryable: true,
          http: { status: 503 },
        });
        expect(e.path).toEqual(['paymentUpdated']);
      }

      // Once the key cache (5 s) has lapsed, an operation's key check needs the database: that operation is refused
      // with the retryable error, the socket and its subscriptions stay.
      await sleep(Math.max(0, outageStart + 5_300 - Date.now()));
      subscribe(a, 'late', PAYMENT_UPDATED);
      subscribe(a, 'query', '{ merchant { id } }');
      await eventually(() => (ended(a, 'late') && ended(a, 'query')) || a.closed, 10_000, 'the refused operations');
      expect(a.closed).toBeNull(); // before: closed with 4500 and the error's text, taking every subscription with it
      for (const id of ['late', 'query']) {
        const [answer] = a.of(id);
        expect(answer.type).toBe('error');
        expect(answer.payload[0].extensions).toMatchObject({
          code: 'service_unavailable',
          retryable: true,
          http: { status: 503 },
        });
      }

      // A new connection whose key cannot be checked: closed with 1013 Try Again Later (graphql-ws clients retry it).
      for (const key of [fresh.keys.test, m.keys.test]) {
        const b = await rawSocket(key);
        expect(b.acked).toBe(false);
        expect(b.closed).toEqual({ code: 1013, reason: 'Try Again Later' });
      }
      expect(a.closed).toBeNull();
      expect(ended(a, 'all') || ended(a, 'one')).toBe(false);
      expectNoInternalErrors();

      // Over HTTP alike: a key that cannot be checked answers the retryable 503, REST and GraphQL.
      const rest = await fresh.test.get('/products');
      expect(rest.status).toBe(503);
      expect(rest.body.error).toMatchObject({ type: 'api_error', code: 'service_unavailable' });
      expect(rest.headers.get('retry-after')).toBe('1');
      const gql = await h.graphql(fresh.keys.test, '{ merchant { id } }');
      expect(gql.status).toBe(503);
      expect(gql.text).not.toMatch(/internal_error/);
    } finally {
      await refuseConnections(false);
    }

    // Back: the same subscriptions receive the next change.
    await eventually(
      async () => {
        await notifyChange(payment.id);
        await sleep(300);
        return dataEvents(a, 'all').length >= 2 && dataEvents(a, 'one').length >= 2;
      },
      15_000,
      'an event after the outage',
    );
    expect(dataEvents(a, 'one').at(-1).payload.data).toEqual({ paymentUpdated: { id: payment.id, status: 'PENDING' } });
    // New connections and operations work again.
    const c = await rawSocket(fresh.keys.test);
    expect(c.acked).toBe(true);
    subscribe(a, 'q2', '{ merchant { id } }');
    await eventually(() => ended(a, 'q2'), 10_000, 'the query after the outage');
    expect(a.of('q2')[0]).toEqual({ id: 'q2', type: 'next', payload: { data: { merchant: { id: m.id } } } });
    subscribe(a, 'again', PAYMENT_UPDATED);
    await sleep(300);
    expect(a.of('again')).toEqual([]);
    expect(a.closed).toBeNull();
    expect(ended(a, 'all') || ended(a, 'one')).toBe(false);
    expectNoInternalErrors();
  }, 60_000);

  it('after the LISTEN connection is lost and comes back, events reach the still-open subscriptions', async () => {
    const before = dataEvents(a, 'all').length;
    await refuseConnections(true);
    try {
      expect(await terminate(true)).toBeGreaterThan(0);
      await eventually(async () => (await connections(true)) === 0, 5_000, 'every connection gone, LISTEN included');
      await eventually(() => !h.app.app.listener.ready, 5_000, 'the listener to notice the loss');
      // Changed and NOTIFYed meanwhile by another process: no listener of ours hears it.
      await other.query(`update payments set updated_at = now() where id = $1`, [payment.id]);
      await notifyChange(payment.id);
      await sleep(2_000);
    } finally {
      await refuseConnections(false);
    }
    await eventually(() => h.app.app.listener.ready, 25_000, 'the LISTEN connection to come back');
    // The catch-up after the reconnection republishes the change missed meanwhile...
    await eventually(() => dataEvents(a, 'all').length > before, 10_000, 'the missed change');
    // ...and new changes flow again.
    const caughtUp = dataEvents(a, 'all').length;
    await notifyChange(payment.id);
    await eventually(
      () => dataEvents(a, 'all').length > caughtUp && dataEvents(a, 'again').length > 0,
      10_000,
      'a new event',
    );
    expect(a.closed).toBeNull();
    expect(ended(a, 'all') || ended(a, 'one') || ended(a, 'again')).toBe(false);
    const c = await rawSocket(fresh.keys.test);
    expect(c.acked).toBe(true);
    expectNoInternalErrors();
  }, 60_000);
});

import { spawn, ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as WsClient, createClient } from 'graphql-ws';
import { Client as PgClient } from 'pg';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config';
import { migrationsList } from '../../src/migrations';
import { Client_, eventually, request, submitCheckout } from '../harness';
import { freshDatabase, FreshDatabase } from '../harness/database';
import { PgBouncer, startPgBouncer } from '../harness/pgbouncer';
import { createPayment, connect } from '../payments/helpers';

/**
 * The service behind a real PgBouncer (Debian's 1.18, which does not track prepared statements) in transaction mode
 * (docs/production.md, "PgBouncer"): DATABASE_URL is the pooler, DATABASE_POOL_MODE=transaction sends statements
 * unnamed, and DATABASE_SESSION_URL (PostgreSQL directly) carries the LISTEN connection and the session locks. Shown
 * through the API of the real service process: migrations, concurrent requests, a GraphQL live update (LISTEN) and
 * test-clock advances (their lock). And that it is needed: without DATABASE_SESSION_URL the service refuses to start,
 * and with named statements through the same pooler requests fail.
 */

jest.setTimeout(120_000);

const MAIN = path.join(__dirname, '..', '..', 'dist', 'src', 'main.js'); // built by `npm test`
const ADMIN = crypto.randomBytes(16).toString('hex');

interface Service {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** `npm start` (dist/src/main.js) on `env`, as users run it, until its banner; or its exit code and output. */
async function startService(env: Record<string, string>): Promise<Service | { code: number | null; output: string }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-pgbouncer-'));
  const full: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ADMIN_TOKEN: ADMIN,
    DB_POOL_MAX: '10',
    ...env,
  };
  delete full.NODE_ENV;
  for (const name of ['DATABASE_SESSION_URL', 'DATABASE_POOL_MODE', 'DATABASE_READ_URL']) {
    if (!(name in env)) delete full[name];
  }
  const child = spawn(process.execPath, [MAIN], { env: full, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // 'close': after its output has been read to the end.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(kill);
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  let banner: RegExpExecArray | null = null;
  try {
    await eventually(
      () => (banner = /Cadence is running at (\S+)/.exec(out)) || child.exitCode !== null || child.signalCode !== null,
      60_000,
      'the banner',
    );
  } catch (err) {
    await stop();
    throw new Error(`${err}\n${out}`, { cause: err });
  }
  if (!banner) {
    const code = await exited;
    await stop();
    return { code, output: out };
  }
  const url = (banner as RegExpExecArray)[1];
  return { url, child, output: () => out, stop };
}

async function started(env: Record<string, string>): Promise<Service> {
  const s = await startService(env);
  if (!('url' in s)) throw new Error(`the service exited (${s.code}):\n${s.output}`);
  return s;
}

/** A merchant made through the admin API: its test-mode REST client. */
async function merchant(url: string): Promise<Client_> {
  const r = await request(`${url}/v1/admin/merchants`, {
    key: ADMIN,
    body: { name: `Pooled ${crypto.randomBytes(3).toString('hex')}`, reporting_currency: 'INR' },
  });
  if (r.status !== 201) throw new Error(`merchant not created: ${r.status} ${r.text}`);
  return new Client_(url, r.body.api_keys.test);
}

/** `n` customers created at once, then each read back at once: every status. */
async function concurrentCreatesAndReads(c: Client_, n: number): Promise<number[]> {
  const created = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      c.post('/customers', { email: `pooled-${i}-${crypto.randomBytes(3).toString('hex')}@example.com` }),
    ),
  );
  const read = await Promise.all(created.filter((r) => r.status === 201).map((r) => c.get(`/customers/${r.body.id}`)));
  return [...created, ...read].map((r) => r.status);
}

let db: FreshDatabase | undefined;
let bouncer: PgBouncer | undefined;
let service: Service | undefined;
let c: Client_;
const sockets: WsClient[] = [];

beforeAll(async () => {
  db = await freshDatabase('cadence_pgbouncer');
  bouncer = await startPgBouncer(process.env.TEST_PG_ADMIN_URL!);
  service = await started({
    DATABASE_URL: bouncer.url(db.name),
    DATABASE_POOL_MODE: 'transaction',
    DATABASE_SESSION_URL: db.url,
  });
  c = await merchant(service.url);
});

afterAll(async () => {
  try {
    await Promise.all(sockets.map((s) => s.dispose()));
    await service?.stop();
    await bouncer?.stop();
  } finally {
    await db?.drop();
  }
});

describe('DATABASE_POOL_MODE and DATABASE_SESSION_URL', () => {
  it('are read beside DATABASE_URL; transaction mode needs a session URL', () => {
    const url = 'postgresql://u@pooler:6432/cadence';
    const direct = 'postgresql://u@db:5432/cadence';
    expect(loadConfig({ DATABASE_URL: url })).toMatchObject({
      databasePoolMode: 'session',
      databaseSessionUrl: undefined,
    });
    expect(
      loadConfig({ DATABASE_URL: url, DATABASE_POOL_MODE: 'transaction', DATABASE_SESSION_URL: direct }),
    ).toMatchObject({ databasePoolMode: 'transaction', databaseSessionUrl: direct });
    expect(() => loadConfig({ DATABASE_URL: url, DATABASE_POOL_MODE: 'statement' })).toThrow(
      'DATABASE_POOL_MODE must be session or transaction, got "statement"',
    );
    expect(() => loadConfig({ DATABASE_URL: url, DATABASE_POOL_MODE: 'transaction' })).toThrow(
      'DATABASE_POOL_MODE=transaction needs DATABASE_SESSION_URL',
    );
    expect(() => loadConfig({ DATABASE_SESSION_URL: direct })).toThrow('DATABASE_SESSION_URL needs DATABASE_URL');
  });
});

describe('behind PgBouncer in transaction mode', () => {
  it('migrated the database and counts its connections per server', async () => {
    const pg = new PgClient({ connectionString: db!.url });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: number }>('select count(*)::int as n from mikro_orm_migrations');
      expect(rows[0].n).toBe(migrationsList.length);
    } finally {
      await pg.end();
    }
    expect((await request(`${service!.url}/readyz`)).status).toBe(200);
    // LISTEN, the in-process sandbox and the test-clock locks on DATABASE_SESSION_URL, the pool on the pooler.
    expect(service!.output()).toMatch(
      /Database +DATABASE_URL; at most 10 connections \(pool 10\); DATABASE_SESSION_URL: at most \d+ \(LISTEN 1, sandbox \d+, test-clock locks 2\)/,
    );
  });

  it('answers 50 concurrent creates, then 50 concurrent reads, through the pooler', async () => {
    const before = await pooledTransactions();
    const statuses = await concurrentCreatesAndReads(c, 50);
    expect(statuses).toEqual([...Array(50).fill(201), ...Array(50).fill(200)]);
    // They went through PgBouncer, in transaction mode, on its 3 server connections.
    expect((await pooledTransactions()) - before).toBeGreaterThanOrEqual(100);
    const pool = (await bouncer!.admin('SHOW POOLS')).find((p) => p.database === db!.name);
    expect(pool).toMatchObject({ pool_mode: 'transaction' });
  });

  it('delivers a GraphQL live update over the WebSocket (LISTEN on the session URL)', async () => {
    await connect(c, 'stripe');
    const payment = await createPayment(c);
    const ws = createClient({
      url: `${service!.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${c.key}` },
      retryAttempts: 0,
    });
    sockets.push(ws);
    const events: { id: string; status: string }[] = [];
    const errors: unknown[] = [];
    ws.subscribe<{ paymentUpdated: { id: string; status: string } }>(
      { query: 'subscription($id: ID) { paymentUpdated(id: $id) { id status } }', variables: { id: payment.id } },
      {
        next: (v) => (v.data ? events.push(v.data.paymentUpdated) : errors.push(v.errors)),
        error: (e) => errors.push(e),
        complete: () => undefined,
      },
    );
    // The subscription is registered once the server has answered a query on the same socket.
    await new Promise<void>((resolve, reject) =>
      ws.subscribe({ query: '{ __typename }' }, { next: () => undefined, error: reject, complete: resolve }),
    );
    const paid = await submitCheckout(payment.checkout_url, { outcome: 'success' });
    expect(paid.status).toBe(303);
    await eventually(() => events.some((e) => e.status === 'SUCCEEDED'), 20_000, 'the live update');
    expect(errors).toEqual([]);
    expect(events.every((e) => e.id === payment.id)).toBe(true);
  });

  it('advances a test clock, two advances at once taking turns on the session lock', async () => {
    const before = new Date((await c.get('/test-clock')).body.now).getTime();
    const [a, b] = await Promise.all([
      c.post('/test-clock/advance', { seconds: 86_400 }),
      c.post('/test-clock/advance', { seconds: 86_400 }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const after = new Date((await c.get('/test-clock')).body.now).getTime();
    expect(after - before).toBeGreaterThanOrEqual(2 * 86_400_000);
    // No session lock left held on a server connection of the pooler: the advance lock was on the session URL.
    const pg = new PgClient({ connectionString: db!.url });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ n: number }>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and database =
           (select oid from pg_database where datname = current_database())`,
      );
      expect(rows[0].n).toBe(0);
    } finally {
      await pg.end();
    }
  });
});

describe('what transaction mode needs', () => {
  it('refuses to start without DATABASE_SESSION_URL, saying why', async () => {
    const s = await startService({ DATABASE_URL: bouncer!.url(db!.name), DATABASE_POOL_MODE: 'transaction' });
    if ('url' in s) {
      await s.stop();
      throw new Error('the service started in transaction mode without DATABASE_SESSION_URL');
    }
    expect(s.code).toBe(1);
    expect(s.output).toContain('DATABASE_POOL_MODE=transaction needs DATABASE_SESSION_URL');
  });

  it('fails requests with named prepared statements through the same pooler (session mode, the default)', async () => {
    const s = await started({ DATABASE_URL: bouncer!.url(db!.name), DATABASE_SESSION_URL: db!.url });
    try {
      const named = new Client_(s.url, c.key);
      const statuses = await concurrentCreatesAndReads(named, 50);
      expect(statuses.filter((status) => status >= 500).length).toBeGreaterThan(0);
      // PostgreSQL's own words: a statement named on one server connection, run or prepared again on another.
      expect(s.output()).toMatch(/prepared statement .{0,4}q[0-9a-f]{20}g\d+.{0,4} (does not exist|already exists)/);
    } finally {
      await s.stop();
    }
  });
});

/** Transactions PgBouncer has passed to the test database so far. */
async function pooledTransactions(): Promise<number> {
  const stats = (await bouncer!.admin('SHOW STATS')).find((s) => s.database === db!.name);
  return Number(stats?.total_xact_count ?? 0);
}

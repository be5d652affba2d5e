import crypto from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import Redis from 'ioredis';
import WebSocket from 'ws';
import { openDatabase } from '../../src/core/db';
import { chunkOf, LimitStore, RateLimits, SocketLeases } from '../../src/core/limits';
import { pruneLimits } from '../../src/core/limits/limits.store';
import { redisClient } from '../../src/core/limits/store';
import { openServicePool } from '../../src/core/sql';
import { entities } from '../../src/entities';
import { eventually, request, sleep } from '../harness';
import { freshRequest, ProcessGroup, startProcessGroup } from '../harness/cluster';
import { freshDatabase, FreshDatabase } from '../harness/database';

/**
 * Per-key rate limits and WebSocket caps hold across processes (docs/operations.md, "Shared limits"): in PostgreSQL by
 * default, in Redis with REDIS_URL. First the pieces, as two processes would hold them (two pools, two Redis clients),
 * then the service itself as a supervisor with two API processes on each store.
 */

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Nothing listens here: a Redis that is away. */
const NO_REDIS_URL = 'redis://127.0.0.1:1';

let db: FreshDatabase;
const orms: MikroORM[] = [];
const redisClients: Redis[] = [];
/** This file's keys in the shared Redis, so parallel test files never meet. */
const prefix = `cadence-test-${crypto.randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  db = await freshDatabase();
  for (let i = 0; i < 2; i++) orms.push(await openDatabase(db.url, entities, 4)); // two processes' pools
}, 60_000);

afterAll(async () => {
  for (const r of redisClients) r.disconnect();
  const admin = new Redis(REDIS_URL);
  const keys = await admin.keys(`${prefix}*`);
  if (keys.length) await admin.del(...keys);
  admin.disconnect();
  for (const orm of orms) await orm.close(true);
  await db?.drop();
});

async function redisStore(url = REDIS_URL): Promise<LimitStore> {
  const redis = redisClient(url);
  redisClients.push(redis);
  if (url !== NO_REDIS_URL) await redis.connect();
  return { kind: 'redis', redis, keyPrefix: prefix };
}

const postgresStore = (i: number): LimitStore => ({ kind: 'postgres', pool: openServicePool(orms[i]) });

/** Two processes' stores on one PostgreSQL, or on one Redis. */
const stores: Record<string, () => Promise<[LimitStore, LimitStore]>> = {
  postgres: async () => [postgresStore(0), postgresStore(1)],
  redis: async () => [await redisStore(), await redisStore()],
};

describe.each(Object.keys(stores))('rate limits on %s', (kind) => {
  it('hold one key at its limit and burst in total across two processes', async () => {
    const [a, b] = (await stores[kind]()).map((s) => new RateLimits(s));
    const key = crypto.randomUUID();
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).consume(key, 20)));
    const seconds = (Date.now() - started) / 1000;
    const allowed = answers.filter((r) => r === null).length;
    // 20 a second plus one burst of 20 in 10 s: per process it would be twice that.
    expect(allowed).toBeGreaterThanOrEqual(40);
    expect(allowed).toBeLessThanOrEqual(20 * (Math.floor(seconds) + 1) + 20);
    const rejected = answers.find((r) => r !== null)!;
    expect(rejected.msBeforeNext).toBeGreaterThan(0);
    expect(rejected.msBeforeNext).toBeLessThanOrEqual(1_000);
  });

  it('take high limits in chunks of 1%, never admitting more than the limit', async () => {
    expect([1, 20, 199, 200, 1_000, 100_000].map(chunkOf)).toEqual([1, 1, 1, 2, 10, 1_000]);
    const [a, b] = (await stores[kind]()).map((s) => new RateLimits(s));
    const key = crypto.randomUUID();
    const started = Date.now();
    let allowed = 0;
    // 50 at a time per process, as concurrent requests arrive.
    for (let round = 0; round < 40; round++) {
      const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).consume(key, 1_000)));
      allowed += answers.filter((r) => r === null).length;
    }
    const seconds = (Date.now() - started) / 1000;
    expect(allowed).toBeLessThanOrEqual(1_000 * (Math.floor(seconds) + 1) + 1_000);
    // What the processes held unspent is forgone: at most a chunk each per window, never more than 1% per process.
    expect(allowed).toBeGreaterThanOrEqual(2_000 - 2 * chunkOf(1_000));
  });
});

describe('rate limits when Redis is away', () => {
  it('answer at once and hold per process (the in-memory fallback)', async () => {
    const away = new RateLimits(await redisStore(NO_REDIS_URL));
    const key = crypto.randomUUID();
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 30 }, () => away.consume(key, 5)));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(answers.filter((r) => r === null)).toHaveLength(10); // 5 a second and a burst of 5
  });
});

describe.each(Object.keys(stores))('WebSocket leases on %s', (kind) => {
  it('cap one key across two processes; a released or expired lease frees its place', async () => {
    const [sa, sb] = await stores[kind]();
    const a = new SocketLeases(sa, { leaseMs: 60_000, renewMs: 20_000 });
    const b = new SocketLeases(sb, { leaseMs: 60_000, renewMs: 20_000 });
    const key = crypto.randomUUID();
    const first = await a.acquire(key, 2, 0);
    const second = await b.acquire(key, 2, 0);
    expect(first).toEqual(expect.any(String));
    expect(second).toEqual(expect.any(String));
    expect(await a.acquire(key, 2, 1)).toBeNull();
    expect(await b.acquire(crypto.randomUUID(), 2, 0)).toEqual(expect.any(String)); // another key's places are its own
    await b.release(second!);
    const third = await a.acquire(key, 2, 1);
    expect(third).toEqual(expect.any(String));
    expect(await b.acquire(key, 2, 0)).toBeNull();

    // A process that dies leaves leases that expire; one that lives renews its own.
    const dying = new SocketLeases(sa, { leaseMs: 400, renewMs: 100 });
    const living = new SocketLeases(sb, { leaseMs: 400, renewMs: 100 });
    const other = crypto.randomUUID();
    expect(await dying.acquire(other, 2, 0)).toEqual(expect.any(String));
    expect(await living.acquire(other, 2, 0)).toEqual(expect.any(String));
    living.start();
    try {
      await sleep(900);
      const taken = await a.acquire(other, 2, 0);
      expect(taken).toEqual(expect.any(String)); // the dying one's place
      expect(await a.acquire(other, 2, 1)).toBeNull(); // the living one's renewed lease still counts
    } finally {
      await living.close();
    }
    expect(await b.acquire(other, 2, 0)).toEqual(expect.any(String)); // closing released it
    await Promise.all([a.close(), b.close(), dying.close()]);
  });
});

describe('the PostgreSQL store', () => {
  it('prunes counters whose window ended over an hour ago and leases expired over a minute ago', async () => {
    const pool = openServicePool(orms[0]);
    const [oldKey, newKey] = [`old-${crypto.randomUUID()}`, `new-${crypto.randomUUID()}`];
    await pool.query('insert into rate_limits values ($1, 1, $2), ($3, 1, $4)', [
      oldKey,
      Date.now() - 2 * 3_600_000,
      newKey,
      Date.now() - 60_000,
    ]);
    const [gone, kept] = [crypto.randomUUID(), crypto.randomUUID()];
    await pool.query(
      `insert into websocket_leases values ($1, $3, now() - interval '2 minutes'), ($2, $3, now() - interval '10 seconds')`,
      [gone, kept, crypto.randomUUID()],
    );
    await pruneLimits(pool);
    const counters = await pool.query('select key from rate_limits where key = any($1)', [[oldKey, newKey]]);
    expect(counters.rows.map((r) => r.key)).toEqual([newKey]);
    const leases = await pool.query('select id from websocket_leases where id = any($1::uuid[])', [[gone, kept]]);
    expect(leases.rows.map((r) => r.id)).toEqual([kept]);
  });
});

describe('WebSocket leases when Redis is away', () => {
  it("fall back to the process's own count", async () => {
    const away = new SocketLeases(await redisStore(NO_REDIS_URL));
    const key = crypto.randomUUID();
    expect(await away.acquire(key, 2, 1)).toEqual(expect.any(String));
    expect(await away.acquire(key, 2, 2)).toBeNull();
  });
});

/** One key's limit held by a supervisor's two API processes: 300 requests, each on a connection of its own. */
describe.each([
  ['PostgreSQL', {}],
  ['Redis', { REDIS_URL, REDIS_KEY_PREFIX: prefix }],
])('two API processes on %s', (_name, env) => {
  let group: ProcessGroup;
  let groupDb: FreshDatabase;
  const adminToken = crypto.randomBytes(16).toString('hex');
  let key: string;

  beforeAll(async () => {
    groupDb = await freshDatabase();
    group = await startProcessGroup({
      ...env,
      DATABASE_URL: groupDb.url,
      ADMIN_TOKEN: adminToken,
      WS_MAX_SOCKETS_PER_KEY: '2',
    });
    const merchant = await request(`${group.url}/v1/admin/merchants`, {
      key: adminToken,
      body: { name: 'Limited', reporting_currency: 'INR', rate_limit_per_second: 20 },
    });
    expect(merchant.status).toBe(201);
    key = merchant.body.api_keys.test;
  }, 60_000);

  afterAll(async () => {
    await group?.kill();
    await groupDb?.drop();
  });

  it('hold the key at 20/s with bursts of 40 in total, both processes answering', async () => {
    const started = Date.now();
    const answers: { status: number; requestId: string }[] = [];
    for (let i = 0; i < 300; i += 30) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 30 }, () => freshRequest(`${group.url}/v1/products?limit=1`, { token: key })),
        )),
      );
    }
    const seconds = (Date.now() - started) / 1000;
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length + answers.filter((a) => a.status === 429).length).toBe(300);
    expect(ok.length).toBeGreaterThanOrEqual(40);
    expect(ok.length).toBeLessThanOrEqual(20 * (Math.floor(seconds) + 1) + 20);
    // Both processes let requests of the key through: the budget is the key's, not each process's.
    const pids = await eventually(
      () => {
        const served = ok.map((a) => group.out.servedBy(a.requestId));
        return served.every(Boolean) && new Set(served as number[]);
      },
      5_000,
      'the request log lines',
    );
    expect(pids).toEqual(new Set(group.apiPids));
  });

  it('cap the key at 2 WebSockets in total: the third, on either process, is closed with 4429', async () => {
    const url = `${group.url.replace(/^http/, 'ws')}/graphql`;
    const open = (): Promise<{ ws: WebSocket; outcome: string }> =>
      new Promise((resolve, reject) => {
        const ws = new WebSocket(url, 'graphql-transport-ws');
        ws.on('open', () =>
          ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } })),
        );
        ws.on('message', (m) => {
          if (JSON.parse(String(m)).type === 'connection_ack') resolve({ ws, outcome: 'ack' });
        });
        ws.on('close', (code) => resolve({ ws, outcome: String(code) }));
        ws.on('error', reject);
      });
    // One at a time, each on a new connection: the cluster hands them to the two processes in turn.
    const first = await open();
    const second = await open();
    const third = await open();
    const fourth = await open();
    expect([first.outcome, second.outcome, third.outcome, fourth.outcome]).toEqual(['ack', 'ack', '4429', '4429']);
    // A closed socket gives its place back.
    first.ws.close();
    const again = await eventually(
      async () => {
        const s = await open();
        if (s.outcome === 'ack') return s;
        return null;
      },
      5_000,
      'a place freed',
    );
    for (const s of [second, again]) s.ws.close();
  });
});

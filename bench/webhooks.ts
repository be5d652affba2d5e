import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import { openDatabase } from '../src/core/db';
import { entities } from '../src/entities';
import { SecretBox } from '../src/core/secrets';
import { createBenchDatabase } from './lib/database';
import { Child, onCleanup, runBench, startChild } from './lib/processes';

/**
 * `npm run bench:webhooks`: outbound webhook delivery from the outbox to a local receiver that answers 200 at once,
 * with WEBHOOK_BENCH_WORKERS worker processes (`node dist/src/worker.js`, default 2) on one PostgreSQL database.
 *
 *   1. burst: N events written to the outbox in one go; delivered events per second until the last one arrives;
 *   2. paced: events written at WEBHOOK_BENCH_RATE per second (default 500) for WEBHOOK_BENCH_SECONDS (default 10);
 *      latency from the outbox write (the event's created_at) to its arrival at the receiver: p50, p95, p99, max.
 *
 * Target: >= 500 events/s and p99 < 1 s. Figures are informational; the exit code is 1 only when the bench cannot
 * run (a worker does not start, an event never arrives, a signature does not verify).
 *
 * Environment: DATABASE_URL (a server to create cadence_bench_<random> on; default the local PostgreSQL),
 * WEBHOOK_BENCH_EVENTS (burst size, default 10000), WEBHOOK_BENCH_RATE, WEBHOOK_BENCH_SECONDS,
 * WEBHOOK_BENCH_WORKERS, WORKER_CONCURRENCY (passed to the workers).
 */

const ROOT = path.resolve(__dirname, '..', '..');
const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench:webhooks: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<number> {
  const burst = num('WEBHOOK_BENCH_EVENTS', 10_000);
  const rate = num('WEBHOOK_BENCH_RATE', 500);
  const seconds = num('WEBHOOK_BENCH_SECONDS', 10);
  const workers = num('WEBHOOK_BENCH_WORKERS', 2);
  const server = process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const workerMain = path.join(ROOT, 'dist', 'src', 'worker.js');
  if (!fs.existsSync(workerMain)) throw new Error(`${workerMain} missing: build first (npm run bench:webhooks builds)`);

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-bench-webhooks-'));
  onCleanup('remove temporary directory', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const db = await createBenchDatabase(server);
  onCleanup(`drop database ${db.name}`, () => db.drop());
  const orm = await openDatabase(db.url, entities, 2); // migrates
  await orm.close(true);
  const pool = new Pool({ connectionString: db.url, max: 4 });
  onCleanup('close pool', () => pool.end());

  // The receiver: answers 200 at once and notes when each event arrived.
  const arrived = new Map<string, number>();
  let sample: { body: string; headers: http.IncomingHttpHeaders } | null = null;
  let waiter: (() => void) | null = null;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!arrived.has(id)) arrived.set(id, Date.now());
      if (!sample) sample = { body: Buffer.concat(chunks).toString('utf8'), headers: req.headers };
      res.end('ok');
      waiter?.();
    });
  });
  receiver.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  onCleanup(
    'close receiver',
    () =>
      new Promise<void>((resolve) => {
        receiver.closeAllConnections();
        receiver.close(() => resolve());
      }),
  );
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;

  // One merchant's test endpoint on the receiver, sealed with the workers' key.
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const box = SecretBox.fromEnv(tmp, { ENCRYPTION_KEY: encryptionKey });
  const secret = `whsec_${crypto.randomBytes(32).toString('base64')}`;
  const merchantId = uuidv7();
  const endpointId = uuidv7();
  await pool.query(
    `insert into webhook_endpoints (id, created_at, merchant_id, mode, url, enabled, enabled_events, secret_sealed, updated_at)
     values ($1, now() - interval '1 minute', $2, 'test', $3, true, '["*"]', $4, now())`,
    [endpointId, merchantId, receiverUrl, box.seal(secret)],
  );

  const children: Child[] = [];
  for (let i = 0; i < workers; i++) {
    const log = path.join(tmp, `worker-${i}.log`);
    const child = startChild(
      `worker ${i + 1}`,
      [workerMain],
      {
        ...process.env,
        DATABASE_URL: db.url,
        ENCRYPTION_KEY: encryptionKey,
        DATA_DIR: tmp,
        LOG_LEVEL: 'warn',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'on', // the receiver is on 127.0.0.1
      },
      log,
    );
    children.push(child);
  }
  for (const child of children) {
    const deadline = Date.now() + 60_000;
    while (!child.tail().includes('webhook worker running')) {
      if (child.hasExited() || Date.now() > deadline) throw new Error(`${child.name} did not start:\n${child.tail()}`);
      await sleep(100);
    }
  }
  note(`${workers} worker process(es) running on ${db.name}`);

  /** Writes `n` outbox events (as recordEvent does) in one statement; returns their ids. */
  const write = async (n: number): Promise<string[]> => {
    const ids: string[] = [];
    const payloads: string[] = [];
    const now = new Date();
    for (let i = 0; i < n; i++) {
      const id = uuidv7();
      ids.push(id);
      payloads.push(
        JSON.stringify({
          id,
          object: 'event',
          type: 'payment.succeeded',
          livemode: false,
          created_at: now.toISOString(),
          data: {
            object: {
              id: uuidv7(),
              object: 'payment',
              amount: 49900,
              currency: 'INR',
              status: 'succeeded',
              metadata: {},
            },
          },
        }),
      );
    }
    await pool.query(
      `insert into outbox_events (id, created_at, merchant_id, mode, type, payload)
       select t.id, $3, $2, 'test', 'payment.succeeded', t.payload::jsonb from unnest($1::uuid[], $4::text[]) as t(id, payload)`,
      [ids, merchantId, now, payloads],
    );
    return ids;
  };
  const waitAll = async (ids: string[], timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !arrived.has(id))) {
      if (Date.now() > deadline)
        throw new Error(`${ids.filter((id) => !arrived.has(id)).length} of ${ids.length} events never arrived`);
      await new Promise<void>((resolve) => {
        waiter = resolve;
        setTimeout(resolve, 100);
      });
    }
  };

  // Warm-up: connections, JIT, caches.
  await waitAll(await write(200), 30_000);
  const s = sample as { body: string; headers: http.IncomingHttpHeaders } | null;
  if (!s) throw new Error('no delivery arrived');
  new Webhook(secret).verify(s.body, s.headers as Record<string, string>); // throws if the signature is wrong

  // 1. Burst.
  note(`burst: ${burst} events`);
  const t0 = Date.now();
  const burstIds: string[] = [];
  for (let left = burst; left > 0; left -= 1000) burstIds.push(...(await write(Math.min(1000, left))));
  await waitAll(burstIds, 300_000);
  const burstEnd = Math.max(...burstIds.map((id) => arrived.get(id)!));
  const burstRate = burst / ((burstEnd - t0) / 1000);

  // 2. Paced.
  note(`paced: ${rate} events/s for ${seconds}s`);
  const tick = 50;
  const perTick = rate / (1000 / tick);
  const written = new Map<string, number>();
  const pacedStart = Date.now();
  let sent = 0;
  while (Date.now() - pacedStart < seconds * 1000) {
    const due = Math.floor(((Date.now() - pacedStart) / tick + 1) * perTick) - sent;
    if (due > 0) {
      const at = Date.now();
      const ids = await write(due);
      for (const id of ids) written.set(id, at);
      sent += due;
    }
    await sleep(Math.max(0, pacedStart + Math.ceil((Date.now() - pacedStart + 1) / tick) * tick - Date.now()));
  }
  await waitAll([...written.keys()], 120_000);
  const latencies = [...written].map(([id, at]) => arrived.get(id)! - at).sort((a, b) => a - b);
  const pacedSpan = (Math.max(...[...written.keys()].map((id) => arrived.get(id)!)) - pacedStart) / 1000;

  const dup = await pool.query(
    `select count(*)::int as n from webhook_deliveries where attempts <> 1 or status <> 'succeeded'`,
  );
  say('');
  say('Cadence webhook delivery benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s), ${workers} worker process(es) (WORKER_CONCURRENCY ${process.env.WORKER_CONCURRENCY ?? 'default'}), receiver in the bench process`,
  );
  say(`  database ${db.name} on ${new URL(server).host}`);
  say('');
  say(
    `  burst   ${burst} events written at once: delivered in ${((burstEnd - t0) / 1000).toFixed(2)} s = ${burstRate.toFixed(0)} events/s  [target >= 500/s: ${burstRate >= 500 ? 'PASS' : 'MISS'}]`,
  );
  const p99 = percentile(latencies, 99);
  say(
    `  paced   ${sent} events at ${rate}/s over ${seconds}s (all delivered after ${pacedSpan.toFixed(2)} s): outbox-to-receiver latency`,
  );
  say(
    `          p50 ${percentile(latencies, 50)} ms, p95 ${percentile(latencies, 95)} ms, p99 ${p99} ms, max ${latencies[latencies.length - 1]} ms  [target p99 < 1000 ms: ${p99 < 1000 ? 'PASS' : 'MISS'}]`,
  );
  say(`  deliveries not succeeded at their first attempt: ${dup.rows[0].n}`);
  say('');
  return 0;
}

runBench(main, note);

import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { MikroORM } from '@mikro-orm/postgresql';
import { startApp, RunningApp } from '../../src/app';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { eventually, Receiver, sleep, useHarness } from '../harness';
import { spawnTs } from '../harness/process';
import { emitEvent, emitMany, verify } from './helpers';

/**
 * Durability: deliveries live in PostgreSQL, so a worker killed at any point loses nothing, and several workers on
 * one database never send the same attempt twice at once.
 */
const DATA_DIR = path.join(os.tmpdir(), 'cadence-test-data'); // the harness's: same sealing key as the test app

async function startWorkerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildProcess> {
  // The receiver is on 127.0.0.1: the worker, on DATABASE_URL, must be allowed to reach it.
  const full = { DATABASE_URL: databaseUrl, DATA_DIR, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'on', ...env };
  return (await spawnTs('src/worker.ts', full, /webhook worker running/)).child;
}

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));

describe('several workers on one database', () => {
  const h = useHarness({ workerConcurrency: 16 });
  let rx: Receiver;
  let app2: RunningApp;
  let orm2: MikroORM;
  beforeAll(async () => {
    orm2 = await openDatabase(h.app.databaseUrl, entities, 4);
    app2 = await startApp(
      {
        ...loadConfig({}),
        port: 0,
        databaseUrl: h.app.databaseUrl,
        sandbox: false,
        workerConcurrency: 16,
        dataDir: DATA_DIR,
      },
      orm2,
      0,
    );
    rx = await h.receiver();
  });
  h.cleanup(async () => {
    await app2.close();
    await orm2.close(true);
  });

  it('deliver each attempt once', async () => {
    const m = await h.merchant();
    const ep = (await m.test.post('/webhooks/endpoints', { url: `${rx.url}/two`, mode: 'test' })).body;
    rx.respond = async () => {
      await sleep(5); // a receiver that takes a moment, so attempts overlap
      return 200;
    };
    const ids = await emitMany(h.app, m.id, 'test', 300);
    // a third sender races them: a pass run directly
    await h.app.app.services.delivery.dispatcher.drain();
    await rx.waitFor(300, 30_000);
    await sleep(500);
    const got = rx.received.filter((r) => r.path === '/two');
    expect(got).toHaveLength(300);
    expect(new Set(got.map((r) => r.headers['webhook-id']))).toEqual(new Set(ids));
    verify(ep.secret, got[123]);
    const rows = await h.app.orm.em
      .getConnection()
      .execute(
        `select status, attempts, count(*)::int as n from webhook_deliveries where merchant_id = ? group by status, attempts`,
        [m.id],
      );
    expect(rows).toEqual([{ status: 'succeeded', attempts: 1, n: 300 }]);
  });
});

describe('a worker killed mid-delivery', () => {
  const h = useHarness({ worker: false }); // the API alone: separate worker processes deliver
  let rx: Receiver;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    rx = await h.receiver();
  });
  h.cleanup(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });

  it('loses nothing: the attempt is sent again, with the same webhook-id, once its lease runs out', async () => {
    const m = await h.merchant();
    const ep = (await m.test.post('/webhooks/endpoints', { url: `${rx.url}/kill`, mode: 'test' })).body;
    const tt = (await m.test.post('/webhooks/trigger-test')).body;
    // written while no worker runs: waits in the outbox
    const queued = await emitEvent(h.app, m.id, 'test', 'subscription.created');

    let hang = true;
    rx.respond = () => (hang ? new Promise<number>(() => undefined) : 200); // the first requests never get an answer
    const first = await startWorkerProcess(h.app.databaseUrl, { WEBHOOK_TIMEOUT_MS: '2000' });
    children.push(first);
    await rx.waitFor(2, 20_000);
    first.kill('SIGKILL'); // mid-delivery: sent, no answer recorded
    await exited(first);
    const d = (await m.test.get(`/webhooks/deliveries/${tt.deliveries[0].id}`)).body;
    expect(d).toMatchObject({ status: 'pending', attempts: 0 });

    hang = false;
    const second = await startWorkerProcess(h.app.databaseUrl, { WEBHOOK_TIMEOUT_MS: '2000' });
    children.push(second);
    await eventually(
      async () => {
        const all = (await m.test.get('/webhooks/deliveries')).body.data;
        return all.length === 2 && all.every((x: any) => x.status === 'succeeded');
      },
      20_000,
      'both deliveries to succeed',
    );
    const ids = rx.received.map((r) => r.headers['webhook-id']);
    expect(ids.filter((x) => x === tt.event_id)).toHaveLength(2); // at least once: the lost attempt was sent again
    expect(ids.filter((x) => x === queued)).toHaveLength(2);
    for (const r of rx.received) verify(ep.secret, r);
    const after = (await m.test.get(`/webhooks/deliveries/${tt.deliveries[0].id}`)).body;
    expect(after).toMatchObject({ status: 'succeeded', attempts: 1, response_status: 200 });

    // SIGTERM: the attempt in flight finishes and is recorded before the process exits
    rx.respond = async () => {
      await sleep(500);
      return 200;
    };
    const late = (await m.test.post('/webhooks/trigger-test')).body;
    await rx.waitFor(5, 10_000);
    second.kill('SIGTERM');
    await exited(second);
    expect(second.exitCode).toBe(0);
    const graceful = (await m.test.get(`/webhooks/deliveries/${late.deliveries[0].id}`)).body;
    expect(graceful).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});

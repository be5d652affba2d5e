import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_TOKEN, eventually, Receiver, request, useHarness } from '../harness';
import { spawnTs } from '../harness/process';

/**
 * `npm run worker` serves its own GET /metrics on WORKER_METRICS_PORT (docs/production.md, "Metrics"): the delivery
 * attempts only it counts, its pool and the queue depths, to the operator token; nothing without the setting.
 */
const DATA_DIR = path.join(os.tmpdir(), 'cadence-test-data'); // the harness's: same sealing key as the test app

const h = useHarness({ worker: false }); // the API alone: the worker process delivers
const children: ChildProcess[] = [];
h.cleanup(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
});

async function startWorker(env: Record<string, string>): Promise<{ child: ChildProcess; output: string }> {
  const { child, match } = await spawnTs(
    'src/worker.ts',
    {
      DATABASE_URL: h.app.databaseUrl,
      DATA_DIR,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'on', // the receiver is on 127.0.0.1
      ADMIN_TOKEN,
      ...env,
    },
    /webhook worker running[^\n]*/,
  );
  children.push(child);
  return { child, output: match[0] };
}

const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
};

describe('the worker process metrics', () => {
  let rx: Receiver;
  beforeAll(async () => {
    rx = await h.receiver();
  });

  it('counts its delivery attempts and serves them with its pool and the queues, to the operator token', async () => {
    const m = await h.merchant();
    await m.test.post('/webhooks/endpoints', { url: `${rx.url}/worker`, mode: 'test' });
    const { output } = await startWorker({ WORKER_METRICS_PORT: '0' });
    const url = /metrics at (http:\/\/\S+\/metrics)/.exec(output)![1];
    await m.test.post('/webhooks/trigger-test');
    await rx.waitFor(1, 20_000);

    const scrape = () => request(url, { key: ADMIN_TOKEN });
    const text = await eventually(
      async () => {
        const r = await scrape();
        return sample(r.text, 'cadence_webhook_delivery_attempts_total{result="succeeded"}') === 1 && r.text;
      },
      10_000,
      'the attempt counted',
    );
    expect(sample(text, 'cadence_db_pool_max')).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'cadence_webhook_deliveries_pending')).toBe(0);
    expect(text).toMatch(/^process_cpu_seconds_total /m);

    expect((await request(url)).status).toBe(401);
    expect((await request(url, { key: 'wrong' })).status).toBe(401);
    const other = await request(url.replace('/metrics', '/v1/customers'), { key: ADMIN_TOKEN });
    expect(other.status).toBe(404);
    expect(other.body.error.code).toBe('resource_not_found');
  });

  it('serves nothing without WORKER_METRICS_PORT', async () => {
    const { output } = await startWorker({});
    expect(output).not.toContain('metrics at');
  });
});

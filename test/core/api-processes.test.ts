import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { eventually, request } from '../harness';
import { alive, freshRequest, GroupOutput, ProcessGroup, startProcessGroup } from '../harness/cluster';
import { freshDatabase, FreshDatabase } from '../harness/database';

const MAIN = path.join(__dirname, '..', '..', 'dist', 'src', 'main.js'); // built by `npm test`

/** GET on a connection of its own: its status and Request-Id. */
const freshGet = (url: string) => freshRequest(url);

/** GET /metrics with a token, on a connection of its own: its status, text and Request-Id. */
const freshScrape = (url: string, token: string) => freshRequest(url, { token });

/** The value of the sample written exactly as `series` (name and labels) in an exposition; NaN when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : NaN;
}

describe('API_PROCESSES', () => {
  it('is 1 when unset or empty, else a whole number from 1 to 64', () => {
    expect(loadConfig({}).apiProcesses).toBe(1);
    expect(loadConfig({ API_PROCESSES: '' }).apiProcesses).toBe(1);
    expect(loadConfig({ API_PROCESSES: '1' }).apiProcesses).toBe(1);
    expect(loadConfig({ API_PROCESSES: '64' }).apiProcesses).toBe(64);
    for (const bad of ['0', '65', '-2', '2.5', 'two', '1e1', '0x2']) {
      expect(() => loadConfig({ API_PROCESSES: bad })).toThrow(
        `API_PROCESSES must be a whole number from 1 to 64, got "${bad}"`,
      );
    }
  });

  it('fails the start when out of range, saying why', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, API_PROCESSES: '100' };
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err).toContain(
      'Cadence failed to start: Error: API_PROCESSES must be a whole number from 1 to 64, got "100"',
    );
  });
});

// `npm start` with API_PROCESSES=2 on DATABASE_URL: a supervisor (sandbox, background work) and two API processes.
describe('API_PROCESSES=2', () => {
  let db: FreshDatabase;
  let group: ProcessGroup;
  let out: GroupOutput;
  let url: string;
  let supervisor: number;
  let apiPids: number[];
  let child: ProcessGroup['child'];
  let exited: Promise<number | null>;
  const adminToken = crypto.randomBytes(16).toString('hex');

  /** Which API processes answer `n` requests, each on a connection of its own (all must answer 200). */
  async function servingPids(n: number): Promise<Set<number>> {
    const answers: { status: number; requestId: string }[] = [];
    for (let i = 0; i < n; i++) answers.push(await freshGet(`${url}/healthz`));
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    return eventually(
      () => {
        const pids = answers.map((a) => out.servedBy(a.requestId));
        return pids.every(Boolean) && new Set(pids as number[]);
      },
      5_000,
      'the request log lines',
    );
  }

  beforeAll(async () => {
    db = await freshDatabase();
    group = await startProcessGroup({ DATABASE_URL: db.url, ADMIN_TOKEN: adminToken });
    ({ out, url, supervisor, apiPids, child, exited } = group);
  }, 60_000);

  afterAll(async () => {
    if (group) {
      group.apiPids = apiPids; // the replacement of the one the tests kill
      await group.kill();
    }
    await db?.drop();
  });

  it('serves from both API processes on one port, the supervisor apart', async () => {
    expect(supervisor).toBe(child.pid);
    expect(new Set(apiPids).size).toBe(2);
    expect(await servingPids(6)).toEqual(new Set(apiPids));
    // Gateway calls go to the supervisor's sandbox (SANDBOX_URL in the API processes).
    const merchant = await request(`${url}/v1/admin/merchants`, {
      key: adminToken,
      body: { name: 'Cluster', reporting_currency: 'INR' },
    });
    expect(merchant.status).toBe(201);
    const secret = crypto.randomBytes(6).toString('hex');
    const connected = await request(`${url}/v1/providers/connections`, {
      key: merchant.body.api_keys.test,
      body: {
        provider: 'stripe',
        credentials: { secret_key: `sk_test_cluster${secret}`, webhook_secret: `whsec_${secret}` },
      },
    });
    expect(connected.status).toBe(201);
  });

  it('answers GET /metrics for the whole group, whichever API process the scrape lands on', async () => {
    // Each scrape on a connection of its own: the cluster hands them to both API processes in turn.
    const scrapes: { text: string; requestId: string }[] = [];
    for (let i = 0; i < 4; i++) scrapes.push(await freshScrape(`${url}/metrics`, adminToken));
    const pids = await eventually(
      () => {
        const served = scrapes.map((s) => out.servedBy(s.requestId));
        return served.every(Boolean) && new Set(served as number[]);
      },
      5_000,
      'the scrapes served',
    );
    expect(pids).toEqual(new Set(apiPids));
    for (const { text } of scrapes) {
      // The 6 /healthz requests of the first test, served by both processes, summed (and never the URL's own).
      expect(sample(text, 'cadence_http_requests_total{method="GET",route="/healthz",status="200"}')).toBe(6);
      // Each pool counted once: two API processes of max(4, DB_POOL_MAX) = 10, and the supervisor's 4.
      expect(sample(text, 'cadence_db_pool_max')).toBe(24);
      // The queue depths are read once, by the supervisor: not doubled.
      expect(text.match(/^cadence_webhook_deliveries_pending /gm)).toHaveLength(1);
      expect(sample(text, 'cadence_gateway_commands_failed')).toBe(0);
    }
    expect((await freshScrape(`${url}/metrics`, 'wrong')).status).toBe(401);
  });

  it('replaces an API process that dies, and keeps answering meanwhile', async () => {
    const [killed, survivor] = apiPids;
    process.kill(killed, 'SIGKILL');
    await eventually(
      () =>
        out.lines.some((l) => l.msg === 'API process died (signal SIGKILL): replacing it' && l.memberPid === killed),
      5_000,
      'the death logged',
    );
    // The survivor answers every connection until the replacement listens (after a 1 s backoff).
    expect(await servingPids(4)).toEqual(new Set([survivor]));
    const replacement = await eventually(
      () =>
        out.lines.find(
          (l) =>
            l.msg === 'API process listening' && l.memberPid !== killed && !apiPids.includes(l.memberPid as number),
        )?.memberPid as number,
      20_000,
      'the replacement listening',
    );
    apiPids = [survivor, replacement];
    expect(alive(killed)).toBe(false);
    expect(await servingPids(6)).toEqual(new Set(apiPids));
  });

  it('stops the whole group on SIGTERM: exit 0, no API process left', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(apiPids.filter(alive)).toEqual([]);
    expect(
      out.lines
        .filter((l) => l.msg === 'Cadence shutting down')
        .map((l) => l.pid)
        .sort(),
    ).toEqual([supervisor, ...apiPids].sort());
  });
});

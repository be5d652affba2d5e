import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/core/embedded-postgres';
import { API_NODE_FLAGS } from '../../src/core/heap';
import { createBenchDatabase } from './database';
import { envNumber } from './env';
import { Child, freePort, onCleanup, startChild, waitForHttp, waitForOutput } from './processes';

/** What the benches measure: the sandbox, the service (and a bare express) as child processes on one database. */
export interface Stack {
  /** The bench database (the service and the sandbox share it); the bench reads it directly to verify. */
  databaseUrl: string;
  dbLabel: string;
  adminToken: string;
  tmp: string;
  sandbox: Child;
  /** With apiProcesses > 1, its CPU and RSS are read over its whole process group (the supervisor and the API processes). */
  service: Child;
  /** BENCH_API_PROCESSES: the service's API_PROCESSES. */
  apiProcesses: number;
  /** What the service's figures cover, for the printed header. */
  serviceLabel: string;
  bare: Child | null;
  sandboxUrl: string;
  serviceUrl: string;
  bareUrl: string | null;
}

const describeDb = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}${u.pathname}`;
};

/**
 * Starts the gateway sandbox, the service (SANDBOX_URL pointing at it) and, with `bare`, a bare express hello
 * world, each as a child process in its own process group, on a fresh database: `cadence_bench_<random>` on
 * DATABASE_URL's server, or without it an embedded PostgreSQL in a temporary DATA_DIR. Everything is registered
 * for cleanup (onCleanup). `root` is the folder holding dist/.
 */
export async function startStack(opts: {
  root: string;
  bare: boolean;
  serviceNodeArgs?: string[];
  sandboxNodeArgs?: string[];
  /** The service's API_PROCESSES (default BENCH_API_PROCESSES, else 1). */
  apiProcesses?: number;
  /** Extra environment of the service and the sandbox. */
  env?: Record<string, string>;
  note: (line: string) => void;
}): Promise<Stack> {
  const serverUrl = process.env.DATABASE_URL || undefined;
  const serviceMain = path.join(opts.root, 'dist', 'src', 'main.js');
  const sandboxMain = path.join(opts.root, 'dist', 'src', 'sandbox-main.js');
  const bareMain = path.join(opts.root, 'dist', 'bench', 'bare-express.js');
  for (const f of [serviceMain, sandboxMain, ...(opts.bare ? [bareMain] : [])]) {
    if (!fs.existsSync(f)) throw new Error(`${f} missing: build first (npm run bench builds)`);
  }

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-bench-'));
  // As root, the embedded PostgreSQL runs as the `postgres` user, which must reach DATA_DIR inside this folder.
  fs.chmodSync(tmp, 0o755);
  onCleanup('remove temporary directory', () => fs.rmSync(tmp, { recursive: true, force: true }));

  // The database: a fresh one on DATABASE_URL's server, or the service's embedded PostgreSQL in a temp DATA_DIR.
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...opts.env };
  delete env.DATABASE_URL;
  delete env.DATA_DIR;
  delete env.EMBEDDED_PG_PORT;
  let dbLabel: string;
  if (serverUrl) {
    const db = await createBenchDatabase(serverUrl);
    onCleanup(`drop database ${db.name}`, () => db.drop());
    env.DATABASE_URL = db.url;
    dbLabel = `DATABASE_URL server, fresh database ${describeDb(db.url)}`;
  } else {
    // The service and the sandbox share one database: the bench starts the embedded server the service would.
    env.DATA_DIR = path.join(tmp, 'data');
    const db = await startEmbeddedPostgres(env.DATA_DIR);
    onCleanup('stop embedded PostgreSQL', () => db.stop());
    env.DATABASE_URL = db.url;
    dbLabel = `embedded PostgreSQL (DATA_DIR ${env.DATA_DIR})`;
  }

  const apiProcesses = opts.apiProcesses ?? envNumber('BENCH_API_PROCESSES', 1, 1);
  if (!Number.isInteger(apiProcesses))
    throw new Error(`BENCH_API_PROCESSES must be a whole number, got "${process.env.BENCH_API_PROCESSES}"`);
  const serviceLabel = `${
    apiProcesses > 1
      ? `${apiProcesses} API processes under a supervisor (BENCH_API_PROCESSES); service CPU and RSS are summed over its process group`
      : 'one process'
  }, node ${[...API_NODE_FLAGS, ...(opts.serviceNodeArgs ?? [])].join(' ')}`;

  const adminToken = crypto.randomBytes(24).toString('hex');
  const [servicePort, sandboxPort, barePort] = [await freePort(), await freePort(), await freePort()];
  // The gateway sandbox stands in for Stripe, whose work is not ours: it runs in its own process, so the service's
  // figures are its own (its CPU is shown apart; on this machine it still shares the cores).
  const sandbox = startChild(
    'sandbox',
    [...(opts.sandboxNodeArgs ?? []), sandboxMain],
    { ...env, SANDBOX_PORT: String(sandboxPort), HOST: '127.0.0.1' },
    path.join(tmp, 'sandbox.log'),
  );
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  await waitForHttp(`${sandboxUrl}/healthz`, sandbox, 60_000);
  const service = startChild(
    'service',
    [...API_NODE_FLAGS, ...(opts.serviceNodeArgs ?? []), serviceMain], // as npm start runs it
    // As deployed: NODE_ENV=production turns off graphql-js's development checks (measurable per field of an answer).
    {
      ...env,
      NODE_ENV: 'production',
      PORT: String(servicePort),
      HOST: '127.0.0.1',
      ADMIN_TOKEN: adminToken,
      SANDBOX_URL: sandboxUrl,
      API_PROCESSES: String(apiProcesses),
      // One test-clock advance of the renewals bench has the sandbox charge 10,000 renewals in a single call, bounded
      // at 5 x GATEWAY_TIMEOUT_MS (docs/operations.md, "Configuration"): 60 s here gives it 300 s rather than the
      // default's 50 s.
      GATEWAY_TIMEOUT_MS: env.GATEWAY_TIMEOUT_MS ?? '60000',
    },
    path.join(tmp, 'service.log'),
    { group: apiProcesses > 1 },
  );
  const bare = opts.bare
    ? startChild('bare express', [bareMain], { ...process.env, PORT: String(barePort) }, path.join(tmp, 'bare.log'))
    : null;
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  const bareUrl = bare ? `http://127.0.0.1:${barePort}` : null;
  opts.note(
    `starting the service (pid ${service.pid}, ${serviceLabel}, ${dbLabel})${bare ? ` and bare express (pid ${bare.pid})` : ''}`,
  );
  await Promise.all([
    waitForHttp(`${serviceUrl}/readyz`, service, 180_000),
    ...(bare && bareUrl ? [waitForHttp(`${bareUrl}/`, bare, 30_000)] : []),
  ]);
  // /readyz answers once the first API process listens; the banner, once all do.
  if (apiProcesses > 1) await waitForOutput(service, /^Cadence is running at /m, 60_000);
  return {
    databaseUrl: env.DATABASE_URL,
    dbLabel,
    adminToken,
    tmp,
    sandbox,
    service,
    apiProcesses,
    serviceLabel,
    bare,
    sandboxUrl,
    serviceUrl,
    bareUrl,
  };
}

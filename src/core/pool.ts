import type { PoolClient } from 'pg';
import { DomainError } from './errors';
import { logger } from './logger';
import type { ServicePool } from './orm-pool';

/**
 * A dropped database connection must never take the process down. pg emits `'error'` on a connection the server
 * closed (a restart, `pg_terminate_backend`, a network cut), and an `'error'` event nobody listens to kills the
 * process. The service pool's connections are knex's, which listens on each one for its whole life (and drops a
 * broken one when it is next acquired); `withClient` also listens while a connection is checked out, to log the loss
 * and to close the connection instead of reusing it.
 */

/**
 * Runs `fn` on a connection checked out of `pool`, listening for its `'error'` meanwhile, and gives it back. A
 * connection that broke, or whose work failed other than with a DomainError, is closed instead of reused: its
 * session may still hold a transaction or an advisory lock.
 */
/** Anything connections are checked out of: the service pool, or a plain pg pool (src/core/session-locks.ts). */
export type Connections = Pick<ServicePool, 'connect'>;

export async function withClient<T>(pool: Connections, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => {
    broken = err;
    logger.warn({ err }, 'database connection lost while in use');
  };
  client.on('error', onError);
  let failed: Error | undefined;
  try {
    return await fn(client);
  } catch (err) {
    if (!(err instanceof DomainError)) failed = err instanceof Error ? err : new Error(String(err));
    throw err;
  } finally {
    client.removeListener('error', onError);
    client.release(broken ?? failed);
  }
}

/** The setting naming the server a connection goes to. */
export type ServerSetting = 'DATABASE_URL' | 'DATABASE_SESSION_URL' | 'DATABASE_READ_URL';

/** Some of a process's connections: what holds them, how many at most, and to which server (default DATABASE_URL). */
export interface BudgetPart {
  what: string;
  n: number;
  on?: ServerSetting;
}

export interface ConnectionBudget {
  /** DATABASE_URL's total: the pool, and whatever else goes there. */
  total: number;
  /** The total per server, DATABASE_URL's included. */
  byServer: Partial<Record<ServerSetting, number>>;
  text: string;
}

/** The URLs of the configuration (src/config.ts). */
interface ServerUrls {
  databaseUrl: string | undefined;
  databaseSessionUrl: string | undefined;
  databaseReadUrl: string | undefined;
}

/**
 * Where the connections that need a session go (LISTEN, locks, the in-process sandbox): DATABASE_SESSION_URL's server
 * when it is set and another URL than DATABASE_URL, else DATABASE_URL's.
 */
export const sessionServer = (c: ServerUrls): ServerSetting =>
  c.databaseSessionUrl && c.databaseSessionUrl !== c.databaseUrl ? 'DATABASE_SESSION_URL' : 'DATABASE_URL';

/** Where the analytics reports' pool goes: DATABASE_READ_URL's server (DATABASE_URL's when it names the same URL). */
export const replicaServer = (c: ServerUrls): ServerSetting =>
  c.databaseReadUrl && c.databaseReadUrl !== c.databaseUrl ? 'DATABASE_READ_URL' : 'DATABASE_URL';

const SERVERS: ServerSetting[] = ['DATABASE_URL', 'DATABASE_SESSION_URL', 'DATABASE_READ_URL'];

/**
 * The most connections a process opens, per server and by what holds them (printed at start-up, so each server's
 * `max_connections`, or a pooler's client limit, can be sized for the sum over all processes; docs/production.md,
 * "Connections and pool sizing"). DATABASE_URL's part reads as it always has; other servers follow it, when used.
 */
export function connectionBudget(parts: BudgetPart[]): ConnectionBudget {
  const used = parts.filter((p) => p.n > 0);
  const byServer: Partial<Record<ServerSetting, number>> = {};
  const texts: string[] = [];
  for (const server of SERVERS) {
    const mine = used.filter((p) => (p.on ?? 'DATABASE_URL') === server);
    if (!mine.length && server !== 'DATABASE_URL') continue;
    const n = mine.reduce((sum, p) => sum + p.n, 0);
    byServer[server] = n;
    const list = `(${mine.map((p) => `${p.what} ${p.n}`).join(', ')})`;
    texts.push(server === 'DATABASE_URL' ? `at most ${n} connections ${list}` : `${server}: at most ${n} ${list}`);
  }
  return { total: byServer.DATABASE_URL ?? 0, byServer, text: texts.join('; ') };
}

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
export async function withClient<T>(pool: ServicePool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
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

/**
 * The most connections a process opens to PostgreSQL, by what holds them (printed at start-up, so `max_connections`
 * can be sized for the sum over all processes).
 */
export function connectionBudget(parts: Record<string, number>): { total: number; text: string } {
  const used = Object.entries(parts).filter(([, n]) => n > 0);
  const total = used.reduce((sum, [, n]) => sum + n, 0);
  return { total, text: `at most ${total} connections (${used.map(([what, n]) => `${what} ${n}`).join(', ')})` };
}

import { Pool } from 'pg';
import { logger } from './logger';
import { inRecovery } from './sql';

/**
 * The read replica's pool (DATABASE_READ_URL; docs/production.md, "A read replica for analytics"): a plain pg pool of
 * its own beside the process's one pool (src/core/orm-pool.ts), for the analytics reports and nothing else. No ORM and
 * no migrations on it: the replica replays the primary's schema. Its sessions are read-only, so a write sent there by
 * mistake fails even when the URL names a primary.
 */

/** Connections of the replica's pool per API process: reports are few and each is bounded by its operation cost. */
export const READ_POOL_MAX = 4;
/** A replica that does not accept a connection by then fails the report (503 `service_unavailable`), not the process. */
const CONNECT_TIMEOUT_MS = 5_000;

export interface ReadPool {
  /** Where the reports' statements run (src/core/sql.ts `tenantQueryAs`). */
  readonly pool: Pool;
  readonly max: number;
  close(): Promise<void>;
}

/**
 * Opens the pool on `url` and checks the server once, without failing the start: a replica that is down, or not a
 * standby, is logged; reports answer 503 `service_unavailable` while it cannot be reached, as for the primary.
 */
export async function openReadPool(url: string, max = READ_POOL_MAX): Promise<ReadPool> {
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    application_name: 'cadence-reports',
    options: '-c default_transaction_read_only=on',
  });
  // An idle connection lost (the replica restarted): the pool drops it and opens another when next asked.
  pool.on('error', (err) => logger.warn({ err }, 'read replica connection lost'));
  try {
    const standby = await inRecovery(pool);
    if (standby) logger.info({ max }, 'DATABASE_READ_URL: analytics reports read the streaming replica');
    else logger.warn('DATABASE_READ_URL is not a standby (pg_is_in_recovery() is false): reports read it anyway');
  } catch (err) {
    logger.warn({ err }, 'DATABASE_READ_URL cannot be reached now: analytics reports answer 503 until it can');
  }
  let closed: Promise<void> | null = null;
  return { pool, max, close: () => (closed ??= pool.end()) };
}

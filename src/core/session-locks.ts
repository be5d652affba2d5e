import { Pool } from 'pg';
import { logger } from './logger';

/**
 * Connections for session advisory locks held across several transactions (a test-clock advance), on
 * DATABASE_SESSION_URL (docs/production.md, "PgBouncer"): a transaction-mode pooler would take and release such a lock
 * on different server connections. Without DATABASE_SESSION_URL they are the service pool's connections, as before.
 */

/** Locks held at once per process; a further advance waits for one (its work runs on the service pool meanwhile). */
export const SESSION_LOCKS_MAX = 2;

/**
 * A small pool on `url`, opened only when a lock is first taken: idle connections close after 10 s and never keep
 * the process alive, so it needs no closing at shutdown.
 */
export function sessionLockPool(url: string, max = SESSION_LOCKS_MAX): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    application_name: 'cadence-session-locks',
  });
  // An idle connection lost: the pool drops it (a held one is withClient's to report).
  pool.on('error', (err) => logger.warn({ err }, 'session lock connection lost'));
  return pool;
}

import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { EntityClass } from '@mikro-orm/core';
import { serviceOrmConfig } from './orm-config';
import { logger } from './logger';
import { advisoryLock, advisoryUnlock, useNamedStatements } from './sql';
export { ensureDatabase, startEmbeddedPostgres, EmbeddedDatabase } from './embedded-postgres';

const MIGRATION_LOCK = 727_001; // advisory lock key shared by every Cadence process

/** DATABASE_POOL_MODE: what DATABASE_URL's connections are (docs/production.md, "PgBouncer"). */
export type PoolMode = 'session' | 'transaction';

/** What DATABASE_URL's pool is (DATABASE_POOL_MODE) and where session-bound connections go (DATABASE_SESSION_URL). */
export interface SessionSettings {
  /** Unset: the pool's URL. */
  sessionUrl?: string;
  poolMode?: PoolMode;
}

/**
 * Opens the ORM on `entities` (the caller passes src/entities.ts's list) and applies pending migrations. Several
 * processes may start at once: the advisory lock lets one migrate while the others wait, then find nothing left to do.
 * The lock is a session's, so it is taken on `session.sessionUrl` when given (docs/production.md, "PgBouncer").
 */
export async function openDatabase(
  url: string,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  entities: EntityClass<any>[],
  poolMax = 10,
  session: SessionSettings = {},
): Promise<MikroORM> {
  useNamedStatements(session.poolMode !== 'transaction');
  const orm = await MikroORM.init(serviceOrmConfig(url, entities, poolMax));
  const lock = new Client({ connectionString: session.sessionUrl ?? url });
  lock.on('error', (err) => logger.warn({ err }, 'migration lock connection lost')); // its query fails too
  await lock.connect();
  try {
    await advisoryLock(lock, MIGRATION_LOCK);
    await orm.getMigrator().up();
  } finally {
    await advisoryUnlock(lock, MIGRATION_LOCK).catch(() => undefined);
    await lock.end();
  }
  return orm;
}

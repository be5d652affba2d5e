import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { ormConfig } from '../../mikro-orm.config';
import { logger } from './logger';
export { ensureDatabase, startEmbeddedPostgres, EmbeddedDatabase } from './embedded-postgres';

const MIGRATION_LOCK = 727_001; // advisory lock key shared by every Cadence process

/**
 * Opens the ORM and applies pending migrations. Several processes may start at once: the advisory lock lets one
 * migrate while the others wait, then find nothing left to do.
 */
export async function openDatabase(url: string, poolMax = 10): Promise<MikroORM> {
  const orm = await MikroORM.init(ormConfig(url, poolMax));
  const lock = new Client({ connectionString: url });
  lock.on('error', (err) => logger.warn({ err }, 'migration lock connection lost')); // its query fails too
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await orm.getMigrator().up();
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
  return orm;
}

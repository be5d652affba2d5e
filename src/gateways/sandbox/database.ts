import { Migrator } from '@mikro-orm/migrations';
import { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { logger } from '../../core/logger';
import { sandboxMigrations } from './migrations';
import { sandboxEntities } from './sandbox.entities';

/** Advisory lock key of sandbox migrations (the service's is 727_001): sandboxes starting together migrate once. */
const SANDBOX_MIGRATION_LOCK = 727_002;

/**
 * The sandbox's own ORM: its four entities only, and its own migrations in `sandbox_migrations`, applied here at
 * start. It shares the service's database in development and tests but nothing else: no service entity, no tenant
 * filter, no service migration, so it could live in a package of its own.
 */
export async function openSandboxDatabase(url: string, poolMax = 5): Promise<MikroORM> {
  const orm = await MikroORM.init({
    clientUrl: url,
    entities: sandboxEntities,
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    extensions: [Migrator],
    forceUtcTimezone: true,
    pool: { min: 0, max: poolMax },
    driverOptions: {
      log: {
        warn: (message: unknown) => logger.warn({ component: 'sandbox-knex' }, String(message)),
        error: (message: unknown) => logger.error({ component: 'sandbox-knex' }, String(message)),
        deprecate: (message: unknown) => logger.warn({ component: 'sandbox-knex' }, String(message)),
        debug: (message: unknown) => logger.debug({ component: 'sandbox-knex' }, String(message)),
      },
    },
    migrations: {
      migrationsList: sandboxMigrations,
      tableName: 'sandbox_migrations',
      path: './src/gateways/sandbox/migrations',
      emit: 'ts',
      snapshot: false,
      transactional: true,
      allOrNothing: true,
    },
    logger: (message: string) => logger.info({ component: 'sandbox-orm' }, message.replace(/\x1b\[[0-9;]*m/g, '')),
  });
  const lock = new Client({ connectionString: url });
  lock.on('error', (err) => logger.warn({ err }, 'sandbox migration lock connection lost'));
  try {
    await lock.connect();
    await lock.query('select pg_advisory_lock($1)', [SANDBOX_MIGRATION_LOCK]);
    await orm.getMigrator().up();
  } catch (err) {
    await orm.close(true);
    throw err;
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [SANDBOX_MIGRATION_LOCK]).catch(() => undefined);
    await lock.end().catch(() => undefined);
  }
  return orm;
}

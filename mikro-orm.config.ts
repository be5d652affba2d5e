import 'reflect-metadata';
import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { TENANT_FILTER, TenantParams, TenantStamp } from './src/core/entity';
import { entities, tenantEntityNames } from './src/entities';
import { migrationsList } from './src/migrations';
import { logger } from './src/core/logger';

/**
 * MikroORM configuration. `clientUrl` comes from the caller (the service resolves DATABASE_URL or the embedded
 * server); the CLI reads DATABASE_URL. Migrations are listed explicitly so the compiled service and the tests
 * (run from TypeScript) find the same ones.
 */
export function ormConfig(clientUrl: string, poolMax = 10) {
  return defineConfig({
    clientUrl,
    entities,
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    extensions: [Migrator],
    subscribers: [new TenantStamp()],
    forceUtcTimezone: true,
    // Tenant filters must not make every query join the referenced tables.
    autoJoinRefsForFilters: false,
    pool: { min: 0, max: poolMax },
    // knex prints pool warnings (a connection the server closed: "Connection Error: ...") with console.log; they go
    // to the structured log instead. knex drops such a connection itself (its own 'error' listener, then validation).
    driverOptions: {
      log: {
        warn: (message: unknown) => logger.warn({ component: 'knex' }, String(message)),
        error: (message: unknown) => logger.error({ component: 'knex' }, String(message)),
        deprecate: (message: unknown) => logger.warn({ component: 'knex' }, String(message)),
        debug: (message: unknown) => logger.debug({ component: 'knex' }, String(message)),
      },
    },
    // One request never sees another merchant's or the other mode's records: every query on a tenant entity
    // is scoped here, and a query made without a tenant fails instead of reading everything.
    filters: {
      [TENANT_FILTER]: {
        name: TENANT_FILTER,
        entity: tenantEntityNames,
        default: true,
        cond: (args: TenantParams) => ({ merchantId: args.merchantId, mode: args.mode }),
      },
    },
    migrations: {
      migrationsList,
      tableName: 'mikro_orm_migrations',
      path: './src/migrations',
      emit: 'ts',
      snapshot: false,
      transactional: true,
      allOrNothing: true,
    },
    debug: process.env.DEBUG_SQL === '1',
    logger: (message: string) => logger.info({ component: 'orm' }, message.replace(/\x1b\[[0-9;]*m/g, '')),
  });
}

export default ormConfig(process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/cadence');

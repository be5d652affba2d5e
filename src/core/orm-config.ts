import 'reflect-metadata';
import { defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { EntityClass } from '@mikro-orm/core';
import { TENANT_FILTER, TenantEntity, TenantParams, TenantStamp } from './entity';
import { migrationsList } from '../migrations';
import { logger } from './logger';
import { sendStatementsWithCommit } from './sql';

/**
 * MikroORM configuration of the service's database. `clientUrl` comes from the caller (the service resolves
 * DATABASE_URL or the embedded server); `entities` from the composition root (src/entities.ts, through
 * mikro-orm.config.ts or openDatabase's caller), so core reaches no module. Migrations are listed explicitly so the
 * compiled service and the tests (run from TypeScript) find the same ones.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function serviceOrmConfig(clientUrl: string, entities: EntityClass<any>[], poolMax = 10) {
  /** The entities scoped by the tenant filter: all that extend TenantEntity. */
  const tenantEntityNames = entities.filter((e) => e.prototype instanceof TenantEntity).map((e) => e.name);
  return defineConfig({
    clientUrl,
    // libpq's `?host=/var/run/postgresql` (a Unix socket directory), which node-postgres honours for every other
    // connection (LISTEN, the migration lock): MikroORM reads only the URL's host name, so its pool is told here.
    ...socketHost(clientUrl),
    entities,
    discovery: { disableDynamicFileAccess: true, requireEntitiesArray: true },
    extensions: [Migrator],
    // sendStatementsWithCommit: statements sent with a transaction's COMMIT (src/core/sql.ts sendWithCommit).
    subscribers: [new TenantStamp(), sendStatementsWithCommit],
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

/** `{ host }` when the URL names a Unix socket directory in its `host` parameter (libpq's form), else nothing. */
export function socketHost(clientUrl: string): { host?: string } {
  let host: string | null;
  try {
    host = new URL(clientUrl).searchParams.get('host');
  } catch {
    return {}; // MikroORM reports the malformed URL itself
  }
  return host?.startsWith('/') ? { host } : {};
}

import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { Db, tenantQuery, tenantQueryAs } from '../../core/sql';

/**
 * Statements on the catalog's own tables beyond the ORM's: the catalog version (catalog_versions), which retires
 * cached catalog reads in every process.
 */

/** Call inside the transaction of any write to products, plans, prices or product families. */
export async function bumpCatalogVersion(em: EntityManager): Promise<void> {
  await tenantQuery(
    em,
    `insert into catalog_versions (merchant_id, mode, version) values ({tenant_values}, 1)
     on conflict (merchant_id, mode) do update set version = catalog_versions.version + 1`,
    [],
  );
}

/** The tenant's catalog version now ('0' before its first write); runs on every cached read, so a prepared statement. */
export async function catalogVersion(db: Db, tenant: TenantParams): Promise<string> {
  const [row] = await tenantQueryAs<{ version: string }>(db, tenant, 'select version from catalog_versions where {tenant}', []);
  return row?.version ?? '0';
}

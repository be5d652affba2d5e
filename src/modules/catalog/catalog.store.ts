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

/**
 * Serialises lazy registration of one price at one gateway (subscriptions' create path) until the transaction ends,
 * and answers the gateway id already recorded, if any: the caller registers only when this is null.
 */
export async function lockPriceRegistration(em: EntityManager, priceId: string, provider: string): Promise<string | null> {
  await tenantQuery(em, `select pg_advisory_xact_lock(727003, hashtext(?)) where exists (select 1 from prices where {tenant} and id = ?)`, [
    `${priceId}:${provider}`,
    priceId,
  ]);
  const [row] = await tenantQuery<{ id: string | null }>(em, 'select provider_price_ids ->> ? as id from prices where {tenant} and id = ?', [
    provider,
    priceId,
  ]);
  return row?.id ?? null;
}

/** Records the gateway's id of a price (once: an id already there is kept) and bumps the catalog version. */
export async function recordProviderPriceId(em: EntityManager, priceId: string, provider: string, providerPriceId: string): Promise<void> {
  await tenantQuery(
    em,
    `update prices set provider_price_ids = provider_price_ids || jsonb_build_object(?::text, ?::text)
     where {tenant} and id = ? and provider_price_ids ->> ? is null`,
    [provider, providerPriceId, priceId, provider],
  );
  await bumpCatalogVersion(em);
}

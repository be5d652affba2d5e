import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, Db, tenantQuery, tenantQueryAs } from '../../core/sql';
import { testClockSql } from '../test-clock/test-clock.store';
import { Plan, Price, Product } from './catalog.entities';

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

/** A plan with its product and the prices a new subscription chooses from, and the tenant's test-clock offset. */
export interface SubscriptionTerms {
  plan: Plan;
  product: Product | null;
  /** The price `price_id` names (whichever plan it belongs to), else the plan's default prices, oldest first. */
  prices: Price[];
  /** The merchant's test-clock offset in ms (0 in live mode or without a test clock). */
  clockOffsetMs: number;
}

/**
 * What a new subscription is made of, in one prepared statement (the create path's hot read): the plan, its product,
 * and the price `priceId` names (null: a malformed id, which matches nothing) or, without `priceId`, the plan's
 * default prices; plus the test-clock offset, so the create needs no separate clock read. Null: no such plan.
 */
export async function subscriptionTerms(em: EntityManager, planId: string, priceId?: string | null): Promise<SubscriptionTerms | null> {
  const byId = priceId !== undefined;
  const sql =
    `select ${aliasedColumns(em, Plan, 'a')}, ${aliasedColumns(em, Product, 'b')}, ${aliasedColumns(em, Price, 'c')},
       ${testClockSql.offsetMs('a.merchant_id', 'a.mode')} as clock_offset_ms
     from plans a
     left join products b on {tenant:b} and b.id = a.product_id
     left join prices c on {tenant:c} and ` +
    (byId ? 'c.id = ?' : 'c.plan_id = a.id and c.is_default') +
    ` where {tenant:a} and a.id = ? order by c.id`;
  const rows = await tenantQuery(em, sql, byId ? [priceId, planId] : [planId]);
  if (!rows.length) return null;
  const plan = em.map(Plan, aliasedPart(rows[0], 'a') as never);
  const product = aliasedPart(rows[0], 'b');
  const prices = rows.map((r) => aliasedPart(r, 'c')).filter((p) => p !== null);
  return {
    plan,
    product: product ? em.map(Product, product as never) : null,
    prices: prices.map((p) => em.map(Price, p as never)),
    clockOffsetMs: Number(rows[0].clock_offset_ms ?? 0),
  };
}

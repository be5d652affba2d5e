import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, Db, tenantQuery, tenantQueryAs } from '../../core/sql';
import { testClockSql } from '../test-clock';
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
  const [row] = await tenantQueryAs<{ version: string }>(
    db,
    tenant,
    'select version from catalog_versions where {tenant}',
    [],
  );
  return row?.version ?? '0';
}

/**
 * Serialises lazy registration of one price at one gateway for one gateway amount (a subscription needs the price's
 * amount plus the GST of its tax treatment) until the transaction ends, and answers the gateway id already recorded for
 * that amount, if any: the caller registers only when this is null.
 */
export async function lockPriceRegistration(
  em: EntityManager,
  priceId: string,
  provider: string,
  gatewayAmount: number,
): Promise<string | null> {
  await tenantQuery(
    em,
    `select pg_advisory_xact_lock(727003, hashtext(?)) where exists (select 1 from prices where {tenant} and id = ?)`,
    [`${priceId}:${provider}:${gatewayAmount}`, priceId],
  );
  return gatewayPriceId(em, priceId, provider, gatewayAmount);
}

/** The gateway's id of a price registered for `gatewayAmount` (null: not registered for that amount yet). */
export async function gatewayPriceId(
  em: EntityManager,
  priceId: string,
  provider: string,
  gatewayAmount: number,
): Promise<string | null> {
  const [row] = await tenantQuery<{ id: string }>(
    em,
    'select provider_price_id as id from gateway_prices where {tenant} and price_id = ? and provider = ? and gateway_amount = ?',
    [priceId, provider, gatewayAmount],
  );
  return row?.id ?? null;
}

/**
 * Records a registration (under lockPriceRegistration's lock). The first one for a provider, whatever its tax, is
 * also the price's `provider_price_ids[provider]` (kept once set), and bumps the catalog version that cached reads show;
 * a coupon's discounted amount (`discounted`) never is: that entry stands for the price as it is.
 */
export async function recordGatewayPrice(
  em: EntityManager,
  r: { priceId: string; provider: string; gatewayAmount: number; providerPriceId: string; discounted?: boolean },
): Promise<void> {
  await tenantQuery(
    em,
    `insert into gateway_prices (price_id, provider, gateway_amount, merchant_id, mode, provider_price_id, created_at)
     values (?, ?, ?, {tenant_values}, ?, now()) on conflict do nothing`,
    [r.priceId, r.provider, r.gatewayAmount, r.providerPriceId],
  );
  if (r.discounted) return;
  const set = await tenantQuery(
    em,
    `update prices set provider_price_ids = provider_price_ids || jsonb_build_object(?::text, ?::text)
     where {tenant} and id = ? and provider_price_ids ->> ? is null returning id`,
    [r.provider, r.providerPriceId, r.priceId, r.provider],
  );
  if (set.length) await bumpCatalogVersion(em);
}

/** A plan with its product and the prices a new subscription chooses from, and the tenant's test-clock offset. */
export interface SubscriptionTerms {
  plan: Plan;
  product: Product | null;
  /** The price `price_id` names (whichever plan it belongs to), else the plan's default prices, oldest first. */
  prices: Price[];
  /** The merchant's test-clock offset in ms (0 in live mode or without a test clock). */
  clockOffsetMs: number;
  /** Per price id, its gateway registrations: `"<provider>:<gateway amount>"` -> the gateway's id. */
  gatewayPriceIds: Map<string, Record<string, string>>;
}

/**
 * What a new subscription is made of, in one prepared statement (the create path's hot read): the plan, its product,
 * and the price `priceId` names (null: a malformed id, which matches nothing) or, without `priceId`, the plan's
 * default prices with their gateway registrations; plus the test-clock offset, so the create needs no separate clock
 * read. Null: no such plan.
 */
export async function subscriptionTerms(
  em: EntityManager,
  planId: string,
  priceId?: string | null,
): Promise<SubscriptionTerms | null> {
  const byId = priceId !== undefined;
  const sql =
    `select ${aliasedColumns(em, Plan, 'a')}, ${aliasedColumns(em, Product, 'b')}, ${aliasedColumns(em, Price, 'c')},
       ${testClockSql.offsetMs('a.merchant_id', 'a.mode')} as clock_offset_ms,
       (select jsonb_object_agg(g.provider || ':' || g.gateway_amount, g.provider_price_id) from gateway_prices g
         where {tenant:g} and g.price_id = c.id) as gateway_price_ids
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
    gatewayPriceIds: new Map(
      rows
        .filter((r) => r.gateway_price_ids)
        .map((r) => [String(aliasedPart(r, 'c')!.id), r.gateway_price_ids as Record<string, string>]),
    ),
  };
}

/** Which of `ids` are products of the EntityManager's tenant (entitlement links check theirs). */
export async function existingProducts(em: EntityManager, ids: readonly string[]): Promise<Set<string>> {
  const rows = await tenantQuery<{ id: string }>(em, 'select id from products where {tenant} and id = any(?::uuid[])', [
    `{${ids.join(',')}}`,
  ]);
  return new Set(rows.map((r) => r.id));
}

/** Which of `planIds` are the tenant's plans (lower-case ids). */
export async function existingPlans(em: EntityManager, planIds: readonly string[]): Promise<Set<string>> {
  const rows = await tenantQuery<{ id: string }>(em, 'select id from plans where {tenant} and id = any(?::uuid[])', [
    `{${planIds.join(',')}}`,
  ]);
  return new Set(rows.map((r) => r.id));
}

/** SQL pieces for statements of other modules that price their rows by the catalog in the same statement. */
export const usageRateSql = {
  /**
   * `left join usage_rates <alias> ...`: a plan's rate for the event type `eventTypeSql` in a currency (placeholders:
   * the plan's id, then the currency); `<alias>.unit_amount_decimal` (numeric) is the price of one unit, null when the
   * plan does not price the event type. One probe of the rates' unique (plan, event type, currency) key.
   */
  leftJoin: (alias: string, eventTypeSql: string): string =>
    `left join usage_rates ${alias} on {tenant:${alias}} and ${alias}.plan_id = ? and ${alias}.currency = ?
       and ${alias}.event_type = ${eventTypeSql}`,
};

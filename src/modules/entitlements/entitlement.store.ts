import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { TenantParams } from '../../core/entity';
import { Db, notify, tenantQuery, tenantQueryAs } from '../../core/sql';
import { customerSql } from '../customers';
import { subscriptionSql } from '../subscriptions';

/**
 * Every statement on entitlements, entitlement_products and entitlement_versions beyond the ORM's, and the evaluation.
 *
 * The evaluation is the hottest read of a merchant's app, so it is ONE statement that joins the customer's
 * subscriptions to the links and entitlements, and computes in the same snapshot the stamp the cache checks
 * (entitlement.cache.ts). Composing store calls would take three or more statements and leave no single snapshot to
 * stamp. The subscriptions and the customer come from their modules' SQL pieces (subscription.store.ts
 * subscriptionSql, customer.store.ts customerSql), composed into it.
 */

/** The customer `c`'s subscriptions that give the service, as the evaluation's `s`. */
const GRANTING = subscriptionSql.granting('s', 'c.id');

/** `{a,b,c}`: a uuid[] literal (ids checked as UUIDs before), usable inside a transaction as on the pool. */
export const uuidArray = (ids: readonly string[]) => `{${ids.join(',')}}`;

/** The NOTIFY channel of link changes: every process drops the tenant's cached evaluations (entitlement.cache.ts). */
export const ENTITLEMENTS_CHANNEL = 'cadence_entitlements';

/** How many products the entitlement is linked to (inside the link transaction, after locking the entitlement). */
export async function linkCount(em: EntityManager, entitlementId: string): Promise<number> {
  const [row] = await tenantQuery<{ n: string }>(
    em,
    'select count(*) as n from entitlement_products where {tenant} and entitlement_id = ?',
    [entitlementId],
  );
  return Number(row?.n ?? 0);
}

/** Which of `productIds` the entitlement is already linked to. */
export async function linkedAmong(
  em: EntityManager,
  entitlementId: string,
  productIds: readonly string[],
): Promise<Set<string>> {
  const rows = await tenantQuery<{ product_id: string }>(
    em,
    'select product_id from entitlement_products where {tenant} and entitlement_id = ? and product_id = any(?::uuid[])',
    [entitlementId, uuidArray(productIds)],
  );
  return new Set(rows.map((r) => r.product_id));
}

/**
 * Links products (in the given order) to an entitlement; links already there are kept as they are. When any link is
 * new, the tenant's link version moves and a NOTIFY goes out, both with the caller's transaction: answers how many
 * links were made.
 */
export async function insertLinks(
  em: EntityManager,
  entitlementId: string,
  productIds: readonly string[],
): Promise<number> {
  if (!productIds.length) return 0;
  const rows = await tenantQuery<{ product_id: string }>(
    em,
    `insert into entitlement_products (entitlement_id, product_id, merchant_id, mode, link_id, created_at)
     select ?::uuid, u.product_id, {tenant_values}, u.link_id, now()
     from unnest(?::uuid[], ?::uuid[]) as u(product_id, link_id)
     on conflict (entitlement_id, product_id) do nothing
     returning product_id`,
    [entitlementId, uuidArray(productIds), uuidArray(productIds.map(() => uuidv7()))],
  );
  if (rows.length) await linksChanged(em);
  return rows.length;
}

/** Moves the tenant's link version and tells every process, in the caller's transaction (so only if it commits). */
async function linksChanged(em: EntityManager): Promise<void> {
  const [row] = await tenantQuery<{ merchant_id: string; mode: string }>(
    em,
    `insert into entitlement_versions (merchant_id, mode, version) values ({tenant_values}, 1)
     on conflict (merchant_id, mode) do update set version = entitlement_versions.version + 1
     returning merchant_id, mode`,
    [],
  );
  await notify(em, ENTITLEMENTS_CHANNEL, JSON.stringify({ merchantId: row.merchant_id, mode: row.mode }));
}

/** The linked product ids of each entitlement, in link order (one statement for a whole page of entitlements). */
export async function productIdsOf(
  em: EntityManager,
  entitlementIds: readonly string[],
): Promise<Map<string, string[]>> {
  const rows = await tenantQuery<{ entitlement_id: string; product_id: string }>(
    em,
    'select entitlement_id, product_id from entitlement_products where {tenant} and entitlement_id = any(?::uuid[]) order by link_id',
    [uuidArray(entitlementIds)],
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.entitlement_id);
    if (list) list.push(r.product_id);
    else out.set(r.entitlement_id, [r.product_id]);
  }
  return out;
}

/** One entry of an evaluation, as the statement answers it (JSON). */
export interface EvaluatedEntitlement {
  entitlement_id: string;
  lookup_key: string;
  name: string;
  subscription_ids: string[];
  /** Milliseconds since the epoch; null when no granting subscription has a period end. */
  expires_at_ms: number | null;
}

export interface Evaluation {
  customer_id: string;
  /**
   * What the answer was computed from: the tenant's link version and a digest of the row versions (`xmin`) of every
   * subscription of the customer, whatever its status. Any committed insert, update or delete of one of them gives a
   * new row version, so a new stamp.
   */
  stamp: string;
  /** The entitlements as JSON text (an array sorted by lookup_key); null when `stamp` equals the stamp the caller holds. */
  entitlements: string | null;
}

/** `{"a",NULL,"b"}`: a text[] literal of stamps (digits, ':' and hex only) and nulls. */
const stampArray = (stamps: readonly (string | null)[]) =>
  `{${stamps.map((s) => (s === null ? 'NULL' : `"${s}"`)).join(',')}}`;

/**
 * The evaluation (docs/growth.md) of several customers of one tenant in ONE statement: each customer's `active` and
 * `trialing` subscriptions joined to the entitlements linked to their products. Indexes: customers by (merchant_id,
 * mode, id); subscriptions by (merchant_id, mode, customer_id, status) (the subscriptions module's);
 * entitlement_products by (merchant_id, mode, product_id); entitlements by id. A subscription's `product_id` is its
 * plan's product (plan changes keep it so), so plans need no join.
 *
 * `held[i]` is the stamp of an answer the caller already has for `customerIds[i]` (or null): when nothing changed
 * since, that row answers the stamp alone and the join is skipped. Customers not of the tenant (or unknown) have no
 * row. Runs on the service pool, outside any transaction: its snapshot is taken when it runs.
 */
export async function evaluate(
  db: Db,
  tenant: TenantParams,
  customerIds: readonly string[],
  held: readonly (string | null)[],
): Promise<Evaluation[]> {
  return tenantQueryAs<Evaluation>(
    db,
    tenant,
    `select q.customer_id::text as customer_id, st.stamp,
       case when st.stamp = q.held then null else (
         select coalesce(json_agg(json_build_object(
             'entitlement_id', g.entitlement_id, 'lookup_key', g.lookup_key, 'name', g.name,
             'subscription_ids', g.subscription_ids, 'expires_at_ms', g.expires_at_ms) order by g.lookup_key), '[]'::json)::text
         from (
           select en.id as entitlement_id, en.lookup_key, en.name,
             array_agg(s.id order by s.id) as subscription_ids,
             (extract(epoch from max(case when s.status = 'trialing' then coalesce(s.trial_end, s.current_period_end)
               else s.current_period_end end)) * 1000)::bigint as expires_at_ms
           from ${GRANTING.from}
           join entitlement_products ep on {tenant:ep} and ep.product_id = s.product_id
           join entitlements en on {tenant:en} and en.id = ep.entitlement_id
           where ${GRANTING.where}
           group by en.id, en.lookup_key, en.name
         ) g
       ) end as entitlements
     from unnest(?::uuid[], ?::text[]) as q(customer_id, held)
     ${customerSql.join('c', 'q.customer_id')}
     cross join lateral (
       select coalesce((select v.version from entitlement_versions v where {tenant:v}), 0)::text || ':' ||
         coalesce(${subscriptionSql.rowVersions('c.id')}, '') as stamp
       offset 0 -- computed once per row, not once per use
     ) st`,
    [uuidArray(customerIds), stampArray(held)],
  );
}

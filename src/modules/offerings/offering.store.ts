import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, systemQuery, tenantQuery } from '../../core/sql';
import { Offering, OfferingPackage, Package, Paywall } from './offering.entities';

/**
 * Every statement on offerings, packages, paywalls and their link tables (offering_packages, package_products)
 * beyond the ORM's. Other modules read them through these functions or the offerings service, never the tables.
 *
 * Id lists travel as PostgreSQL array literals (`{a,b}` cast to uuid[]): a statement inside a transaction cannot take
 * an array parameter (src/core/sql.ts), and the ids are checked UUIDs, so the literal needs no quoting.
 */

const uuidArray = (ids: readonly string[]) => `{${ids.join(',')}}`;

/**
 * Serialises the switches of the current offering of one merchant and mode until the transaction ends, so two
 * concurrent switches run one after the other and each sees the other's result (the partial unique index
 * `offerings_one_current` would otherwise refuse the slower one).
 */
export async function lockCurrentOffering(em: EntityManager, tenant: TenantParams): Promise<void> {
  await systemQuery(em, 'select pg_advisory_xact_lock(727011, hashtext(?))', [
    `offerings:${tenant.merchantId}:${tenant.mode}`,
  ]);
}

/** Clears the current flag of every offering of the tenant but `keepId` (null: all). Run under lockCurrentOffering. */
export async function clearCurrentOffering(em: EntityManager, keepId: string | null): Promise<void> {
  await tenantQuery(
    em,
    'update offerings set is_current = false, updated_at = now() where {tenant} and is_current and id <> ?',
    [keepId ?? '00000000-0000-0000-0000-000000000000'],
  );
}

/** Makes one offering current, after clearCurrentOffering in the same transaction (the index allows one at a time). */
export async function markOfferingCurrent(em: EntityManager, id: string): Promise<void> {
  await tenantQuery(
    em,
    'update offerings set is_current = true, updated_at = now() where {tenant} and id = ? and not is_current',
    [id],
  );
}

/** The ids among `ids` that are offerings of the tenant: for other modules (an experiment's variants name offerings). */
export async function existingOfferingIds(em: EntityManager, ids: readonly string[]): Promise<Set<string>> {
  const rows = await tenantQuery<{ id: string }>(
    em,
    'select id from offerings where {tenant} and id = any(?::uuid[])',
    [uuidArray(ids)],
  );
  return new Set(rows.map((r) => r.id));
}

/** An offering's packages in order: `[package id, position]`, position ascending (dense, 0 first). */
export async function offeringLinks(
  em: EntityManager,
  offeringId: string,
): Promise<{ packageId: string; position: number }[]> {
  const rows = await tenantQuery<{ package_id: string; position: number }>(
    em,
    'select package_id, position from offering_packages where {tenant} and offering_id = ? order by position',
    [offeringId],
  );
  return rows.map((r) => ({ packageId: r.package_id, position: Number(r.position) }));
}

/**
 * Adds `delta` (+1 or -1) to the positions in [from, to] of an offering's packages: the room an insert or a move
 * needs. The (offering, position) constraint is deferred to commit, so the rows may collide meanwhile.
 */
export async function shiftPositions(
  em: EntityManager,
  offeringId: string,
  from: number,
  to: number,
  delta: 1 | -1,
): Promise<void> {
  if (from > to) return;
  await tenantQuery(
    em,
    'update offering_packages set position = position + ? where {tenant} and offering_id = ? and position between ? and ?',
    [delta, offeringId, from, to],
  );
}

export async function insertOfferingLink(
  em: EntityManager,
  offeringId: string,
  packageId: string,
  position: number,
): Promise<void> {
  await tenantQuery(
    em,
    `insert into offering_packages (id, created_at, merchant_id, mode, offering_id, package_id, position)
     values (?, now(), {tenant_values}, ?, ?, ?)`,
    [uuidv7(), offeringId, packageId, position],
  );
}

export async function moveOfferingLink(
  em: EntityManager,
  offeringId: string,
  packageId: string,
  position: number,
): Promise<void> {
  await tenantQuery(
    em,
    'update offering_packages set position = ? where {tenant} and offering_id = ? and package_id = ?',
    [position, offeringId, packageId],
  );
}

/** How many products a package holds. */
export async function packageProductCount(em: EntityManager, packageId: string): Promise<number> {
  const [row] = await tenantQuery<{ n: string }>(
    em,
    'select count(*) as n from package_products where {tenant} and package_id = ?',
    [packageId],
  );
  return Number(row?.n ?? 0);
}

/** Links products to a package; a product already linked is left as it is (the link is idempotent). Answers how many were new. */
export async function linkProducts(
  em: EntityManager,
  packageId: string,
  productIds: readonly string[],
): Promise<number> {
  const rows = await tenantQuery(
    em,
    `insert into package_products (id, created_at, merchant_id, mode, package_id, product_id)
     select x.id, now(), {tenant_values}, ?, x.product_id from unnest(?::uuid[], ?::uuid[]) as x(id, product_id)
     on conflict (package_id, product_id) do nothing
     returning id`,
    [packageId, uuidArray(productIds.map(() => uuidv7())), uuidArray(productIds)],
  );
  return rows.length;
}

/** The packages of each offering, in position order, as one statement for a page of offerings. */
export async function packagesOfOfferings(
  em: EntityManager,
  offeringIds: readonly string[],
): Promise<Map<string, OfferingPackage[]>> {
  const rows = await tenantQuery(
    em,
    `select l.offering_id, l.position, ${aliasedColumns(em, Package, 'p')}
     from offering_packages l join packages p on {tenant:p} and p.id = l.package_id
     where {tenant:l} and l.offering_id = any(?::uuid[]) order by l.offering_id, l.position`,
    [uuidArray(offeringIds)],
  );
  const out = new Map<string, OfferingPackage[]>();
  for (const row of rows) {
    // Mapped as a Package (column names and types), then copied into a plain OfferingPackage with its position.
    const pkg = em.map(Package, aliasedPart(row, 'p') as never);
    const item = Object.assign(new OfferingPackage(), {
      id: pkg.id,
      createdAt: pkg.createdAt,
      merchantId: pkg.merchantId,
      mode: pkg.mode,
      lookupKey: pkg.lookupKey,
      name: pkg.name,
      description: pkg.description ?? null,
      position: Number(row.position),
    });
    const key = String(row.offering_id);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
}

/** The product ids of each package, oldest product first, as one statement for many packages. */
export async function productIdsOfPackages(
  em: EntityManager,
  packageIds: readonly string[],
): Promise<Map<string, string[]>> {
  const rows = await tenantQuery<{ package_id: string; product_id: string }>(
    em,
    'select package_id, product_id from package_products where {tenant} and package_id = any(?::uuid[]) order by package_id, product_id',
    [uuidArray(packageIds)],
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.package_id);
    if (list) list.push(r.product_id);
    else out.set(r.package_id, [r.product_id]);
  }
  return out;
}

/**
 * An offering (by id; null: the tenant's current one) with its paywall, in one statement: the head of what resolve
 * serves. Null: no such offering (or no current one).
 */
export async function offeringWithPaywall(
  em: EntityManager,
  offeringId: string | null,
): Promise<{ offering: Offering; paywall: Paywall | null } | null> {
  const rows = await tenantQuery(
    em,
    `select ${aliasedColumns(em, Offering, 'o')}, ${aliasedColumns(em, Paywall, 'w')}
     from offerings o left join paywalls w on {tenant:w} and w.offering_id = o.id
     where {tenant:o} and ${offeringId === null ? 'o.is_current' : 'o.id = ?'}`,
    offeringId === null ? [] : [offeringId],
  );
  if (!rows.length) return null;
  const paywall = aliasedPart(rows[0], 'w');
  return {
    offering: em.map(Offering, aliasedPart(rows[0], 'o') as never),
    paywall: paywall ? em.map(Paywall, paywall as never) : null,
  };
}

import { LRUCache } from 'lru-cache';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { shareAnswer } from '../../core/read-cache';
import { currentMerchant, primeMerchant } from '../merchants';
import type { Offering, OfferingPackage, Paywall } from './offering.entities';
import { attachTree, offeringProductsByPackage, packagesByOffering, productIdsByPackage } from './offering.loaders';
import { offeringWithPaywall } from './offering.store';

/**
 * What resolve serves, per offering: the offering, its paywall, its packages in order, their products, plans and
 * prices, kept in memory between requests (resolve is the hot path of a merchant's checkout). The nested values are
 * attached to the records (offering.loaders.ts, attachTree), so an answer is computed from memory, synchronously.
 *
 * Freshness: an entry holds the catalog version (src/modules/catalog/catalog.store.ts) it was read at. Every write to
 * offerings, packages, paywalls and their links bumps that version in its own transaction, as every write to products,
 * plans and prices already does, and each resolve reads the version (one prepared statement, shared by the requests
 * of the same moment), so an entry is served only while nothing it shows has changed, in any process. The key holds
 * the merchant's reporting currency too, which picks each plan's default price.
 *
 * Bounds: at most MAX_TREES entries and MAX_RECORDS records (offering, paywall, packages, products, plans, prices,
 * usage rates) over all entries; the least recently used go first. "No current offering" is kept too, as an empty entry.
 */
export const MAX_TREES = 2000;
export const MAX_RECORDS = 200_000;

export interface OfferingTree {
  offering: Offering;
  paywall: Paywall | null;
  /** Records held, for the cache's bound. */
  weight: number;
}

interface Entry {
  version: string;
  tree: OfferingTree | null;
}

/**
 * Reads one offering's tree (by id; null: the current offering) in seven statements, on a fork of its own so the
 * records it keeps are tied to no request's identity map.
 */
async function readTree(ctx: Ctx, offeringId: string | null): Promise<OfferingTree | null> {
  const own: Ctx = { ...ctx, em: ctx.em.fork({ clear: true }), loaders: new Map() };
  primeMerchant(own, await currentMerchant(ctx)); // the request's, as authentication loaded it: no statement
  const head = await offeringWithPaywall(own.em, offeringId);
  if (!head) return null;
  const packages: OfferingPackage[] = await packagesByOffering(own).load(head.offering.id);
  const ids = packages.map((p) => p.id);
  const products = await offeringProductsByPackage(own).loadMany(ids);
  const productIds = await productIdsByPackage(own).loadMany(ids); // loaded by the line above
  const contents = packages.map((_, i) => {
    const [pi, pr] = [productIds[i], products[i]];
    if (pi instanceof Error) throw pi;
    if (pr instanceof Error) throw pr;
    return { productIds: pi, products: pr };
  });
  attachTree(head.offering, packages, contents);
  let weight = 2 + packages.length;
  for (const c of contents)
    for (const p of c.products)
      weight += 1 + p.plans.reduce((n, plan) => n + 1 + plan.prices.length + plan.usageRates.length, 0);
  // Never changed once read (a new catalog version reads a new tree): transports may reuse what they render of it.
  shareAnswer(head.offering);
  if (head.paywall) shareAnswer(head.paywall);
  return { offering: head.offering, paywall: head.paywall, weight };
}

export class OfferingTreeCache {
  private readonly entries = new LRUCache<string, Entry>({
    max: MAX_TREES,
    maxSize: MAX_RECORDS,
    sizeCalculation: (e) => Math.max(1, e.tree?.weight ?? 1),
  });
  /** Reads in flight, per key and version: requests arriving meanwhile share one. */
  private readonly loading = new Map<string, Promise<OfferingTree | null>>();

  /** Entries held (tests and the bound in docs/operations.md). */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The tree of an offering (null id: the current offering) at the catalog version `version`: from memory when an
   * entry of that version is held, else read and kept. Null: no such offering, or no current one.
   */
  async tree(ctx: Ctx, offeringId: string | null, version: string): Promise<OfferingTree | null> {
    const { merchantId, mode } = tenantOf(ctx);
    const { reportingCurrency } = await currentMerchant(ctx); // no statement: authentication primed it
    const key = `${merchantId}:${mode}:${reportingCurrency}:${offeringId ?? 'current'}`;
    const hit = this.entries.get(key);
    if (hit && hit.version === version) return hit.tree;
    const flight = `${key}@${version}`;
    let pending = this.loading.get(flight);
    if (!pending) {
      pending = readTree(ctx, offeringId).finally(() => this.loading.delete(flight));
      this.loading.set(flight, pending);
      const tree = await pending;
      const current = this.entries.peek(key);
      // A slower read of an older version must not replace a newer entry.
      if (!current || BigInt(current.version) <= BigInt(version)) this.entries.set(key, { version, tree });
      return tree;
    }
    return pending;
  }
}

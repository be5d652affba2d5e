import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { defineLoader, tenantOf } from '../../core/context';
import { Merchant } from './merchant.entities';

const merchantById = defineLoader<string, Merchant>('merchantById', async (ctx, ids) => {
  const rows = await ctx.em.find(Merchant, { id: { $in: [...ids] } });
  const byId = new Map(rows.map((m) => [m.id, m]));
  return ids.map((id) => byId.get(id)!);
});

/**
 * The request's merchant record (reporting currency, name, rate limit). Authentication already loaded it and primes
 * the request's loader with it (primeMerchant), so this costs no query on the request path.
 */
export function currentMerchant(ctx: Ctx): Promise<Merchant> {
  const primed = ctx.extras.get(AUTHENTICATED) as Merchant | undefined;
  if (primed) return Promise.resolve(primed);
  return merchantById(ctx).load(tenantOf(ctx).merchantId);
}

/** The merchant that authenticated the request (in the context's extras: no loader is made for a request that never asks). */
const AUTHENTICATED = Symbol('the authenticated merchant');

/** Hands the merchant that authenticated the request to currentMerchant. */
export function primeMerchant(ctx: Ctx, merchant: Merchant): void {
  ctx.extras.set(AUTHENTICATED, merchant);
}

/** A merchant by id, outside a request (gateway events, the scheduler): its settings, such as max_retries. */
export async function currentMerchantOf(em: EntityManager, merchantId: string): Promise<Merchant> {
  return em.findOneOrFail(Merchant, { id: merchantId });
}

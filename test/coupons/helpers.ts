import crypto from 'node:crypto';
import type { Client_ } from '../harness/app';
import { ok } from '../subscriptions/helpers';

/** Shared by the coupon tests. */

export const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

/** A new coupon (201): 10% off once with a fresh code unless the body says otherwise. */
export async function createCoupon(c: Client_, body: Record<string, unknown> = {}) {
  const base: Record<string, unknown> = { code: `SAVE${rnd()}`.toUpperCase(), name: 'Launch offer', duration: 'once' };
  if (!('amount_off' in body) && !('percent_off' in body)) base.percent_off = 10;
  return ok(c.post('/coupons', { ...base, ...body }), 201);
}

export async function validate(c: Client_, body: Record<string, unknown>) {
  return ok(c.post('/coupons/validate', body));
}

/** The GraphQL selection of a coupon, and the same object in REST's spelling. */
export const COUPON_FIELDS = `id object code name percentOff amountOff currency duration durationInCycles maxRedemptions redeemBy
  appliesToPlanIds timesRedeemed metadata livemode createdAt`;

export function couponAsRest(g: any) {
  return {
    id: g.id,
    object: g.object,
    code: g.code,
    name: g.name,
    percent_off: g.percentOff,
    amount_off: g.amountOff,
    currency: g.currency,
    duration: g.duration.toLowerCase(),
    duration_in_cycles: g.durationInCycles,
    max_redemptions: g.maxRedemptions,
    redeem_by: g.redeemBy,
    applies_to_plan_ids: g.appliesToPlanIds,
    times_redeemed: g.timesRedeemed,
    metadata: g.metadata,
    livemode: g.livemode,
    created_at: g.createdAt,
  };
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { tenantQuery, tenantRows } from '../../core/sql';
import { testClockSql } from '../test-clock';
import { Coupon } from './coupon.entities';

/**
 * Every statement on coupons and coupon_redemptions beyond the ORM's. The subscriptions engine redeems and releases
 * coupons through these functions, in its own transactions.
 */

/** The tenant's coupon whose code is `code` regardless of case (the unique index on lower(code) finds it). */
export async function couponByCode(em: EntityManager, code: string): Promise<Coupon | null> {
  const [coupon] = await tenantRows(em, Coupon, 'lower(code) = lower(?)', [code]);
  return coupon ?? null;
}

/** Merchant time (the test clock in test mode), in SQL: what `redeem_by` is compared with. */
const MERCHANT_NOW = `now() + ${testClockSql.offsetMs('c.merchant_id', 'c.mode')} * interval '1 millisecond'`;

/**
 * Takes one redemption of coupon `couponId` for a subscription, in the caller's transaction (the subscription's
 * create): one conditional update counts it only while `times_redeemed < max_redemptions` and `redeem_by` has not
 * passed on the merchant's clock — the row lock makes concurrent creates count one after another, so the count never
 * passes the limit — and the redemption row is written by the same statement. False: nothing was taken.
 */
export async function redeemCoupon(
  em: EntityManager,
  r: { couponId: string; subscriptionId: string; customerId: string },
): Promise<boolean> {
  if (!em.getTransactionContext())
    throw new Error('redeemCoupon runs inside the transaction that creates the subscription');
  const rows = await tenantQuery(
    em,
    `with taken as (
       update coupons c set times_redeemed = c.times_redeemed + 1
       where {tenant:c} and c.id = ? and (c.max_redemptions is null or c.times_redeemed < c.max_redemptions)
         and (c.redeem_by is null or c.redeem_by >= ${MERCHANT_NOW})
       returning c.id
     )
     insert into coupon_redemptions (id, created_at, merchant_id, mode, coupon_id, subscription_id, customer_id, status)
     select ?, now(), {tenant_values}, taken.id, ?, ?, 'active' from taken
     returning id`,
    [r.couponId, uuidv7(), r.subscriptionId, r.customerId],
  );
  return rows.length === 1;
}

/**
 * Gives back the redemption of a subscription whose checkout never completed, in the caller's transaction (the one
 * moving it from `created` to `cancelled`): the redemption row is marked released and the coupon's count goes down
 * by one, once (a released row is not released again).
 */
export async function releaseRedemption(em: EntityManager, subscriptionId: string): Promise<boolean> {
  const rows = await tenantQuery(
    em,
    `with r as (
       update coupon_redemptions set status = 'released', released_at = now()
       where {tenant} and subscription_id = ? and status = 'active'
       returning coupon_id
     )
     update coupons c set times_redeemed = c.times_redeemed - 1 from r where {tenant:c} and c.id = r.coupon_id
     returning c.id`,
    [subscriptionId],
  );
  return rows.length === 1;
}

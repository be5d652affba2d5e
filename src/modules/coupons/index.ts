/**
 * Coupons and their redemptions.
 * The module's public surface: other modules import it only through this file.
 */
export { Coupon, CouponInvalidReason, CouponRedemption } from './coupon.entities';
export { couponResolvers } from './coupon.resolver';
export { appliesToPlan, couponRefused, CouponService, discountCycles } from './coupon.service';
export { redeemCoupon, releaseRedemption } from './coupon.store';

import type { Route } from '../routes';

const PAGE = 'pageInfo { hasNextPage endCursor }';
const TAG = 'Coupons';

/** Coupons (src/modules/coupons): create, list, retrieve, validate. */
export const COUPON_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/coupons',
    tag: TAG,
    status: 201,
    conflicts: ['coupon_code_exists'],
    summary:
      'Create a coupon: code (unique regardless of case), name, percent_off or amount_off + currency, duration (once, repeating with duration_in_cycles, forever), optional max_redemptions, redeem_by, applies_to_plan_ids.',
    document: 'mutation($input: CreateCouponInput!) { createCoupon(input: $input) { ...CouponFields } }',
  },
  {
    method: 'get',
    path: '/coupons',
    tag: TAG,
    summary: 'List coupons, newest first.',
    document: `query($first: Int, $after: String) { coupons(first: $first, after: $after) { edges { node { ...CouponFields } } ${PAGE} } }`,
  },
  {
    method: 'post',
    path: '/coupons/validate',
    tag: TAG,
    summary:
      'Whether a code can be applied now (always 200): valid, reason (not_found, expired, max_redemptions_reached, not_applicable, currency_mismatch), the coupon, and discount_amount on amount or the price.',
    document:
      'mutation($input: ValidateCouponInput!) { validateCoupon(input: $input) { valid reason coupon { ...CouponFields } discountAmount } }',
  },
  {
    method: 'get',
    path: '/coupons/{id}',
    tag: TAG,
    summary: 'Retrieve a coupon with its times_redeemed.',
    document: 'query($id: ID!) { coupon(id: $id) { ...CouponFields } }',
  },
];

import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { normaliseCurrency } from '../../core/currency';
import { make } from '../../core/entity';
import { DomainError, invalid, notFound } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { validateMetadata } from '../../core/validate';
import { Plan, Price, existingPlans, pickDefaultPrice } from '../catalog';
import { currentMerchant } from '../merchants';
import type { Clock } from '../test-clock';
import { discountOn, percentToBps } from '../../money';
import { Coupon, CouponDuration, CouponInvalidReason, CouponValidation } from './coupon.entities';
import { COUPON_CODE, CreateCouponInput, MAX_NAME, MAX_PLANS, ValidateCouponInput } from './coupon.inputs';
import { couponByCode } from './coupon.store';

const R = CouponInvalidReason;

/** What each reason means, for the message of a subscription create that names a coupon it cannot take. */
const REASON_TEXT: Record<CouponInvalidReason, string> = {
  not_found: 'no coupon has this code',
  expired: 'its redeem_by has passed',
  max_redemptions_reached: 'it has been redeemed max_redemptions times',
  not_applicable: 'it does not apply to this plan',
  currency_mismatch: 'its amount_off is in another currency than the price',
};

/**
 * Why `coupon` cannot be applied to a plan and currency at merchant time `now`, or null when it can (the order of
 * the checks is the order of the reasons: expiry, then the redemption limit, then the plan, then the currency).
 */
export function whyNot(
  coupon: Coupon,
  target: { planId?: string | null; currency?: string | null },
  now: Date,
): CouponInvalidReason | null {
  if (coupon.redeemBy && now.getTime() > coupon.redeemBy.getTime()) return R.EXPIRED;
  if (coupon.maxRedemptions != null && coupon.timesRedeemed >= coupon.maxRedemptions) return R.MAX_REDEMPTIONS_REACHED;
  if (target.planId && !appliesToPlan(coupon, target.planId)) return R.NOT_APPLICABLE;
  if (coupon.amountOff != null && target.currency && coupon.currency !== target.currency.toUpperCase())
    return R.CURRENCY_MISMATCH;
  return null;
}

/** Whether the coupon may discount subscriptions to this plan (no restriction: every plan). */
export function appliesToPlan(coupon: Pick<Coupon, 'appliesToPlanIds'>, planId: string): boolean {
  return !coupon.appliesToPlanIds || coupon.appliesToPlanIds.includes(planId.toLowerCase());
}

/** The 400 a subscription create answers for a coupon it cannot take (nothing is created). */
export function couponRefused(code: string, reason: CouponInvalidReason): DomainError {
  return invalid('coupon_code', `Coupon '${code}' cannot be applied: ${reason} (${REASON_TEXT[reason]}).`);
}

/** How many billed periods a coupon discounts: null for every one (forever). */
export function discountCycles(coupon: Pick<Coupon, 'duration' | 'durationInCycles'>): number | null {
  if (coupon.duration === CouponDuration.FOREVER) return null;
  return coupon.duration === CouponDuration.ONCE ? 1 : coupon.durationInCycles!;
}

/**
 * Coupons (docs/growth.md): create, read, validate; subscriptions redeem them (coupon.store.ts) when they are created.
 */
export class CouponService {
  constructor(private readonly clock: Clock) {}

  /** Merchant time (the test clock in test mode): `redeem_by` is read on it. */
  now(ctx: Ctx): Promise<Date> {
    const { merchantId, mode } = tenantOf(ctx);
    return this.clock.now(merchantId, mode);
  }

  /** Creates a coupon; its code is unique per merchant and mode regardless of case (the unique index settles races: 409). */
  async create(ctx: Ctx, input: CreateCouponInput): Promise<Coupon> {
    tenantOf(ctx);
    if (!COUPON_CODE.test(input.code))
      throw invalid('code', 'code must be 1 to 64 characters: letters, digits, - or _.');
    const name = input.name == null ? null : input.name.trim();
    if (name != null && (!name || name.length > MAX_NAME))
      throw invalid('name', `name must be 1 to ${MAX_NAME} characters.`);
    const metadata = validateMetadata(input.metadata);

    // Exactly one of percent_off and (amount_off with currency).
    const percent = input.percentOff != null;
    const fixed = input.amountOff != null || input.currency != null;
    if (percent && fixed)
      throw invalid(
        input.amountOff != null ? 'amount_off' : 'currency',
        'Give either percent_off, or amount_off with currency, not both.',
      );
    if (!percent && !fixed)
      throw new DomainError(
        'parameter_missing',
        'Missing required parameter: percent_off (or amount_off with currency).',
        'percent_off',
      );
    let percentOffBps: number | null = null;
    let amountOff: number | null = null;
    let currency: string | null = null;
    if (percent) {
      percentOffBps = percentToBps(input.percentOff!);
      if (percentOffBps === null)
        throw invalid('percent_off', 'percent_off must be greater than 0 and at most 100, with at most 2 decimals.');
    } else {
      if (input.amountOff == null)
        throw new DomainError(
          'parameter_missing',
          'Missing required parameter: amount_off (with currency).',
          'amount_off',
        );
      if (input.currency == null)
        throw new DomainError(
          'parameter_missing',
          'Missing required parameter: currency (with amount_off).',
          'currency',
        );
      if (!Number.isSafeInteger(input.amountOff) || input.amountOff <= 0)
        throw invalid('amount_off', 'amount_off must be an integer amount of subunits greater than 0.');
      amountOff = input.amountOff;
      currency = normaliseCurrency(input.currency);
    }

    if (input.duration === CouponDuration.REPEATING) {
      if (input.durationInCycles == null)
        throw new DomainError(
          'parameter_missing',
          'Missing required parameter: duration_in_cycles (for a repeating coupon).',
          'duration_in_cycles',
        );
      if (!Number.isInteger(input.durationInCycles) || input.durationInCycles < 1)
        throw invalid('duration_in_cycles', 'duration_in_cycles must be an integer of at least 1.');
    } else if (input.durationInCycles != null) {
      throw invalid('duration_in_cycles', `duration_in_cycles is only for a repeating coupon, not ${input.duration}.`);
    }
    if (input.maxRedemptions != null && (!Number.isInteger(input.maxRedemptions) || input.maxRedemptions < 1)) {
      throw invalid('max_redemptions', 'max_redemptions must be an integer of at least 1.');
    }
    if (input.redeemBy != null && input.redeemBy.getTime() <= (await this.now(ctx)).getTime()) {
      throw invalid(
        'redeem_by',
        "redeem_by must be in the future (on the merchant's clock; the test clock in test mode).",
      );
    }
    const plans = await this.planRestriction(ctx, input.appliesToPlanIds);

    const coupon = make(Coupon, {
      code: input.code,
      name,
      percentOffBps,
      amountOff,
      currency,
      duration: input.duration,
      durationInCycles: input.duration === CouponDuration.REPEATING ? input.durationInCycles! : null,
      maxRedemptions: input.maxRedemptions ?? null,
      redeemBy: input.redeemBy ?? null,
      appliesToPlanIds: plans,
      metadata,
    });
    try {
      await ctx.em.persistAndFlush(coupon);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) {
        throw new DomainError(
          'coupon_code_exists',
          `A coupon with code '${input.code}' already exists in this mode (codes match regardless of case).`,
          'code',
        );
      }
      throw err;
    }
    return coupon;
  }

  /** The plans of `applies_to_plan_ids`, each one the tenant's (404 naming the first that is not); null: every plan. */
  private async planRestriction(ctx: Ctx, ids: string[] | null | undefined): Promise<string[] | null> {
    if (ids == null) return null;
    if (!ids.length)
      throw invalid('applies_to_plan_ids', 'applies_to_plan_ids must name at least one plan (omit it for every plan).');
    if (ids.length > MAX_PLANS)
      throw invalid('applies_to_plan_ids', `applies_to_plan_ids can name at most ${MAX_PLANS} plans.`);
    ids.forEach((p, i) => {
      if (!isUuid(p)) throw notFound('plan', p, `applies_to_plan_ids[${i}]`);
    });
    const wanted = [...new Set(ids.map((p) => p.toLowerCase()))];
    const found = await existingPlans(ctx.em, wanted);
    const missing = ids.findIndex((p) => !found.has(p.toLowerCase()));
    if (missing >= 0) throw notFound('plan', ids[missing], `applies_to_plan_ids[${missing}]`);
    return wanted;
  }

  coupon(ctx: Ctx, id: string): Promise<Coupon> {
    return findOr404(ctx.em, Coupon, id, 'coupon');
  }

  coupons(ctx: Ctx, page: PageArgs) {
    tenantOf(ctx);
    return paginate(ctx.em, Coupon, {}, page);
  }

  /**
   * Whether a code can be applied now (docs/growth.md): always an answer, with the reason when it cannot, and the
   * discount on `amount`, else on the price's amount, else on the plan's default price (in `currency` when given). Ids
   * that are not the tenant's answer 404, as everywhere.
   */
  async validate(ctx: Ctx, input: ValidateCouponInput): Promise<CouponValidation> {
    tenantOf(ctx);
    if (input.amount != null && (!Number.isSafeInteger(input.amount) || input.amount < 0))
      throw invalid('amount', 'amount must be an integer amount of subunits, at least 0.');
    const currency = input.currency != null ? normaliseCurrency(input.currency) : null;
    const price = input.priceId ? await findOr404(ctx.em, Price, input.priceId, 'price', { param: 'price_id' }) : null;
    if (price && input.planId && price.planId !== input.planId.toLowerCase())
      throw invalid('price_id', `Price ${price.id} is not a price of plan ${input.planId}.`);
    if (price && currency && price.currency !== currency)
      throw new DomainError(
        'currency_mismatch',
        `Price ${price.id} is in ${price.currency}, not ${currency}.`,
        'currency',
      );
    const planId = price?.planId ?? input.planId ?? null;
    const plan =
      input.planId && !price ? await findOr404(ctx.em, Plan, input.planId, 'plan', { param: 'plan_id' }) : null;
    // The amount the discount is computed on: the one given, else the price's, else the plan's default price.
    let basis: { amount: number; currency: string | null } | null =
      input.amount != null ? { amount: input.amount, currency } : null;
    if (!basis && price) basis = { amount: price.amount, currency: price.currency };
    if (!basis && plan) {
      const defaults = await ctx.em.find(Price, { planId: plan.id, isDefault: true }, { orderBy: { id: 'asc' } });
      const chosen = currency
        ? defaults.find((p) => p.currency === currency)
        : pickDefaultPrice(defaults, (await currentMerchant(ctx)).reportingCurrency);
      if (chosen) basis = { amount: chosen.amount, currency: chosen.currency };
    }

    const answer = new CouponValidation();
    const coupon = COUPON_CODE.test(input.code) ? await couponByCode(ctx.em, input.code) : null;
    answer.coupon = coupon;
    answer.reason = coupon
      ? whyNot(coupon, { planId, currency: basis?.currency ?? currency }, await this.now(ctx))
      : R.NOT_FOUND;
    answer.valid = answer.reason === null;
    answer.discountAmount = answer.valid && basis ? discountOn(basis.amount, coupon!) : null;
    return answer;
  }

  /**
   * The coupon a new subscription names by `coupon_code`, checked against its plan and price at merchant time `now`
   * (400 parameter_invalid on coupon_code with the reason when it cannot be applied). The redemption itself is taken
   * in the subscription's create transaction (coupon.store.ts redeemCoupon).
   */
  async forSubscription(ctx: Ctx, code: string, plan: Plan, price: Price, now: Date): Promise<Coupon> {
    const coupon = await couponByCode(ctx.em, code);
    if (!coupon) throw couponRefused(code, R.NOT_FOUND);
    const reason = whyNot(coupon, { planId: plan.id, currency: price.currency }, now);
    if (reason) throw couponRefused(coupon.code, reason);
    return coupon;
  }
}

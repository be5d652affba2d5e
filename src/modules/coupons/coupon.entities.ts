import { BigIntType, Check, Entity, Enum, Index, Property, Unique } from '@mikro-orm/core';
import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject, Money } from '../../core/scalars';

export enum CouponDuration {
  /** The first billed period only. */
  ONCE = 'once',
  /** The first `duration_in_cycles` billed periods. */
  REPEATING = 'repeating',
  /** Every billed period. */
  FOREVER = 'forever',
}
registerEnumType(CouponDuration, {
  name: 'CouponDuration',
  description: 'How many billed periods a coupon discounts.',
});

/** Why a coupon cannot be applied (docs/growth.md, validate); null when it can. */
export enum CouponInvalidReason {
  NOT_FOUND = 'not_found',
  EXPIRED = 'expired',
  MAX_REDEMPTIONS_REACHED = 'max_redemptions_reached',
  NOT_APPLICABLE = 'not_applicable',
  CURRENCY_MISMATCH = 'currency_mismatch',
}
registerEnumType(CouponInvalidReason, { name: 'CouponInvalidReason' });

export enum CouponRedemptionStatus {
  /** Taken by a subscription (counted in `times_redeemed`). */
  ACTIVE = 'active',
  /** Given back: the subscription's checkout never completed (created -> cancelled). */
  RELEASED = 'released',
}

/**
 * A discount code (docs/growth.md, coupon): a percentage (kept exactly, in basis points) or a fixed amount in one
 * currency, for one, several or every billed period of the subscriptions created with it. Codes are unique per merchant
 * and mode regardless of case (a unique index on lower(code), Migration20261124000600_coupons). Immutable once created.
 */
@Entity({ tableName: 'coupons' })
@Index({
  name: 'coupons_code_unique',
  expression: 'create unique index "coupons_code_unique" on "coupons" ("merchant_id", "mode", lower("code"))',
})
@Check({ name: 'coupons_discount_check', expression: '("percent_off_bps" is null) <> ("amount_off" is null)' })
@Check({
  name: 'coupons_percent_check',
  expression: '"percent_off_bps" is null or "percent_off_bps" between 1 and 10000',
})
@Check({
  name: 'coupons_amount_check',
  expression: '"amount_off" is null or ("amount_off" > 0 and "currency" is not null)',
})
@Check({
  name: 'coupons_cycles_check',
  expression: `("duration" = 'repeating') = ("duration_in_cycles" is not null) and coalesce("duration_in_cycles", 1) >= 1`,
})
@Check({
  name: 'coupons_redemptions_check',
  expression: '"times_redeemed" >= 0 and ("max_redemptions" is null or "times_redeemed" <= "max_redemptions")',
})
@ObjectType({ description: 'A discount code applied at subscription creation (REST object `coupon`).' })
export class Coupon extends TenantEntity {
  @Field()
  get object(): string {
    return 'coupon';
  }

  /** As the merchant wrote it; matched without regard to case. */
  @Field({ description: 'Unique per merchant and mode regardless of case; letters, digits, - and _ (at most 64).' })
  @Property({ length: 64 })
  code!: string;

  @Field(() => String, { nullable: true })
  @Property({ length: 255, nullable: true })
  name?: string | null;

  /** Percent off in basis points (1250 = 12.5%); null for a fixed-amount coupon. */
  @Property({ type: 'integer', nullable: true })
  percentOffBps?: number | null;

  /** Subunits of `currency`; null for a percentage coupon. */
  @Field(() => Money, {
    nullable: true,
    description: 'Fixed discount in subunits of currency (null for a percentage coupon).',
  })
  @Property({ type: new BigIntType('number'), nullable: true })
  amountOff?: number | null;

  @Field(() => String, { nullable: true, description: 'The currency of amount_off (null for a percentage coupon).' })
  @Property({ length: 3, nullable: true })
  currency?: string | null;

  @Field(() => CouponDuration)
  @Enum({ items: () => CouponDuration })
  duration!: CouponDuration;

  @Field(() => Int, { nullable: true, description: 'Billed periods discounted, for a repeating coupon.' })
  @Property({ type: 'integer', nullable: true })
  durationInCycles?: number | null;

  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  maxRedemptions?: number | null;

  @Field(() => DateTime, {
    nullable: true,
    description: "Last moment it can be redeemed, on the merchant's clock (the test clock in test mode).",
  })
  @Property({ type: 'timestamptz', nullable: true })
  redeemBy?: Date | null;

  /** Null: every plan. */
  @Field(() => [ID], { nullable: true, description: 'Plans it applies to; null: every plan.' })
  @Property({ type: 'jsonb', nullable: true })
  appliesToPlanIds?: string[] | null;

  @Field(() => Int, {
    description: 'Subscriptions holding it now (a checkout that never completed gives its redemption back).',
  })
  @Property()
  timesRedeemed: number = 0;

  @Field(() => JSONObject)
  @Property({ type: 'jsonb' })
  metadata: Record<string, string> = {};

  @Field(() => Float, {
    nullable: true,
    description: 'Percent off (0 < p <= 100, at most 2 decimals); null for a fixed-amount coupon.',
  })
  get percentOff(): number | null {
    return this.percentOffBps == null ? null : this.percentOffBps / 100;
  }
}

/**
 * One subscription's redemption of a coupon, written in the transaction that creates the subscription, and released
 * (the count given back) in the transaction that moves it from `created` to `cancelled`.
 */
@Entity({ tableName: 'coupon_redemptions' })
@Unique({ name: 'coupon_redemptions_subscription_unique', properties: ['subscriptionId'] })
@Index({ properties: ['merchantId', 'mode', 'couponId', 'id'] })
export class CouponRedemption extends TenantEntity {
  @Property({ type: 'uuid' }) couponId!: string;
  @Property({ type: 'uuid' }) subscriptionId!: string;
  @Property({ type: 'uuid' }) customerId!: string;
  @Enum({ items: () => CouponRedemptionStatus }) status: CouponRedemptionStatus = CouponRedemptionStatus.ACTIVE;
  @Property({ type: 'timestamptz', nullable: true }) releasedAt?: Date | null;
}

/** `POST /coupons/validate`: always answered (200), with why it cannot be applied. */
@ObjectType({ description: 'Whether a coupon can be applied, why not, and the discount it gives.' })
export class CouponValidation {
  @Field() valid!: boolean;
  @Field(() => CouponInvalidReason, { nullable: true }) reason!: CouponInvalidReason | null;
  @Field(() => Coupon, { nullable: true }) coupon!: Coupon | null;
  @Field(() => Money, {
    nullable: true,
    description:
      "The discount on `amount` (else the price's amount, else the plan's default price) for one period; null when invalid or no amount is known.",
  })
  discountAmount!: number | null;
}

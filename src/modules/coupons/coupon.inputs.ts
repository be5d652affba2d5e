import { ArrayMaxSize, IsOptional, MaxLength } from 'class-validator';
import { Field, Float, ID, InputType, Int } from 'type-graphql';
import { DateTime, JSONObject, Money } from '../../core/scalars';
import { CouponDuration } from './coupon.entities';

/** Codes are typed by customers: plain letters, digits, - and _ (the same rule `coupon_code` of a subscription has). */
export const COUPON_CODE = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_NAME = 255;
/** Plans one coupon may be restricted to (its `applies_to_plan_ids` is answered whole). */
export const MAX_PLANS = 100;

@InputType()
export class CreateCouponInput {
  @Field({ description: 'Unique per merchant and mode regardless of case: 1 to 64 letters, digits, - or _.' })
  @MaxLength(64)
  code!: string;

  @Field(() => String, { nullable: true, description: 'Shown to people (at most 255 characters).' })
  @IsOptional()
  @MaxLength(MAX_NAME)
  name?: string | null;

  @Field(() => Float, {
    nullable: true,
    description: 'Percent off, 0 < p <= 100 with at most 2 decimals; or amountOff + currency.',
  })
  percentOff?: number | null;

  @Field(() => Money, { nullable: true, description: 'Fixed discount per period in subunits (> 0), with currency.' })
  amountOff?: number | null;

  @Field(() => String, { nullable: true, description: 'The currency of amountOff.' })
  @IsOptional()
  @MaxLength(3)
  currency?: string | null;

  @Field(() => CouponDuration)
  duration!: CouponDuration;

  @Field(() => Int, {
    nullable: true,
    description: 'Required for (only for) a repeating coupon: billed periods discounted, >= 1.',
  })
  durationInCycles?: number | null;

  @Field(() => Int, { nullable: true, description: '>= 1; default: unlimited.' })
  maxRedemptions?: number | null;

  @Field(() => DateTime, {
    nullable: true,
    description: "Last moment it can be redeemed; in the future on the merchant's clock.",
  })
  redeemBy?: Date | null;

  @Field(() => [ID], {
    nullable: true,
    description: `Plans of this merchant and mode (at most ${MAX_PLANS}); default: every plan.`,
  })
  @IsOptional()
  @ArrayMaxSize(MAX_PLANS)
  @MaxLength(100, { each: true })
  appliesToPlanIds?: string[] | null;

  @Field(() => JSONObject, { nullable: true })
  metadata?: Record<string, unknown> | null;
}

@InputType()
export class ValidateCouponInput {
  @Field({ description: 'Matched without regard to case.' })
  @MaxLength(64)
  code!: string;

  @Field(() => ID, { nullable: true, description: 'The plan it would be applied to (its restrictions are checked).' })
  planId?: string | null;

  @Field(() => ID, {
    nullable: true,
    description: 'The price it would be applied to (its plan and currency are checked; its amount discounted).',
  })
  priceId?: string | null;

  @Field(() => Money, {
    nullable: true,
    description: 'An amount (subunits) to compute discountAmount on, instead of the price’s.',
  })
  amount?: number | null;

  @Field(() => String, {
    nullable: true,
    description: 'The currency of amount (checked against a fixed-amount coupon).',
  })
  @IsOptional()
  @MaxLength(3)
  currency?: string | null;
}

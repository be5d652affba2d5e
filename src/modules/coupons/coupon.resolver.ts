import { Arg, Args, Ctx as C, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { Coupon, CouponValidation } from './coupon.entities';
import { CreateCouponInput, ValidateCouponInput } from './coupon.inputs';

export const CouponConnection = ConnectionType(Coupon);

@Resolver(() => Coupon)
export class CouponResolver {
  @Query(() => Coupon)
  coupon(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).coupons.coupon(ctx, id);
  }

  @Query(() => CouponConnection, { description: 'Coupons, newest first.' })
  coupons(@C() ctx: Ctx, @Args() args: PageArgs) {
    return services(ctx).coupons.coupons(ctx, args);
  }

  @Mutation(() => Coupon, {
    description:
      'Creates a coupon; codes are unique per merchant and mode regardless of case (409 coupon_code_exists).',
  })
  createCoupon(@C() ctx: Ctx, @Arg('input') input: CreateCouponInput) {
    return services(ctx).coupons.create(ctx, input);
  }

  @Mutation(() => CouponValidation, {
    description:
      'Whether a code can be applied now, why not, and the discount it gives (never an error for an unusable code).',
  })
  validateCoupon(@C() ctx: Ctx, @Arg('input') input: ValidateCouponInput) {
    return services(ctx).coupons.validate(ctx, input);
  }
}

export const couponResolvers: ClassType[] = [CouponResolver];

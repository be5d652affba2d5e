import { Arg, Args, ArgsType, Ctx as C, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { currentMerchant } from '../merchants';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { Plan, Price, Product, ProductFamily, ProductStatus, ProductType, UsageRate } from './catalog.entities';
import {
  CreatePlanInput,
  CreatePriceInput,
  CreateProductFamilyInput,
  CreateProductInput,
  CreateUsageRateInput,
  UpdateProductInput,
} from './catalog.inputs';
import { defaultPricesByPlan, pickDefaultPrice, plansByProduct, pricesByPlan } from './catalog.service';
import { usageRatesByPlan } from './catalog.usage-rates';

export const ProductConnection = ConnectionType(Product);
export const ProductFamilyConnection = ConnectionType(ProductFamily);
export const UsageRateConnection = ConnectionType(UsageRate);

@ArgsType()
class ProductsArgs extends PageArgs {
  @Field(() => ProductStatus, { nullable: true }) status?: ProductStatus | null;
  @Field(() => ProductType, { nullable: true }) type?: ProductType | null;
}

@Resolver(() => Product)
export class ProductResolver {
  @Query(() => Product)
  product(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).catalog.product(ctx, id);
  }

  @Query(() => ProductConnection, { description: 'Products, newest first.' })
  products(@C() ctx: Ctx, @Args() args: ProductsArgs) {
    return services(ctx).catalog.products(ctx, args);
  }

  @Mutation(() => Product)
  createProduct(@C() ctx: Ctx, @Arg('input') input: CreateProductInput) {
    return services(ctx).catalog.createProduct(ctx, input);
  }

  @Mutation(() => Product)
  updateProduct(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: UpdateProductInput) {
    return services(ctx).catalog.updateProduct(ctx, id, input);
  }

  @FieldResolver(() => [Plan])
  plans(@C() ctx: Ctx, @Root() product: Product) {
    return plansByProduct(ctx).load(product.id);
  }
}

@Resolver(() => Plan)
export class PlanResolver {
  @Query(() => Plan)
  plan(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).catalog.plan(ctx, id);
  }

  @Mutation(() => Plan)
  createPlan(@C() ctx: Ctx, @Arg('productId', () => ID) productId: string, @Arg('input') input: CreatePlanInput) {
    return services(ctx).catalog.createPlan(ctx, productId, input);
  }

  @FieldResolver(() => [Price], { description: 'All prices of the plan, oldest first.' })
  prices(@C() ctx: Ctx, @Root() plan: Plan) {
    return pricesByPlan(ctx).load(plan.id);
  }

  @FieldResolver(() => Price, {
    nullable: true,
    description: "The default price in the merchant's reporting currency, else the oldest default price.",
  })
  async defaultPrice(@C() ctx: Ctx, @Root() plan: Plan) {
    return pickDefaultPrice(
      await defaultPricesByPlan(ctx).load(plan.id),
      (await currentMerchant(ctx)).reportingCurrency,
    );
  }

  @FieldResolver(() => [UsageRate], {
    description: 'Its usage rates (per unit of a usage event type, billed in arrears), oldest first.',
  })
  usageRates(@C() ctx: Ctx, @Root() plan: Plan) {
    return usageRatesByPlan(ctx).load(plan.id);
  }
}

@Resolver(() => UsageRate)
export class UsageRateResolver {
  @Query(() => UsageRateConnection, { description: "A plan's usage rates, newest first." })
  usageRates(@C() ctx: Ctx, @Arg('planId', () => ID) planId: string, @Args() args: PageArgs) {
    return services(ctx).catalog.usageRates(ctx, planId, args);
  }

  @Mutation(() => UsageRate, {
    description:
      'Prices one usage event type of a plan in one currency (one per plan, event type and currency; immutable).',
  })
  createUsageRate(@C() ctx: Ctx, @Arg('planId', () => ID) planId: string, @Arg('input') input: CreateUsageRateInput) {
    return services(ctx).catalog.createUsageRate(ctx, planId, input);
  }
}

@Resolver(() => Price)
export class PriceResolver {
  @Query(() => Price)
  price(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).catalog.price(ctx, id);
  }

  @Mutation(() => Price, {
    description: 'Prices are immutable; a default price replaces the previous default for its currency.',
  })
  createPrice(@C() ctx: Ctx, @Arg('planId', () => ID) planId: string, @Arg('input') input: CreatePriceInput) {
    return services(ctx).catalog.createPrice(ctx, planId, input);
  }
}

@Resolver(() => ProductFamily)
export class ProductFamilyResolver {
  @Query(() => ProductFamily)
  productFamily(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).catalog.productFamily(ctx, id);
  }

  @Query(() => ProductFamilyConnection)
  productFamilies(@C() ctx: Ctx, @Args() args: PageArgs) {
    return services(ctx).catalog.productFamilies(ctx, args);
  }

  @Mutation(() => ProductFamily)
  createProductFamily(@C() ctx: Ctx, @Arg('input') input: CreateProductFamilyInput) {
    return services(ctx).catalog.createProductFamily(ctx, input);
  }
}

export const catalogResolvers = [
  ProductResolver,
  PlanResolver,
  PriceResolver,
  ProductFamilyResolver,
  UsageRateResolver,
] as const;

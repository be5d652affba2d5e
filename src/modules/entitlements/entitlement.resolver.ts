import { Arg, Args, Ctx as C, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { CustomerEntitlements, Entitlement } from './entitlement.entities';
import { CreateEntitlementInput, LinkEntitlementProductsInput } from './entitlement.inputs';
import { productIdsByEntitlement } from './entitlement.service';

export const EntitlementConnection = ConnectionType(Entitlement);

@Resolver(() => Entitlement)
export class EntitlementResolver {
  @Query(() => Entitlement)
  entitlement(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).entitlements.entitlement(ctx, id);
  }

  @Query(() => EntitlementConnection, { description: 'Entitlements, newest first.' })
  entitlements(@C() ctx: Ctx, @Args() args: PageArgs) {
    return services(ctx).entitlements.entitlements(ctx, args);
  }

  @Query(() => CustomerEntitlements, {
    description:
      'Every entitlement the customer holds now, across their active and trialing subscriptions (not paused, past_due, halted or ended).',
  })
  customerEntitlements(@C() ctx: Ctx, @Arg('customerId', () => ID) customerId: string) {
    return services(ctx).entitlements.customerEntitlements(ctx, customerId);
  }

  @Mutation(() => Entitlement, {
    description: 'Creates a feature gate; lookupKey is unique per merchant and mode (409 lookup_key_exists).',
  })
  createEntitlement(@C() ctx: Ctx, @Arg('input') input: CreateEntitlementInput) {
    return services(ctx).entitlements.create(ctx, input);
  }

  @Mutation(() => Entitlement, {
    description: 'Links products to a feature gate; products already linked stay as they are.',
  })
  linkEntitlementProducts(
    @C() ctx: Ctx,
    @Arg('id', () => ID) id: string,
    @Arg('input') input: LinkEntitlementProductsInput,
  ) {
    return services(ctx).entitlements.linkProducts(ctx, id, input);
  }

  @FieldResolver(() => [ID], { description: 'The linked products, in the order they were linked.' })
  productIds(@C() ctx: Ctx, @Root() entitlement: Entitlement) {
    return productIdsByEntitlement(ctx).load(entitlement.id);
  }
}

export const entitlementResolvers: ClassType[] = [EntitlementResolver];

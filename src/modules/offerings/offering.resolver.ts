import { Arg, Args, ArgsType, Ctx as C, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { Offering, OfferingPackage, OfferingProduct, OfferingResolution, Package, Paywall } from './offering.entities';
import {
  AttachPackageInput,
  CreateOfferingInput,
  CreatePackageInput,
  CreatePaywallInput,
  LinkPackageProductsInput,
  ResolveOfferingInput,
} from './offering.inputs';
import { packagesOf, productIdsOf, productsOf } from './offering.loaders';

export const OfferingConnection = ConnectionType(Offering);
export const PackageConnection = ConnectionType(Package);
export const PaywallConnection = ConnectionType(Paywall);

@ArgsType()
class LookupKeyPageArgs extends PageArgs {
  @Field(() => String, { nullable: true, description: 'Only the record with this lookup_key.' }) lookupKey?:
    string | null;
}

@ArgsType()
class PaywallsArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: "Only this offering's paywall." }) offeringId?: string | null;
}

const PRODUCTS =
  "The package's active products, oldest first, with their plans and prices (inactive products are not for sale).";

@Resolver(() => Offering)
export class OfferingResolver {
  @Query(() => Offering)
  offering(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).offerings.offering(ctx, id);
  }

  @Query(() => OfferingConnection, { description: 'Offerings, newest first.' })
  offerings(@C() ctx: Ctx, @Args() args: LookupKeyPageArgs) {
    return services(ctx).offerings.offerings(ctx, args);
  }

  @Mutation(() => Offering, {
    description: 'isCurrent: true makes it the current offering; the previous one stops being current.',
  })
  createOffering(@C() ctx: Ctx, @Arg('input') input: CreateOfferingInput) {
    return services(ctx).offerings.createOffering(ctx, input);
  }

  @Mutation(() => Offering, { description: 'Makes the offering the current one (exactly one per merchant and mode).' })
  makeOfferingCurrent(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).offerings.makeOfferingCurrent(ctx, id);
  }

  @Mutation(() => Offering, {
    description:
      'Puts a package in the offering at a position (0 first; default or past the end: last), shifting the ones after it; a package already there moves.',
  })
  attachPackage(
    @C() ctx: Ctx,
    @Arg('offeringId', () => ID) offeringId: string,
    @Arg('input') input: AttachPackageInput,
  ) {
    return services(ctx).offerings.attachPackage(ctx, offeringId, input);
  }

  @Mutation(() => OfferingResolution, {
    description:
      "The offering and paywall to show a customer: its experiment arm's offering (sticky), else the current offering, else none.",
  })
  resolveOffering(@C() ctx: Ctx, @Arg('input') input: ResolveOfferingInput) {
    return services(ctx).offerings.resolve(ctx, input);
  }

  @FieldResolver(() => [OfferingPackage], { description: 'The packages in position order.' })
  packages(@C() ctx: Ctx, @Root() offering: Offering) {
    return packagesOf(ctx, offering);
  }
}

@Resolver(() => Package)
export class PackageResolver {
  @Query(() => Package)
  package(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).offerings.package(ctx, id);
  }

  @Query(() => PackageConnection, { description: 'Packages, newest first.' })
  packages(@C() ctx: Ctx, @Args() args: LookupKeyPageArgs) {
    return services(ctx).offerings.packages(ctx, args);
  }

  @Mutation(() => Package)
  createPackage(@C() ctx: Ctx, @Arg('input') input: CreatePackageInput) {
    return services(ctx).offerings.createPackage(ctx, input);
  }

  @Mutation(() => Package, {
    description: 'Links products to the package; linking a product already linked changes nothing.',
  })
  linkPackageProducts(
    @C() ctx: Ctx,
    @Arg('packageId', () => ID) packageId: string,
    @Arg('input') input: LinkPackageProductsInput,
  ) {
    return services(ctx).offerings.linkPackageProducts(ctx, packageId, input);
  }

  @FieldResolver(() => [ID], { description: 'Linked products, oldest first.' })
  productIds(@C() ctx: Ctx, @Root() pkg: Package) {
    return productIdsOf(ctx, pkg);
  }

  @FieldResolver(() => [OfferingProduct], { description: PRODUCTS })
  products(@C() ctx: Ctx, @Root() pkg: Package) {
    return productsOf(ctx, pkg);
  }
}

/** The same fields on a package as an offering lists it. */
@Resolver(() => OfferingPackage)
export class OfferingPackageResolver {
  @FieldResolver(() => [ID], { description: 'Linked products, oldest first.' })
  productIds(@C() ctx: Ctx, @Root() pkg: OfferingPackage) {
    return productIdsOf(ctx, pkg);
  }

  @FieldResolver(() => [OfferingProduct], { description: PRODUCTS })
  products(@C() ctx: Ctx, @Root() pkg: OfferingPackage) {
    return productsOf(ctx, pkg);
  }
}

@Resolver(() => Paywall)
export class PaywallResolver {
  @Query(() => Paywall)
  paywall(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).offerings.paywall(ctx, id);
  }

  @Query(() => PaywallConnection, { description: 'Paywalls, newest first.' })
  paywalls(@C() ctx: Ctx, @Args() args: PaywallsArgs) {
    return services(ctx).offerings.paywalls(ctx, args);
  }

  @Mutation(() => Paywall, { description: 'One paywall per offering: a second answers paywall_exists.' })
  createPaywall(@C() ctx: Ctx, @Arg('input') input: CreatePaywallInput) {
    return services(ctx).offerings.createPaywall(ctx, input);
  }
}

export const offeringResolvers: ClassType[] = [
  OfferingResolver,
  PackageResolver,
  OfferingPackageResolver,
  PaywallResolver,
];

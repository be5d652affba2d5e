import { DeferMode, Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject } from '../../core/scalars';
import { BillingFrequency, Price, Product, ProductStatus, ProductType, TrialEndAction, UsageRate } from '../catalog';

/**
 * The presentation layer (docs/growth.md): an offering is an ordered set of packages, a package bundles products
 * (monthly, annual, lifetime...), a paywall is the layout one offering is shown with. Exactly one offering per merchant
 * and mode may be current: it is what resolve serves when no experiment decides otherwise.
 */

export enum PaywallTemplate {
  SIMPLE = 'simple',
  FEATURE_COMPARISON = 'feature_comparison',
  SLIDING_CARDS = 'sliding_cards',
}
registerEnumType(PaywallTemplate, { name: 'PaywallTemplate', description: 'The layout a paywall is drawn with.' });

@Entity({ tableName: 'offerings' })
@Unique({ name: 'offerings_merchant_id_mode_lookup_key_unique', properties: ['merchantId', 'mode', 'lookupKey'] })
// At most one current offering per merchant and mode, whatever races (the service also serialises the switch).
@Index({
  name: 'offerings_one_current',
  expression: 'create unique index "offerings_one_current" on "offerings" ("merchant_id", "mode") where "is_current"',
})
@ObjectType({ description: 'An ordered set of packages shown to customers; one per merchant and mode is current.' })
export class Offering extends TenantEntity {
  @Field()
  get object(): string {
    return 'offering';
  }

  @Field({ description: "The merchant's own identifier, unique per merchant and mode." })
  @Property({ length: 200 })
  lookupKey!: string;

  @Field() @Property({ length: 255 }) name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;

  @Field({ description: 'Served by resolve when no experiment assigns another offering; one per merchant and mode.' })
  @Property({ default: false })
  isCurrent: boolean = false;

  @Field(() => JSONObject) @Property({ type: 'jsonb' }) metadata: Record<string, string> = {};

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** A package's own fields: the stored record (Package) and a package as an offering lists it (OfferingPackage). */
@ObjectType()
export abstract class PackageFields extends TenantEntity {
  @Field()
  get object(): string {
    return 'package';
  }

  @Field({
    description: "The merchant's own identifier (e.g. monthly, annual, lifetime), unique per merchant and mode.",
  })
  @Property({ length: 200 })
  lookupKey!: string;

  @Field() @Property({ length: 255 }) name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;
}

@Entity({ tableName: 'packages' })
@Unique({ name: 'packages_merchant_id_mode_lookup_key_unique', properties: ['merchantId', 'mode', 'lookupKey'] })
@ObjectType({ description: 'A customer-facing bundle of products (for example monthly, annual or lifetime).' })
export class Package extends PackageFields {}

/** A package as an offering lists it: its fields and its place in the offering (0 first). */
@ObjectType({ description: 'A package in an offering, at its position (0 first).' })
export class OfferingPackage extends PackageFields {
  @Field(() => Int, { description: 'Place in the offering, 0 first; positions are dense (0..n-1).' })
  position!: number;
}

/**
 * A package's place in an offering. Positions stay dense (0..n-1): attaching shifts the packages after it, moving
 * shifts the ones between. The position constraint is checked at commit, so a shift is one statement.
 */
@Entity({ tableName: 'offering_packages' })
@Unique({ name: 'offering_packages_offering_id_package_id_unique', properties: ['offeringId', 'packageId'] })
@Unique({
  name: 'offering_packages_offering_id_position_unique',
  properties: ['offeringId', 'position'],
  deferMode: DeferMode.INITIALLY_DEFERRED,
})
export class OfferingPackageLink extends TenantEntity {
  @ManyToOne(() => Offering, { mapToPk: true, fieldName: 'offering_id' }) offeringId!: string;
  @ManyToOne(() => Package, { mapToPk: true, fieldName: 'package_id' }) packageId!: string;
  @Property() position!: number;
}

/** A product in a package (linking is idempotent: one row per package and product). */
@Entity({ tableName: 'package_products' })
@Unique({ name: 'package_products_package_id_product_id_unique', properties: ['packageId', 'productId'] })
export class PackageProductLink extends TenantEntity {
  @ManyToOne(() => Package, { mapToPk: true, fieldName: 'package_id' }) packageId!: string;
  @ManyToOne(() => Product, { mapToPk: true, fieldName: 'product_id' }) productId!: string;
}

@Entity({ tableName: 'paywalls' })
// One paywall per offering, whatever races: a second answers 409 paywall_exists.
@Unique({ name: 'paywalls_merchant_id_mode_offering_id_unique', properties: ['merchantId', 'mode', 'offeringId'] })
@ObjectType({ description: 'The layout and visual configuration one offering is shown with.' })
export class Paywall extends TenantEntity {
  @Field()
  get object(): string {
    return 'paywall';
  }

  @Field() @Property({ length: 255 }) name!: string;

  @Field(() => ID)
  @ManyToOne(() => Offering, { mapToPk: true, fieldName: 'offering_id' })
  offeringId!: string;

  @Field(() => PaywallTemplate) @Enum({ items: () => PaywallTemplate }) template!: PaywallTemplate;

  @Field(() => JSONObject, { description: 'Free-form visual configuration (at most 16 KiB as JSON).' })
  @Property({ type: 'jsonb' })
  config: Record<string, unknown> = {};
}

/**
 * A plan as an offering shows it: the catalog's plan fields (REST: the same shape as `GET /plans/{id}`) with its prices
 * and default price as plain values, read once with the offering. Plain on purpose: resolve serves one shared,
 * cached copy, and its answer is computed without a resolver call or a promise per field (offering.cache.ts).
 */
@ObjectType({ description: "A plan in an offering's package: the catalog's plan with its prices." })
export class OfferingPlan {
  @Field(() => ID) id!: string;
  @Field() object!: string;
  @Field(() => ID) productId!: string;
  @Field() name!: string;
  @Field(() => BillingFrequency, { nullable: true }) billingFrequency!: BillingFrequency | null;
  @Field(() => Int) billingInterval!: number;
  @Field(() => Int) trialPeriodDays!: number;
  @Field(() => TrialEndAction) trialEndAction!: TrialEndAction;
  @Field(() => Int, { nullable: true }) maxCycles!: number | null;
  @Field() livemode!: boolean;
  @Field(() => DateTime) createdAt!: Date;
  @Field(() => [Price], { description: 'All prices of the plan, oldest first.' }) prices!: Price[];
  @Field(() => Price, {
    nullable: true,
    description: "The default price in the merchant's reporting currency, else the oldest default price.",
  })
  defaultPrice!: Price | null;
  @Field(() => [UsageRate], {
    description: 'Its usage rates (per unit of a usage event type, billed in arrears), oldest first.',
  })
  usageRates!: UsageRate[];
}

/** A product as an offering shows it: the catalog's product fields (REST: as `GET /products/{id}`) with its plans. */
@ObjectType({ description: "A product in an offering's package: the catalog's product with its plans and prices." })
export class OfferingProduct {
  @Field(() => ID) id!: string;
  @Field() object!: string;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field(() => ProductType) type!: ProductType;
  @Field(() => ProductStatus) status!: ProductStatus;
  @Field(() => ID, { nullable: true }) productFamilyId!: string | null;
  @Field(() => DateTime) updatedAt!: Date;
  @Field() livemode!: boolean;
  @Field(() => DateTime) createdAt!: Date;
  @Field(() => [OfferingPlan], { description: 'The plans, oldest first.' }) plans!: OfferingPlan[];
}

/** The experiment that decided a resolve's offering (docs/growth.md: resolve). */
@ObjectType({ description: "The experiment arm a resolve's offering came from." })
export class ResolvedExperiment {
  @Field(() => ID) experimentId!: string;
  @Field(() => ID) variantId!: string;
  @Field() variantKey!: string;
}

/** What resolve answers: the offering (and paywall) to show this customer now, and the experiment arm if any. */
@ObjectType({
  description: 'The offering and paywall to show one customer, and the experiment that chose them, if any.',
})
export class OfferingResolution {
  @Field(() => ID) customerId!: string;
  @Field(() => Offering, {
    nullable: true,
    description: "The experiment variant's offering, else the current offering, else null.",
  })
  offering!: Offering | null;
  @Field(() => Paywall, { nullable: true }) paywall!: Paywall | null;
  @Field(() => ResolvedExperiment, { nullable: true }) experiment!: ResolvedExperiment | null;
}

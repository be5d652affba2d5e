import { BigIntType, Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Mode, TenantEntity } from '../../core/entity';
import { DateTime, JSONObject, Money } from '../../core/scalars';
import type { Provider } from '../providers';

export enum ProductType {
  SUBSCRIPTION = 'subscription',
  ONE_TIME = 'one_time',
}
export enum ProductStatus {
  ACTIVE = 'active',
  INACTIVE = 'inactive',
}
export enum BillingFrequency {
  DAILY = 'daily',
  WEEKLY = 'weekly',
  MONTHLY = 'monthly',
  YEARLY = 'yearly',
}
export enum TrialEndAction {
  START_SUBSCRIPTION = 'start_subscription',
  CANCEL_SUBSCRIPTION = 'cancel_subscription',
}
registerEnumType(ProductType, { name: 'ProductType' });
registerEnumType(ProductStatus, { name: 'ProductStatus' });
registerEnumType(BillingFrequency, { name: 'BillingFrequency' });
/**
 * How a price's amount relates to GST (docs/invoices-and-gst.md, "Tax-inclusive prices"): `exclusive` GST is added on
 * top of it; `inclusive` it contains the GST, and its invoices' total is the amount itself.
 */
export enum TaxBehavior {
  EXCLUSIVE = 'exclusive',
  INCLUSIVE = 'inclusive',
}
registerEnumType(TrialEndAction, { name: 'TrialEndAction' });
registerEnumType(TaxBehavior, { name: 'TaxBehavior' });

@Entity({ tableName: 'product_families' })
@ObjectType({ description: 'Groups related products or business lines.' })
export class ProductFamily extends TenantEntity {
  @Field()
  get object(): string {
    return 'product_family';
  }

  @Field()
  @Property()
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;
}

@Entity({ tableName: 'products' })
@ObjectType({ description: 'Something a merchant sells, once or on a schedule.' })
export class Product extends TenantEntity {
  @Field()
  get object(): string {
    return 'product';
  }

  @Field()
  @Property()
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;

  @Field(() => ProductType)
  @Enum({ items: () => ProductType })
  type!: ProductType;

  @Field(() => ProductStatus)
  @Enum({ items: () => ProductStatus })
  status: ProductStatus = ProductStatus.ACTIVE;

  @Field(() => ID, { nullable: true })
  @ManyToOne(() => ProductFamily, { mapToPk: true, nullable: true, fieldName: 'product_family_id', index: true })
  productFamilyId?: string | null;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

@Entity({ tableName: 'plans' })
@ObjectType({ description: 'The recurrence rule of a product: how often and how long it bills.' })
export class Plan extends TenantEntity {
  @Field()
  get object(): string {
    return 'plan';
  }

  @Field(() => ID)
  @ManyToOne(() => Product, { mapToPk: true, fieldName: 'product_id' })
  productId!: string;

  @Field()
  @Property()
  name!: string;

  /** Null for a plan of a one_time product. */
  @Field(() => BillingFrequency, { nullable: true })
  @Enum({ items: () => BillingFrequency, nullable: true })
  billingFrequency?: BillingFrequency | null;

  @Field(() => Int)
  @Property()
  billingInterval: number = 1;

  @Field(() => Int)
  @Property()
  trialPeriodDays: number = 0;

  @Field(() => TrialEndAction)
  @Enum({ items: () => TrialEndAction })
  trialEndAction: TrialEndAction = TrialEndAction.START_SUBSCRIPTION;

  /** Null: bills until cancelled. */
  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  maxCycles?: number | null;

  get isRecurring(): boolean {
    return this.billingFrequency != null;
  }
}

@Entity({ tableName: 'prices' })
// At most one default price per plan and currency, whatever races.
@Index({
  name: 'prices_one_default_per_currency',
  expression:
    'create unique index "prices_one_default_per_currency" on "prices" ("plan_id", "currency") where "is_default"',
})
@ObjectType({ description: 'What a plan costs in one currency. Immutable once created.' })
export class Price extends TenantEntity {
  @Field()
  get object(): string {
    return 'price';
  }

  @Field(() => ID)
  @ManyToOne(() => Plan, { mapToPk: true, fieldName: 'plan_id' })
  planId!: string;

  @Field()
  @Property({ length: 3 })
  currency!: string;

  @Field(() => Money)
  @Property({ type: new BigIntType('number') })
  amount!: number;

  @Field(() => Money)
  @Property({ type: new BigIntType('number') })
  setupFee: number = 0;

  @Field(() => TaxBehavior, {
    description:
      'exclusive: GST is added on top of the amount; inclusive: the amount contains the GST (docs/catalog.md)',
  })
  @Enum({ items: () => TaxBehavior })
  taxBehavior: TaxBehavior = TaxBehavior.EXCLUSIVE;

  @Field()
  @Property()
  isDefault: boolean = false;

  /** Gateway name -> the id registered there; filled by lazy registration, exactly once per gateway. */
  @Field(() => JSONObject)
  @Property({ type: 'jsonb' })
  providerPriceIds: Record<string, string> = {};
}

/**
 * A plan's price for one usage event type in one currency (docs/catalog.md): `unitAmountDecimal` subunits per unit, an
 * exact decimal. Usage is billed in arrears when a billing period closes (subscriptions/usage.billing.ts). Immutable,
 * one per plan, event type and currency.
 */
@Entity({ tableName: 'usage_rates' })
@Unique({ name: 'usage_rates_plan_event_type_currency_unique', properties: ['planId', 'eventType', 'currency'] })
@ObjectType({
  description:
    "A plan's price per unit of one usage event type in one currency, billed in arrears when a period closes.",
})
export class UsageRate extends TenantEntity {
  @Field()
  get object(): string {
    return 'usage_rate';
  }

  @Field(() => ID)
  @ManyToOne(() => Plan, { mapToPk: true, fieldName: 'plan_id' })
  planId!: string;

  @Field({ description: 'The usage event type it prices (event_type of usage events).' })
  @Property({ length: 100 })
  eventType!: string;

  @Field()
  @Property({ length: 3 })
  currency!: string;

  /** numeric in the database, a canonical decimal string here: never a float. */
  @Field({ description: 'Subunits per unit, an exact decimal string (e.g. "0.25": a quarter of a subunit per unit).' })
  @Property({ type: 'decimal', columnType: 'numeric' })
  unitAmountDecimal!: string;
}

/**
 * The catalog's version per merchant and mode, bumped in the same transaction as every catalog write. A cached
 * read is served only while the version it was computed at is still current, so every process sees a write as
 * soon as it commits; no invalidation messages are needed.
 */
@Entity({ tableName: 'catalog_versions' })
export class CatalogVersion {
  @PrimaryKey({ type: 'uuid' }) merchantId!: string;
  @PrimaryKey({ type: 'text' }) mode!: Mode;
  @Property({ type: 'bigint' }) version!: string;
}

/**
 * A price as registered at one gateway for one amount (Stripe Price, Razorpay Plan). Prices are tax-exclusive, but the
 * gateway charges the invoice's total, which depends on the subscription's tax treatment: one registration per
 * (price, provider, gateway amount), made once (catalog.store.ts lockPriceRegistration). The first made for a provider
 * is also `prices.provider_price_ids[provider]` (docs/catalog.md).
 */
@Entity({ tableName: 'gateway_prices' })
export class GatewayPrice {
  @PrimaryKey({ type: 'uuid' }) priceId!: string;
  @PrimaryKey({ type: 'text' }) provider!: Provider;
  /** Subunits (ISO 4217) of the price's currency. */
  @PrimaryKey({ type: new BigIntType('number') }) gatewayAmount!: number;
  @Property({ type: 'uuid' }) merchantId!: string;
  @Enum({ items: () => Mode }) mode!: Mode;
  @Property({ length: 255 }) providerPriceId!: string;
  @Property({ type: 'timestamptz', defaultRaw: 'now()' }) createdAt: Date = new Date();
}

import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { Mode, TenantEntity } from '../../core/entity';
import { DateTime } from '../../core/scalars';
import { Product } from '../catalog';

/**
 * A feature gate (docs/growth.md, entitlement): what a customer may use while one of their `active` or `trialing`
 * subscriptions is to a product linked to it. `lookup_key` is how the merchant's app asks for it.
 */
@Entity({ tableName: 'entitlements' })
@Unique({ name: 'entitlements_lookup_key_unique', properties: ['merchantId', 'mode', 'lookupKey'] })
@ObjectType({
  description: 'A feature gate, granted by active or trialing subscriptions to the products linked to it.',
})
export class Entitlement extends TenantEntity {
  @Field()
  get object(): string {
    return 'entitlement';
  }

  /** Unique per merchant and mode, case-sensitive (as Stripe's lookup keys). */
  @Field({ description: 'Unique per merchant and mode; letters, digits and _ - . : (at most 100).' })
  @Property({ length: 100 })
  lookupKey!: string;

  @Field()
  @Property()
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description?: string | null;
}

/** One product linked to one entitlement; linking again changes nothing (the primary key). */
@Entity({ tableName: 'entitlement_products' })
// The evaluation joins a customer's subscriptions to links by product (entitlement.store.ts).
@Index({ name: 'entitlement_products_product_index', properties: ['merchantId', 'mode', 'productId'] })
export class EntitlementProduct {
  @ManyToOne(() => Entitlement, { primary: true, mapToPk: true, fieldName: 'entitlement_id', deleteRule: 'cascade' })
  entitlementId!: string;
  @ManyToOne(() => Product, { primary: true, mapToPk: true, fieldName: 'product_id' }) productId!: string;
  @Property({ type: 'uuid' }) merchantId!: string;
  @Property({ type: 'text' }) mode!: Mode;
  /** Time-ordered (UUIDv7): `product_ids` lists links in the order they were made. */
  @Property({ type: 'uuid' }) linkId!: string;
  @Property({ type: 'timestamptz', defaultRaw: 'now()' }) createdAt: Date = new Date();
}

/**
 * The entitlement links' version per merchant and mode, bumped in the transaction of every link change: part of the
 * stamp a cached evaluation is checked against (entitlement.cache.ts), so a link change retires cached answers in
 * every process as it commits.
 */
@Entity({ tableName: 'entitlement_versions' })
export class EntitlementVersion {
  @PrimaryKey({ type: 'uuid' }) merchantId!: string;
  @PrimaryKey({ type: 'text' }) mode!: Mode;
  @Property({ type: 'bigint' }) version!: string;
}

/** One gate a customer holds now (docs/growth.md: the evaluation's entries). */
@ObjectType({ description: 'An entitlement the customer holds through one or more active or trialing subscriptions.' })
export class CustomerEntitlement {
  @Field(() => ID) entitlementId!: string;
  @Field() lookupKey!: string;
  @Field() name!: string;
  @Field(() => [ID], { description: 'The active or trialing subscriptions granting it, oldest first.' })
  subscriptionIds!: string[];
  @Field(() => DateTime, {
    nullable: true,
    description: 'The latest end of the current period (of the trial, while trialing) among those subscriptions.',
  })
  expiresAt!: Date | null;
}

/** `GET /subscriptions/customer/{customer_id}/entitlements`: every gate the customer holds now. */
@ObjectType({ description: "The customer's entitlements across their active and trialing subscriptions." })
export class CustomerEntitlements {
  @Field(() => ID) customerId!: string;
  @Field(() => [CustomerEntitlement], { description: 'Sorted by lookup_key.' })
  entitlements!: CustomerEntitlement[];
}

import { Entity, Property, Unique } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject } from '../../core/scalars';

/**
 * A merchant's customer, one per e-mail address in each mode: made with `createCustomer` (POST /v1/customers), or found
 * or created by e-mail by a payment or subscription (docs/payments.md, "Customers").
 */
@Entity({ tableName: 'customers' })
@Unique({ properties: ['merchantId', 'mode', 'email'] })
@ObjectType({ description: 'A customer of the merchant: made before any purchase, or found or created by e-mail.' })
export class Customer extends TenantEntity {
  @Field()
  get object(): string {
    return 'customer';
  }

  /** Stored lower-case: e-mail addresses match without regard to case. */
  @Field()
  @Property()
  email!: string;

  @Field(() => String, { nullable: true })
  @Property({ nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ nullable: true })
  phone?: string | null;

  /** 2-digit GST state code (place of supply). */
  @Field(() => String, { nullable: true })
  @Property({ length: 2, nullable: true })
  stateCode?: string | null;

  @Field(() => String, { nullable: true })
  @Property({ length: 15, nullable: true })
  gstin?: string | null;

  /** Postal address as one text (at most 500 characters), printed as the recipient's on tax invoices. */
  @Field(() => String, { nullable: true, description: "Postal address, printed as the recipient's on tax invoices" })
  @Property({ type: 'text', nullable: true })
  address?: string | null;

  @Field(() => JSONObject)
  @Property({ type: 'jsonb' })
  metadata: Record<string, string> = {};

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { BaseEntity, Mode } from '../../core/entity';

@Entity({ tableName: 'merchants' })
@ObjectType({ description: 'A seller using Cadence; its secret keys decide the merchant and mode of each request.' })
export class Merchant extends BaseEntity {
  @Field()
  get object(): string {
    return 'merchant';
  }

  @Field()
  @Property()
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ nullable: true })
  gstin?: string | null;

  /** 2-digit GST state code of the merchant's registered place of business. */
  @Field(() => String, { nullable: true })
  @Property({ length: 2, nullable: true })
  stateCode?: string | null;

  @Field()
  @Property({ length: 3 })
  reportingCurrency: string = 'INR';

  /** Null: the server's RATE_LIMIT_PER_SECOND. */
  @Field(() => Int, { nullable: true })
  @Property({ type: 'integer', nullable: true })
  rateLimitPerSecond?: number | null;

  /** GST rate on taxable invoices, in basis points (1800 = 18%). */
  @Field(() => Int)
  @Property({ default: 1800 })
  taxRateBps: number = 1800;

  /** SAC (services accounting code) printed on every invoice line. */
  @Field(() => String, { nullable: true })
  @Property({ length: 8, nullable: true })
  sacCode?: string | null;

  /** Registered address of the supplier, printed on tax invoices (GST rule 46). */
  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  address?: string | null;

  /** Dunning: failed retries before a past_due subscription is halted. */
  @Field(() => Int)
  @Property({ default: 3 })
  maxRetries: number = 3;

  /**
   * The largest recurring INR mandate debit made without the customer's authentication, in paise (docs/india.md):
   * INR 15,000 by default, more for the categories the RBI allows.
   */
  @Field(() => Int)
  @Property({ default: 1_500_000 })
  mandateAfaLimit: number = 1_500_000;

  /**
   * GST e-invoicing (docs/india.md): its INR invoices and credit notes to recipients with a GSTIN are registered with
   * the invoice registration portal at issue.
   */
  @Field()
  @Property({ default: false })
  eInvoicing: boolean = false;
}

/** A secret key, stored as its SHA-256 only; `last4` helps a merchant tell keys apart. */
@Entity({ tableName: 'api_keys' })
@Index({ properties: ['merchantId', 'mode'] })
export class ApiKey extends BaseEntity {
  @ManyToOne(() => Merchant, { mapToPk: true, fieldName: 'merchant_id' })
  merchantId!: string;

  @Enum({ items: () => Mode })
  mode!: Mode;

  @Unique()
  @Property({ length: 64 })
  keyHash!: string;

  @Property({ length: 4 })
  last4!: string;

  /** When set, the key stops working at this time (a rolled key's grace period ends, or it was revoked). */
  @Property({ type: 'timestamptz', nullable: true })
  expiresAt?: Date | null;
}

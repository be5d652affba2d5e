import { BigIntType, Entity, Enum, Index, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, Money } from '../../core/scalars';

export enum PreDebitKind {
  /** The gateway's renewal at the period's (or trial's) end. */
  RENEWAL = 'renewal',
  /** A dunning retry of the open invoice. */
  RETRY = 'retry',
  /** An invoice the service collects from the mandate itself (a plan change's adjustment, usage), held until then. */
  COLLECTION = 'collection',
}
registerEnumType(PreDebitKind, { name: 'PreDebitKind' });

/**
 * A pre-debit notice (docs/india.md): the customer was told, with `invoice.upcoming`, that `amount_due` will be debited
 * from the mandate at `debit_at`, at least 24 hours ahead. One per subscription and debit instant.
 */
@Entity({ tableName: 'pre_debit_notices' })
@Unique({ properties: ['subscriptionId', 'debitAt'] })
@Index({ properties: ['merchantId', 'mode', 'subscriptionId'] })
@ObjectType({ description: 'A pre-debit notice: a debit from the mandate announced at least 24 hours ahead.' })
export class PreDebitNotice extends TenantEntity {
  @Field(() => ID) @Property({ type: 'uuid' }) subscriptionId!: string;
  @Field(() => PreDebitKind) @Enum({ items: () => PreDebitKind }) kind!: PreDebitKind;
  @Field(() => DateTime, { description: 'When the mandate will be debited (next_payment_attempt).' })
  @Property({ type: 'timestamptz' })
  debitAt!: Date;
  @Field(() => Money, {
    description: "What will be debited: the invoice's amount due, with add-ons the renewal carries (Razorpay).",
  })
  @Property({ type: new BigIntType('number') })
  amountDue!: number;
  @Field() @Property({ length: 3 }) currency!: string;
  @Field(() => DateTime, { description: 'When the notice was sent (merchant time).' })
  @Property({ type: 'timestamptz' })
  sentAt!: Date;
  @Field(() => DateTime, {
    nullable: true,
    description: 'When the customer declined this debit in the portal (the subscription was paused before it).',
  })
  @Property({ type: 'timestamptz', nullable: true })
  declinedAt?: Date | null;
}

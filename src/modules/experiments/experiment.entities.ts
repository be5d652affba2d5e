import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { TenantEntity } from '../../core/entity';
import { DateTime, JSONObject } from '../../core/scalars';
import { Customer } from '../customers';

export enum ExperimentStatus {
  DRAFT = 'draft',
  RUNNING = 'running',
  STOPPED = 'stopped',
}
registerEnumType(ExperimentStatus, {
  name: 'ExperimentStatus',
  description: 'draft -> running -> stopped; nothing else.',
});

/** A condition's value: a scalar (equality) or a list of scalars (membership): docs/growth.md, Targeting. */
export type TargetingScalar = string | number | boolean;
export type Targeting = Record<string, TargetingScalar | TargetingScalar[]>;

/**
 * A server-side A/B test of offerings (docs/growth.md): customers who match `targeting` while it runs are bucketed into
 * its variants (experiment.bucketing.ts) and enrolled once, for good (ExperimentEnrolment).
 */
@Entity({ tableName: 'experiments' })
@Index({
  name: 'experiments_running_index',
  expression: `create index "experiments_running_index" on "experiments" ("merchant_id", "mode", "started_at", "id") where "status" = 'running'`,
})
@ObjectType({ description: 'A server-side A/B test of offerings, with its variants.' })
export class Experiment extends TenantEntity {
  @Field()
  get object(): string {
    return 'experiment';
  }

  @Field() @Property({ length: 255 }) name!: string;
  @Field(() => ExperimentStatus) @Enum({ items: () => ExperimentStatus }) status: ExperimentStatus =
    ExperimentStatus.DRAFT;

  @Field(() => JSONObject, {
    description:
      'Conditions on the attributes given to resolve: {"country": "IN"} (equal) or {"platform": ["ios", "android"]} (one of). {} matches everyone.',
  })
  @Property({ type: 'jsonb' })
  targeting: Targeting = {};

  /**
   * Bumped when the traffic split changes while running: enrolments record the version they were bucketed under,
   * so the sample-ratio check compares only the visitors of the current split with it.
   */
  @Property() trafficVersion: number = 1;

  /** Merchant time (the test clock in test mode). */
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) startedAt?: Date | null;
  @Field(() => DateTime, { nullable: true }) @Property({ type: 'timestamptz', nullable: true }) stoppedAt?: Date | null;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** One arm of an experiment: the offering its customers are shown and its share of the buckets. */
@Entity({ tableName: 'experiment_variants' })
@Unique({ properties: ['experimentId', 'key'] })
@ObjectType({ description: 'One arm of an experiment.' })
export class ExperimentVariant extends TenantEntity {
  @Field()
  get object(): string {
    return 'experiment_variant';
  }

  @ManyToOne(() => Experiment, { mapToPk: true, fieldName: 'experiment_id' }) experimentId!: string;
  @Field({ description: 'Stable name used by clients, unique in the experiment.' })
  @Property({ length: 64 })
  key!: string;
  @Field() @Property({ length: 255 }) name!: string;
  /** The offerings module's record (no foreign key: the offerings migration is its own). */
  @Field(() => ID) @Property({ type: 'uuid' }) offeringId!: string;
  @Field(() => Int, { description: 'Whole percent of new customers bucketed here; the variants sum to 100.' })
  @Property()
  trafficPercent!: number;
  @Field() @Property() isControl: boolean = false;
}

/**
 * A customer's sticky assignment to a variant: written once per (experiment, customer), on first resolve, and never
 * changed by later edits of the experiment. `createdAt` (the service's wall time, like the subscription events it is
 * compared with) is the enrolment time that results count conversions from.
 */
@Entity({ tableName: 'experiment_enrolments' })
@Unique({ properties: ['experimentId', 'customerId'] })
export class ExperimentEnrolment extends TenantEntity {
  @ManyToOne(() => Experiment, { mapToPk: true, fieldName: 'experiment_id' }) experimentId!: string;
  @ManyToOne(() => ExperimentVariant, { mapToPk: true, fieldName: 'variant_id' }) variantId!: string;
  @ManyToOne(() => Customer, { mapToPk: true, fieldName: 'customer_id' }) customerId!: string;
  @Property() trafficVersion!: number;
}

import { Field, Float, ID, ObjectType } from 'type-graphql';
import { DateTime, JSONObject, Money } from '../../core/scalars';

/**
 * The answers of the usage API as plain objects (no ORM entities: events are written and read by plain statements
 * of usage.store.ts, and the resolvers hand these objects to GraphQL as they are). Their fields are plain properties
 * read by GraphQL's default resolver (`simpleResolvers`): type-graphql would otherwise wrap each one in a resolver of
 * its own, run for every field of every object (13,000 times for a batch's answer).
 */

@ObjectType({
  description: 'A usage event as stored, with the billing period it was counted in (REST object `usage_event`).',
  simpleResolvers: true,
})
export class UsageEvent {
  @Field(() => ID) id!: string;
  @Field() object!: 'usage_event';
  @Field(() => ID) subscriptionId!: string;
  @Field() eventType!: string;
  @Field(() => Float) quantity!: number;
  @Field() unit!: string;
  @Field(() => JSONObject) metadata!: Record<string, string>;
  @Field(() => DateTime) timestamp!: Date;
  @Field(() => DateTime, { description: 'Start of the billing period the event was counted in.' })
  billingPeriodStart!: Date;
  @Field(() => DateTime, { description: 'End (exclusive) of the billing period the event was counted in.' })
  billingPeriodEnd!: Date;
  @Field(() => String, { nullable: true, description: 'The body idempotency_key, when one was given.' })
  idempotencyKey!: string | null;
  @Field({ description: 'True for live-mode records, false for test mode.' }) livemode!: boolean;
  @Field(() => DateTime) createdAt!: Date;
}

@ObjectType({ description: 'The events of a batch, in input order.', simpleResolvers: true })
export class UsageEventList {
  @Field() object!: 'list';
  @Field(() => [UsageEvent]) data!: UsageEvent[];
}

@ObjectType({ description: "One event type's usage in one billing period of a subscription.", simpleResolvers: true })
export class UsageAggregation {
  @Field(() => ID, { description: 'Stable for a (subscription, billing period, event type).' }) id!: string;
  @Field() object!: 'usage_aggregation';
  @Field(() => DateTime) billingPeriodStart!: Date;
  @Field(() => DateTime) billingPeriodEnd!: Date;
  @Field() eventType!: string;
  @Field(() => Float, { description: 'The exact sum as a JSON number (nearest double of totalQuantityDecimal).' })
  totalQuantity!: number;
  @Field({
    description:
      'The exact sum as a decimal string (PostgreSQL numeric, no trailing zeros), e.g. "1" for ten events of 0.1.',
  })
  totalQuantityDecimal!: string;
  @Field() unit!: string;
  @Field(() => Money, { description: 'Events counted.' }) eventCount!: number;
}

@ObjectType({
  description: "A subscription's usage per billing period and event type, newest period first, then event type.",
  simpleResolvers: true,
})
export class UsageSummary {
  @Field() object!: 'usage_summary';
  @Field(() => ID) subscriptionId!: string;
  @Field(() => [UsageAggregation]) aggregations!: UsageAggregation[];
}

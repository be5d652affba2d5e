import { Field, Float, Int, ObjectType } from 'type-graphql';
import { DateTime } from '../../core/scalars';
import { AnalyticsInterval } from './analytics.window';

@ObjectType({
  description: "One period of a cohort's retention: how many of its customers were paying at the period's end.",
})
export class CohortPeriod {
  @Field(() => Int, { description: "0 is the cohort's own period, 1 the next, and so on." }) period!: number;
  @Field(() => DateTime) periodStart!: Date;
  @Field(() => DateTime, {
    description: "When retention was measured: the period's end, or the merchant's now for the period still running.",
  })
  periodEnd!: Date;
  @Field(() => Int, {
    description: "The cohort's customers with a subscription counted in MRR (in this currency) at periodEnd.",
  })
  activeCustomers!: number;
  @Field(() => Float, {
    nullable: true,
    description: "activeCustomers / the cohort's customers; null for a cohort without customers.",
  })
  rate!: number | null;
}

@ObjectType({
  description: 'The customers who first became paying (in this currency) within one period, and their retention since.',
})
export class Cohort {
  @Field(() => DateTime, { description: "The period's start: the 1st 00:00 UTC (month) or Monday 00:00 UTC (week)." })
  cohortStart!: Date;
  @Field(() => DateTime) cohortEnd!: Date;
  @Field(() => Int) customers!: number;
  @Field(() => [CohortPeriod], { description: "Periods 0.. up to the one running at the merchant's now." })
  retention!: CohortPeriod[];
}

@ObjectType({
  description:
    'Customer retention cohorts: customers grouped by the period in which they first had a subscription counted in MRR ' +
    '(their activation, from the MRR movements ledger); a customer is retained in a period when it has a subscription counted in MRR at ' +
    "the period's end. Periods are (start, end]: what happens at a period's exact end counts for it.",
})
export class CohortAnalytics {
  @Field(() => AnalyticsInterval) granularity!: AnalyticsInterval;
  @Field({ description: 'Only subscriptions billed in this currency count (never converted).' }) currency!: string;
  @Field(() => DateTime, { description: "The merchant's now: the running period is measured at it." }) asOf!: Date;
  @Field(() => [Cohort], {
    description:
      'Every period from the one containing `from` to the one containing `to` (at most the running one), oldest first.',
  })
  cohorts!: Cohort[];
}

import { Arg, Ctx as C, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import { cohortsCost } from '../../core/operation-cost';
import type { Ctx } from '../../core/context';
import { services } from '../../services';
import { AnalyticsInterval } from './analytics.window';
import { CohortAnalytics } from './cohorts.types';

/**
 * GraphQL root field `cohorts` (docs/analytics.md); REST GET /v1/analytics/cohorts runs it
 * (rest-shim/routes/analytics-retention.ts).
 */
@Resolver()
export class CohortsResolver {
  @Query(() => CohortAnalytics, {
    description:
      "Customer retention by activation cohort (month or week): the periods overlapping (from, to], default the last 12 ending with the one running at the merchant's now.",
    complexity: cohortsCost,
  })
  cohorts(
    @C() ctx: Ctx,
    @Arg('granularity', () => AnalyticsInterval, { nullable: true, description: 'default MONTH' })
    granularity?: AnalyticsInterval | null,
    @Arg('currency', () => String, {
      nullable: true,
      description: "ISO 4217; default the merchant's reporting currency",
    })
    currency?: string | null,
    @Arg('from', () => String, { nullable: true }) from?: string | null,
    @Arg('to', () => String, { nullable: true }) to?: string | null,
  ) {
    return services(ctx).analytics.cohorts(ctx, { granularity, currency, from, to });
  }
}

export const cohortsResolvers: ClassType[] = [CohortsResolver];

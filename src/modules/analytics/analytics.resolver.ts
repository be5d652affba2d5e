import { Arg, Ctx as C, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { analyticsCost } from '../../core/operation-cost';
import { services } from '../../services';
import { ChurnAnalytics, LtvAnalytics, MrrAnalytics, QuickRatioAnalytics } from './analytics.types';
import { AnalyticsInterval } from './analytics.window';

/**
 * MRR, churn, LTV and quick ratio (GraphQL root fields `mrr`, `churn`, `ltv`, `quickRatio`: docs/analytics.md); the REST routes
 * /v1/analytics/* run these. `from` / `to` are ISO 8601 dates or date-times (analytics.window.ts).
 */
@Resolver()
export class AnalyticsResolver {
  @Query(() => MrrAnalytics, {
    description:
      "MRR at `to` (default the merchant's now) and its movements over (from, to] (default 30 days), with a series by `interval`.",
    complexity: analyticsCost(),
  })
  mrr(
    @C() ctx: Ctx,
    @Arg('currency', () => String, {
      nullable: true,
      description: "ISO 4217; default the merchant's reporting currency",
    })
    currency?: string | null,
    @Arg('from', () => String, { nullable: true }) from?: string | null,
    @Arg('to', () => String, { nullable: true }) to?: string | null,
    @Arg('interval', () => AnalyticsInterval, { nullable: true, description: 'default MONTH' })
    interval?: AnalyticsInterval | null,
  ) {
    return services(ctx).analytics.mrr(ctx, { currency, from, to, interval });
  }

  @Query(() => ChurnAnalytics, {
    description: 'Logo and revenue churn over (from, to] (default the last 30 days), with a series by `interval`.',
    complexity: analyticsCost(),
  })
  churn(
    @C() ctx: Ctx,
    @Arg('currency', () => String, { nullable: true }) currency?: string | null,
    @Arg('from', () => String, { nullable: true }) from?: string | null,
    @Arg('to', () => String, { nullable: true }) to?: string | null,
    @Arg('interval', () => AnalyticsInterval, { nullable: true }) interval?: AnalyticsInterval | null,
  ) {
    return services(ctx).analytics.churn(ctx, { currency, from, to, interval });
  }

  @Query(() => LtvAnalytics, {
    description:
      "LTV, ARPU (at `to`) and expected lifetime from the logo churn over (from, to], scaled to 30 days (default: the 90 days ending at the merchant's now).",
    complexity: analyticsCost('interval', 90),
  })
  ltv(
    @C() ctx: Ctx,
    @Arg('currency', () => String, { nullable: true }) currency?: string | null,
    @Arg('from', () => String, { nullable: true, description: 'Start of the churn window; default `to` less 90 days' })
    from?: string | null,
    @Arg('to', () => String, { nullable: true, description: "End of the churn window; default the merchant's now" })
    to?: string | null,
  ) {
    return services(ctx).analytics.ltv(ctx, { currency, from, to });
  }

  @Query(() => QuickRatioAnalytics, {
    description:
      '(new + expansion MRR) / (contraction + churn MRR) over (from, to] (default the last 30 days), with a series by `interval`.',
    complexity: analyticsCost(),
  })
  quickRatio(
    @C() ctx: Ctx,
    @Arg('currency', () => String, { nullable: true }) currency?: string | null,
    @Arg('from', () => String, { nullable: true }) from?: string | null,
    @Arg('to', () => String, { nullable: true }) to?: string | null,
    @Arg('interval', () => AnalyticsInterval, { nullable: true }) interval?: AnalyticsInterval | null,
  ) {
    return services(ctx).analytics.quickRatio(ctx, { currency, from, to, interval });
  }
}

export const analyticsResolvers: ClassType[] = [AnalyticsResolver];

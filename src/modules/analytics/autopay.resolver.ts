import { Arg, Ctx as C, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { analyticsCost } from '../../core/operation-cost';
import { services } from '../../services';
import { AutopayReport } from './autopay.types';

/**
 * GraphQL root field `autopay` (docs/analytics.md); REST GET /v1/analytics/autopay runs it
 * (rest-shim/routes/analytics-retention.ts).
 */
@Resolver()
export class AutopayResolver {
  @Query(() => AutopayReport, {
    description:
      "Mandate authorisation success over (from, to] (default the 30 days ending at the merchant's now): UPI autopay against card and e-mandate, by bank, with failure reasons; " +
      'with `currency`, only the attempts of subscriptions billed in it (default: every currency).',
    complexity: analyticsCost(),
  })
  autopay(
    @C() ctx: Ctx,
    @Arg('currency', () => String, {
      nullable: true,
      description: 'ISO 4217: only attempts of subscriptions in this currency; default every currency',
    })
    currency?: string | null,
    @Arg('from', () => String, { nullable: true, description: 'ISO 8601 date or date-time' }) from?: string | null,
    @Arg('to', () => String, { nullable: true, description: "ISO 8601 date or date-time; default the merchant's now" })
    to?: string | null,
  ) {
    return services(ctx).analytics.autopay(ctx, { currency, from, to });
  }
}

export const autopayResolvers: ClassType[] = [AutopayResolver];

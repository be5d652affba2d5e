import { Arg, Ctx as C, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { autopay } from './autopay.service';
import { AutopayReport } from './autopay.types';

/** Contract 12 root field `autopay`; REST GET /v1/analytics/autopay runs it (rest-shim/routes/analytics-retention.ts). */
@Resolver()
export class AutopayResolver {
  @Query(() => AutopayReport, {
    description:
      'Mandate authorisation success over (from, to] (default the 30 days ending at the merchant\'s now): UPI autopay against card and e-mandate, by bank, with failure reasons.',
  })
  autopay(
    @C() ctx: Ctx,
    @Arg('from', () => String, { nullable: true, description: 'ISO 8601 date or date-time' }) from?: string | null,
    @Arg('to', () => String, { nullable: true, description: "ISO 8601 date or date-time; default the merchant's now" }) to?: string | null,
  ) {
    return autopay(ctx, { from, to });
  }
}

export const autopayResolvers: Function[] = [AutopayResolver];

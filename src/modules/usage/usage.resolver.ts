import { Arg, Ctx as C, ID, Mutation, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { usageCost } from '../../core/operation-cost';
import { services } from '../../services';
import { IDEMPOTENCY_KEY, StoredResult, withIdempotency } from '../idempotency';
import { ReportUsageBatchInput, ReportUsageInput } from './usage.inputs';
import { UsageEvent, UsageEventList, UsageSummary } from './usage.types';

/** The date fields of an event, turned back into Dates when an Idempotency-Key replay restores the stored answer. */
const DATES = ['timestamp', 'billingPeriodStart', 'billingPeriodEnd', 'createdAt'] as const;
const restoreEvent = (json: unknown): UsageEvent => {
  const e = { ...(json as Record<string, unknown>) };
  for (const k of DATES) e[k] = new Date(e[k] as string);
  return e as unknown as UsageEvent;
};
const storedEvent: StoredResult<UsageEvent> = { store: (v) => v, restore: (json) => restoreEvent(json) };
const storedList: StoredResult<UsageEventList> = {
  store: (v) => v,
  restore: (json) => ({ object: 'list', data: ((json as { data: unknown[] }).data ?? []).map(restoreEvent) }),
};

/** An argument validator that leaves the checks to the service (it takes precedence over the schema's default). */
const checkedByTheService = () => undefined;

@Resolver()
export class UsageResolver {
  @Mutation(() => UsageEvent, {
    description:
      'Reports one usage event (201 over REST). Counted in the billing period holding its timestamp. An idempotencyKey in the input ' +
      'already used answers the first event and counts nothing; the Idempotency-Key header (argument) works as on every other write.',
    complexity: usageCost,
  })
  reportUsage(
    @C() ctx: Ctx,
    // The service checks every field (usage.rules.ts checkEvent: the limits class-validator would check, and more).
    @Arg('input', { validate: false, validateFn: checkedByTheService }) input: ReportUsageInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    return withIdempotency(ctx, idempotencyKey, { operation: 'reportUsage', input, result: storedEvent }, () =>
      services(ctx).usage.report(ctx, input),
    );
  }

  @Mutation(() => UsageEventList, {
    description: 'Reports up to 1,000 usage events at once: all stored, or none (the first bad event names the error).',
    complexity: usageCost,
  })
  reportUsageBatch(
    @C() ctx: Ctx,
    // Not run through class-validator: its nested pass costs more than the rest of a 1,000-event batch's checks. The
    // service checks the size and every field (usage.rules.ts checkEvent: the same limits and more, `events[i].` params).
    @Arg('input', { validate: false, validateFn: checkedByTheService }) input: ReportUsageBatchInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    return withIdempotency(ctx, idempotencyKey, { operation: 'reportUsageBatch', input, result: storedList }, () =>
      services(ctx).usage.reportBatch(ctx, input),
    );
  }

  @Query(() => UsageSummary, {
    description: "A subscription's usage per billing period and event type, newest period first.",
  })
  usageSummary(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) subscriptionId: string) {
    return services(ctx).usage.summary(ctx, subscriptionId);
  }
}

export const usageResolvers: ClassType[] = [UsageResolver];

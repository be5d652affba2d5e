import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantQuery } from '../../core/sql';
import { usageRateSql } from '../catalog';

/**
 * The statement that closes a subscription's usage for billing (subscriptions/usage.billing.ts). It prices the usage
 * module's `usage_aggregates` by the catalog's rates (catalog.store.ts usageRateSql) in one statement on purpose: it
 * runs in every renewal's transaction, and for a subscription with nothing unbilled it must stay one index probe (the
 * aggregates' primary key begins with subscription_id, period_start).
 */

/** One (billing period, event type) of usage closed now: the quantity not billed before, and its price if any. */
export interface ClosedUsage {
  periodStart: Date;
  periodEnd: Date;
  eventType: string;
  unit: string;
  /** Exact decimal text (numeric): the quantity closed now, the slots summed. */
  quantity: string;
  /** The plan's rate for the event type in the subscription's currency, as stored; null: the plan does not price it. */
  unitAmountDecimal: string | null;
  /** round(quantity x rate) half away from zero, in whole subunits (numeric text); null without a rate. */
  amount: string | null;
}

/**
 * Marks every unbilled part of the subscription's usage counted in periods that started before `closingAt` as billed
 * (billed_quantity := total_quantity) and answers it per (period, event type), priced by the plan's rates in `currency`.
 * Call it inside the transaction that issues the invoice: the rows are locked (`for update`, in key order) and updated by
 * this one statement, so an event counted concurrently is either in what this answers (it committed before the lock was
 * taken: the locked read sees it) or waits for the lock and then raises total_quantity above billed_quantity for the
 * next close. Nothing is counted twice or lost. The rows are set to the totals the locked read saw, not to the totals
 * at the update, for the same reason.
 */
export async function closeUnbilledUsage(
  em: EntityManager,
  args: { subscriptionId: string; closingAt: Date; planId: string; currency: string },
): Promise<ClosedUsage[]> {
  const rows = await tenantQuery<{
    period_start: Date | string;
    period_end: Date | string;
    event_type: string;
    unit: string;
    quantity: string;
    unit_amount_decimal: string | null;
    amount: string | null;
  }>(
    em,
    `with due as (
       select a.subscription_id, a.period_start, a.event_type, a.slot, a.period_end, a.unit, a.total_quantity, a.billed_quantity
         from usage_aggregates a
        where {tenant:a} and a.subscription_id = ? and a.period_start < ? and a.total_quantity > a.billed_quantity
        order by a.period_start, a.event_type, a.slot
          for update
     ), closed as (
       update usage_aggregates u set billed_quantity = due.total_quantity
         from due
        where u.subscription_id = due.subscription_id and u.period_start = due.period_start
          and u.event_type = due.event_type and u.slot = due.slot
     )
     select d.period_start, max(d.period_end) as period_end, d.event_type, max(d.unit) as unit,
            trim_scale(sum(d.total_quantity - d.billed_quantity))::text as quantity,
            r.unit_amount_decimal::text as unit_amount_decimal,
            round(sum(d.total_quantity - d.billed_quantity) * r.unit_amount_decimal)::text as amount
       from due d
       ${usageRateSql.leftJoin('r', 'd.event_type')}
      group by d.period_start, d.event_type, r.unit_amount_decimal
      order by d.period_start, d.event_type`,
    [args.subscriptionId, args.closingAt, args.planId, args.currency],
  );
  return rows.map((r) => ({
    periodStart: new Date(r.period_start),
    periodEnd: new Date(r.period_end),
    eventType: r.event_type,
    unit: r.unit,
    quantity: r.quantity,
    unitAmountDecimal: r.unit_amount_decimal,
    amount: r.amount,
  }));
}

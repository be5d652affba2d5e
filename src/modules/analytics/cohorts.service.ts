import type { Ctx } from '../../core/context';
import type { ReportDb } from './analytics.store';
import { AnalyticsInterval, analyticsWindow, merchantNow } from './analytics.window';
import { cohortSteps } from './cohorts.store';
import { Cohort, CohortAnalytics, CohortPeriod } from './cohorts.types';

/**
 * Retention cohorts (docs/analytics.md): the arguments, the cohorts' range, and the answer from one SQL aggregation
 * (cohorts.store.ts).
 *
 * Decisions:
 * - Cohorts are whole periods (calendar months from the 1st, or weeks from Monday, 00:00 UTC): every period
 *   overlapping the window (from, to], at most up to the one running at the merchant's now. Without `from`: the last
 *   12 periods (months or weeks) ending with the one containing `to` (default the merchant's now).
 * - A cohort's customers are those whose first movement that made them paying in `currency` (customer_delta +1,
 *   the earliest) falls within it, whenever that was relative to the window.
 * - Retention runs from period 0 (the cohort's own) to the period running now, which is included and measured at
 *   now (it may still change); cohorts without customers are listed with zero counts and null rates, so the table
 *   has the same rows however the data falls.
 * - Periods are (start, end] as in every analytics answer: what happens at a period's exact end counts for it.
 */

/** Cohorts listed without `from`. */
export const DEFAULT_COHORTS = 12;

/** The start of the bucket holding instant t, buckets being (start, end]: the period of `t - 1 ms` (UTC). */
export function bucketStart(t: Date, unit: AnalyticsInterval): Date {
  const d = new Date(t.getTime() - 1);
  if (unit === AnalyticsInterval.MONTH) return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
  const midnight = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * 86_400_000);
}

/** `start` moved by n whole periods. */
export function addPeriods(start: Date, unit: AnalyticsInterval, n: number): Date {
  if (unit === AnalyticsInterval.MONTH) return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
  return new Date(start.getTime() + n * 7 * 86_400_000);
}

/** Whole periods from `from` to `to` (both period starts). */
function periodsBetween(from: Date, to: Date, unit: AnalyticsInterval): number {
  if (unit === AnalyticsInterval.MONTH)
    return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
  return Math.round((to.getTime() - from.getTime()) / (7 * 86_400_000));
}

export interface CohortsArgs {
  granularity?: AnalyticsInterval | string | null;
  currency?: string | null;
  from?: string | null;
  to?: string | null;
}

/** The cohorts answer, its statement run on `db` (the primary, or the read replica: analytics.service.ts). */
export async function cohorts(ctx: Ctx, db: ReportDb, args: CohortsArgs): Promise<CohortAnalytics> {
  const w = await analyticsWindow(
    ctx,
    { currency: args.currency, from: args.from, to: args.to, interval: args.granularity },
    { intervalParam: 'granularity', defaultDays: 1 },
  );
  const unit = w.interval;
  const now = args.to == null ? w.to : await merchantNow(ctx);
  const running = bucketStart(now, unit);
  const last = w.to.getTime() < now.getTime() ? bucketStart(w.to, unit) : running;
  // The bucket just after `from` (windows are (from, to]); without `from`, the last DEFAULT_COHORTS periods.
  const first =
    args.from != null
      ? bucketStart(new Date(w.from.getTime() + 1), unit)
      : addPeriods(last, unit, -(DEFAULT_COHORTS - 1));
  const out = Object.assign(new CohortAnalytics(), {
    granularity: unit,
    currency: w.currency,
    asOf: now,
    cohorts: [] as Cohort[],
  });
  if (first.getTime() > last.getTime()) return out;
  const periods = [];
  for (let start = first; start.getTime() <= last.getTime(); start = addPeriods(start, unit, 1))
    periods.push({ start, end: addPeriods(start, unit, 1) });
  const steps = await cohortSteps(db, { unit, currency: w.currency, now, cohorts: periods });
  // The statement has a row only where something changed: every period from 0 to the running one, carrying the count.
  let i = 0;
  for (const { start, end: cohortEnd } of periods) {
    const own = [];
    while (i < steps.length && steps[i].cohortStart.getTime() === start.getTime()) own.push(steps[i++]);
    const customers = own.reduce((n, r) => n + r.joined, 0);
    const cohort = Object.assign(new Cohort(), {
      cohortStart: start,
      cohortEnd,
      customers,
      retention: [] as CohortPeriod[],
    });
    let j = 0;
    let active = 0;
    for (let k = 0; k <= periodsBetween(start, running, unit); k++) {
      const periodStart = addPeriods(start, unit, k);
      while (j < own.length && own[j].bucketStart.getTime() <= periodStart.getTime()) active = own[j++].activeCustomers;
      const end = addPeriods(start, unit, k + 1);
      cohort.retention.push(
        Object.assign(new CohortPeriod(), {
          period: k,
          periodStart,
          periodEnd: end.getTime() < now.getTime() ? end : now,
          activeCustomers: active,
          rate: customers > 0 ? active / customers : null,
        }),
      );
    }
    out.cohorts.push(cohort);
  }
  return out;
}

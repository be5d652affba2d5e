import { type ReportDb, reportQuery } from './analytics.store';
import { AnalyticsInterval } from './analytics.window';

/**
 * The retention cohorts statement (docs/analytics.md `GET /analytics/cohorts`), over the MRR movements ledger alone.
 *
 * A customer's paying state in a currency is the running sum of its `customer_delta` (+1 it became paying, -1 it
 * stopped; 0 or 1 at any instant). Its activation is its first +1, and every movement of the customer in the
 * currency carries that instant, `customer_first_at` (migration Migration20261124200500_cohort_instant); its cohort is
 * the bucket of that instant. Buckets are (start, end] as in every analytics answer (analytics.store.ts): an instant
 * at a bucket's exact start belongs to the bucket before, hence the microsecond, and a cohort's customers are those
 * with cohort start < customer_first_at <= cohort end.
 *
 * Retained in period k = paying at the end of period k, so the cohort's customers retained in period k are the sum
 * of their deltas in buckets 0..k: per cohort, the statement sums its customers' deltas by bucket, then runs the sum
 * over the cohort's buckets (buckets where nothing changed carry the last value; the caller fills them in). A
 * customer joins its cohort with its +1 movement at its cohort instant. No row per customer and period is ever
 * made, and nothing is sorted by customer.
 *
 * Cost: per cohort (a few dozen), one index-only range scan of its customers' customer_delta <> 0 movements (the
 * partial index mrr_movements_cohort_index, by cohort instant: a small share of all movements) into an in-memory
 * hash aggregation by bucket (a few dozen groups), then the running sum over those few hundred groups. Grouped per
 * cohort because grouped once by (cohort, bucket) the planner cannot know the buckets are few, expects a group per
 * movement and sorts all of them (on disk, at the default work_mem) instead of hashing. The cohorts come as arrays
 * (the caller's calendar): the planner estimates an unnest of a parameter at 10 rows, where a generate_series of
 * timestamps is 1,000, which costs the plan past jit_above_cost and adds a JIT compilation to every request.
 */
const COHORT_STEPS = `
    with steps as (
      select c.cohort_start, s.bucket, s.delta, s.joined
        from unnest($4::timestamptz[], $5::timestamptz[]) as c(cohort_start, cohort_end)
        cross join lateral (
          select date_trunc($2, (occurred_at - interval '1 microsecond') at time zone 'UTC') as bucket,
                 sum(customer_delta)::int as delta,
                 (count(*) filter (where customer_delta > 0 and occurred_at = customer_first_at))::int as joined
            from mrr_movements
           where {tenant} and currency = $1 and customer_delta <> 0 and occurred_at <= $3
             and customer_first_at > c.cohort_start and customer_first_at <= c.cohort_end
           group by 1
        ) s
    )
    select cohort_start, bucket at time zone 'UTC' as bucket_start, joined, delta,
           (sum(delta) over (partition by cohort_start order by bucket))::int as active_customers
      from steps
     order by cohort_start, bucket`;

export interface CohortStepRow {
  cohortStart: Date;
  bucketStart: Date;
  /** Customers of the cohort activated in this bucket (only its own bucket has any). */
  joined: number;
  /** The sum of the cohort's customer_delta in this bucket. */
  delta: number;
  /** The cohort's customers paying at the bucket's end (the running sum). */
  activeCustomers: number;
}

/**
 * Per cohort (`cohorts`: each one's start and end, in order) and bucket in which one of its customers' paying state
 * changed, up to `now`, ordered by cohort then bucket.
 */
export async function cohortSteps(
  db: ReportDb,
  q: { unit: AnalyticsInterval; currency: string; now: Date; cohorts: { start: Date; end: Date }[] },
): Promise<CohortStepRow[]> {
  const rows = await reportQuery<{
    cohort_start: Date | string;
    bucket_start: Date | string;
    joined: number;
    delta: number;
    active_customers: number;
  }>(db, COHORT_STEPS, [q.currency, q.unit, q.now, q.cohorts.map((c) => c.start), q.cohorts.map((c) => c.end)]);
  return rows.map((r) => ({
    cohortStart: new Date(r.cohort_start),
    bucketStart: new Date(r.bucket_start),
    joined: Number(r.joined),
    delta: Number(r.delta),
    activeCustomers: Number(r.active_customers),
  }));
}

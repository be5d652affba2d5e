import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantQuery } from '../../core/sql';
import { AnalyticsInterval } from './analytics.window';

/**
 * The retention cohorts statement (contract 14 `GET /analytics/cohorts`), over the MRR movements ledger alone.
 *
 * A customer's paying state in a currency is the running sum of its `customer_delta` (+1 it became paying, -1 it
 * stopped; 0 or 1 at any instant). Its activation is its first +1, the ledger's one `new` movement of that customer
 * and currency (mrr-ledger.ts: never two), and its cohort the bucket of that instant. Buckets are (start, end] as in
 * every analytics answer (analytics.store.ts): an instant at a bucket's exact start belongs to the bucket before,
 * hence the microsecond.
 *
 * Retained in period k = paying at the end of period k, so the cohort's customers retained in period k are the sum
 * of their deltas in buckets 0..k: the statement answers, per cohort and bucket, the sum of the cohort's deltas in
 * that bucket and its running sum (buckets where nothing changed carry the last value; the caller fills them in).
 * No row per customer and period is ever made, and no history before the first cohort is read: every delta of a
 * cohort's customer comes at or after its activation.
 *
 * Cost: one index range scan of the customer_delta <> 0 movements from the first cohort on (a partial index,
 * migration Migration20261124200200_mandate_attempts: a small share of all movements), one sort of them by customer
 * (the window that gives each its customer's cohort: the bucket of its activation among them; customers activated
 * before the first cohort have none and drop out) and one hash aggregation. A join of the movements to the
 * activations would do the same, but the planner cannot know the activations are one per customer and chose two
 * sorts and a merge join.
 */
const COHORT_STEPS = `
    with moves as (
      select customer_id, customer_delta, kind = 'new' as activation,
             date_trunc($5, (occurred_at - interval '1 microsecond') at time zone 'UTC') as bucket
        from mrr_movements
       where {tenant} and currency = $1 and customer_delta <> 0 and occurred_at > $2 and occurred_at <= $3
    ),
    cohorted as (
      select customer_delta, activation, bucket, min(bucket) filter (where activation) over (partition by customer_id) as cohort
        from moves
    ),
    steps as (
      select cohort, bucket, sum(customer_delta)::int as delta, (count(*) filter (where activation))::int as joined
        from cohorted
       where cohort <= ($4::timestamptz at time zone 'UTC')
       group by cohort, bucket
    )
    select cohort at time zone 'UTC' as cohort_start, bucket at time zone 'UTC' as bucket_start, joined, delta,
           (sum(delta) over (partition by cohort order by bucket))::int as active_customers
      from steps
     order by cohort, bucket`;

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
 * Per cohort (first .. last cohort start) and bucket in which one of its customers' paying state changed, up to
 * `now`, ordered by cohort then bucket.
 */
export async function cohortSteps(
  em: EntityManager,
  q: { unit: AnalyticsInterval; currency: string; now: Date; firstCohort: Date; lastCohort: Date },
): Promise<CohortStepRow[]> {
  const rows = await tenantQuery<{ cohort_start: Date | string; bucket_start: Date | string; joined: number; delta: number; active_customers: number }>(
    em,
    COHORT_STEPS,
    [q.currency, q.firstCohort, q.now, q.lastCohort, q.unit],
  );
  return rows.map((r) => ({
    cohortStart: new Date(r.cohort_start),
    bucketStart: new Date(r.bucket_start),
    joined: Number(r.joined),
    delta: Number(r.delta),
    activeCustomers: Number(r.active_customers),
  }));
}

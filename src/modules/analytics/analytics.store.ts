import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { Queryable, tenantQuery, tenantQueryAs } from '../../core/sql';

/**
 * The analytics reads over the MRR movements ledger (mrr_movements, written by mrr-ledger.ts) and its daily rollup
 * (mrr_movement_days: per merchant, mode, currency and UTC day, kept by a trigger in the same transaction), each one
 * statement of SQL aggregation. Nothing is loaded row by row, and no answer scans the whole history: whole days come
 * from the rollup (a few thousand rows for three years), the two partial days at a window's ends from the ledger's
 * index (merchant_id, mode, currency, occurred_at) include (kind, amount, subscription_delta, customer_delta,
 * customer_id), index-only.
 *
 * At an instant t: MRR = sum(amount), counted subscriptions = sum(subscription_delta), paying customers =
 * sum(customer_delta), over the movements with occurred_at <= t. A bucket (a, b] holds the movements with
 * a < occurred_at <= b, so the sums over a window equal the change of the state between its ends exactly.
 */

/**
 * Where a report reads (docs/production.md, "A read replica for analytics"): the request's EntityManager (the
 * primary), or the read replica's pool (DATABASE_READ_URL) with the request's merchant and mode, which every
 * statement names through `{tenant}` as on the primary.
 */
export type ReportDb = EntityManager | { replica: Queryable; tenant: TenantParams };

/** SQLSTATE of a standby's query cancelled by a conflict with recovery (the rows it read were being removed). */
const RECOVERY_CONFLICT = '40001';

/**
 * A report's statement where `db` says. On the replica, a statement cancelled by a conflict with the WAL it replays is
 * run once more (it then reads the replayed rows).
 */
export async function reportQuery<R>(db: ReportDb, sql: string, params: unknown[]): Promise<R[]> {
  if (!('replica' in db)) return tenantQuery<R>(db, sql, params);
  try {
    return await tenantQueryAs<R>(db.replica, db.tenant, sql, params);
  } catch (err) {
    if ((err as { code?: unknown }).code !== RECOVERY_CONFLICT) throw err;
    return tenantQueryAs<R>(db.replica, db.tenant, sql, params);
  }
}

/** How a window is cut: calendar months or ISO weeks (UTC), or one bucket for the whole window. */
export type BucketUnit = 'month' | 'week' | 'window';

/** One bucket of a window, with the state at its two ends and what moved inside it (amounts in subunits). */
export interface BucketRow {
  periodStart: Date;
  periodEnd: Date;
  mrrStart: number;
  mrrEnd: number;
  subscriptionsStart: number;
  subscriptionsEnd: number;
  customersStart: number;
  customersEnd: number;
  /** Sums of the movements of each kind, as signed in the ledger (contraction and churn are negative). */
  newMrr: number;
  expansionMrr: number;
  reactivationMrr: number;
  contractionMrr: number;
  churnMrr: number;
  /** Churn movements (subscriptions that stopped being counted). */
  churned: number;
}

/**
 * How a window's rows are put in buckets. A ledger row at `occurred_at` belongs to the bucket (a, b] holding it, so
 * its key is taken from `occurred_at - 1 microsecond` (a movement at a bucket's exact start closes the bucket before
 * it); a day of the rollup, `day` D, holds (D, D + 1 day], so its key is taken from D itself. Calendar buckets are
 * computed on UTC wall time (`timestamp without time zone`), so the session's time zone never matters.
 */
const BUCKETS: Record<BucketUnit, { raw: string; day: string; series: string }> = {
  month: {
    raw: `date_trunc('month', (x.occurred_at - interval '1 microsecond') at time zone 'UTC')`,
    day: `date_trunc('month', d.day)`,
    series: `select g as bucket, g at time zone 'UTC' as cal_start, (g + interval '1 month') at time zone 'UTC' as cal_end
             from generate_series(date_trunc('month', $1::timestamptz at time zone 'UTC'),
                                  $2::timestamptz at time zone 'UTC' - interval '1 microsecond', interval '1 month') g`,
  },
  week: {
    raw: `date_trunc('week', (x.occurred_at - interval '1 microsecond') at time zone 'UTC')`,
    day: `date_trunc('week', d.day)`,
    series: `select g as bucket, g at time zone 'UTC' as cal_start, (g + interval '1 week') at time zone 'UTC' as cal_end
             from generate_series(date_trunc('week', $1::timestamptz at time zone 'UTC'),
                                  $2::timestamptz at time zone 'UTC' - interval '1 microsecond', interval '1 week') g`,
  },
  window: {
    raw: `'-infinity'::timestamp`,
    day: `'-infinity'::timestamp`,
    series: `select '-infinity'::timestamp as bucket, $1::timestamptz as cal_start, $2::timestamptz as cal_end`,
  },
};

/** The day of the rollup holding instant `$n` ((D, D + 1 day]), as UTC wall time. */
const dayOf = (n: number) => `date_trunc('day', ($${n}::timestamptz - interval '1 microsecond') at time zone 'UTC')`;

/** Per-kind sums of ledger rows `x`, in the rollup's columns. */
const RAW_SUMS = `x.amount as net, x.subscription_delta::bigint as subscriptions, x.customer_delta::bigint as customers,
        case when x.kind = 'new' then x.amount else 0 end as new_mrr,
        case when x.kind = 'expansion' then x.amount else 0 end as expansion_mrr,
        case when x.kind = 'reactivation' then x.amount else 0 end as reactivation_mrr,
        case when x.kind = 'contraction' then x.amount else 0 end as contraction_mrr,
        case when x.kind = 'churn' then x.amount else 0 end as churn_mrr,
        case when x.kind = 'churn' then 1 else 0 end::bigint as churned`;
const DAY_SUMS = `d.net, d.subscriptions, d.customers, d.new_mrr, d.expansion_mrr, d.reactivation_mrr, d.contraction_mrr, d.churn_mrr, d.churned`;

/**
 * One statement per bucket size: the state at `from` and the movements of each bucket of (from, to], read from the
 * daily rollup (mrr_movement_days, kept by a trigger on mrr_movements) for whole days and from the ledger itself for
 * the two partial days at the window's ends, so the statement reads a few thousand rows whatever the history's size.
 * $1 from, $2 to, $3 currency.
 */
function bucketStatement(unit: BucketUnit): string {
  const b = BUCKETS[unit];
  const df = dayOf(1);
  const dt = dayOf(2);
  return `with base as (
      select coalesce(sum(s.net), 0) as mrr, coalesce(sum(s.subscriptions), 0) as subs, coalesce(sum(s.customers), 0) as customers from (
        select d.net, d.subscriptions, d.customers from mrr_movement_days d
        where {tenant:d} and d.currency = $3 and d.day < ${df}
        union all
        select x.amount, x.subscription_delta, x.customer_delta from mrr_movements x
        where {tenant:x} and x.currency = $3 and x.occurred_at > ${df} at time zone 'UTC' and x.occurred_at <= $1::timestamptz
      ) s
    ),
    inwin as (
      select ${b.day} as bucket, ${DAY_SUMS} from mrr_movement_days d
      where {tenant:d} and d.currency = $3 and d.day > ${df} and d.day < ${dt}
      union all
      select ${b.raw} as bucket, ${RAW_SUMS} from mrr_movements x
      where {tenant:x} and x.currency = $3 and x.occurred_at > $1::timestamptz
        and x.occurred_at <= least($2::timestamptz, (${df} + interval '1 day') at time zone 'UTC')
      union all
      select ${b.raw} as bucket, ${RAW_SUMS} from mrr_movements x
      where {tenant:x} and x.currency = $3 and x.occurred_at <= $2::timestamptz
        and x.occurred_at > greatest($1::timestamptz, ${dt} at time zone 'UTC', (${df} + interval '1 day') at time zone 'UTC')
    ),
    m as (
      select bucket, sum(net) as net, sum(subscriptions) as subs, sum(customers) as customers,
        sum(new_mrr) as new_mrr, sum(expansion_mrr) as expansion_mrr, sum(reactivation_mrr) as reactivation_mrr,
        sum(contraction_mrr) as contraction_mrr, sum(churn_mrr) as churn_mrr, sum(churned) as churned
      from inwin group by bucket
    ),
    b as (${b.series}),
    running as (
      select b.bucket, greatest(b.cal_start, $1::timestamptz) as period_start, least(b.cal_end, $2::timestamptz) as period_end,
        coalesce(sum(m.net) over upto, 0) as net_to_end, coalesce(m.net, 0) as net,
        coalesce(sum(m.subs) over upto, 0) as subs_to_end, coalesce(m.subs, 0) as subs,
        coalesce(sum(m.customers) over upto, 0) as customers_to_end, coalesce(m.customers, 0) as customers,
        coalesce(m.new_mrr, 0) as new_mrr, coalesce(m.expansion_mrr, 0) as expansion_mrr, coalesce(m.reactivation_mrr, 0) as reactivation_mrr,
        coalesce(m.contraction_mrr, 0) as contraction_mrr, coalesce(m.churn_mrr, 0) as churn_mrr, coalesce(m.churned, 0) as churned
      from b left join m on m.bucket = b.bucket
      window upto as (order by b.bucket rows between unbounded preceding and current row)
    )
    select r.period_start, r.period_end,
      base.mrr + r.net_to_end - r.net as mrr_start, base.mrr + r.net_to_end as mrr_end,
      base.subs + r.subs_to_end - r.subs as subs_start, base.subs + r.subs_to_end as subs_end,
      base.customers + r.customers_to_end - r.customers as customers_start, base.customers + r.customers_to_end as customers_end,
      r.new_mrr, r.expansion_mrr, r.reactivation_mrr, r.contraction_mrr, r.churn_mrr, r.churned
    from running r cross join base
    order by r.bucket`;
}

const STATEMENTS: Record<BucketUnit, string> = {
  month: bucketStatement('month'),
  week: bucketStatement('week'),
  window: bucketStatement('window'),
};

type Num = string | number;
interface RawBucket {
  period_start: Date | string;
  period_end: Date | string;
  mrr_start: Num;
  mrr_end: Num;
  subs_start: Num;
  subs_end: Num;
  customers_start: Num;
  customers_end: Num;
  new_mrr: Num;
  expansion_mrr: Num;
  reactivation_mrr: Num;
  contraction_mrr: Num;
  churn_mrr: Num;
  churned: Num;
}

/** A bigint / numeric sum as a number: sums of subunits stay far below 2^53, and a larger one is an error, not a rounding. */
function int(v: Num): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`analytics: ${v} is not a safe integer`);
  return n;
}

/**
 * The tenant's buckets over (from, to] in `currency` (one statement; at least one bucket when from < to), oldest
 * first; the first starts at `from` and the last ends at `to` (calendar buckets are clipped to the window).
 */
export async function windowBuckets(
  db: ReportDb,
  q: { currency: string; from: Date; to: Date; unit: BucketUnit },
): Promise<BucketRow[]> {
  const rows = await reportQuery<RawBucket>(db, STATEMENTS[q.unit], [
    q.from.toISOString(),
    q.to.toISOString(),
    q.currency,
  ]);
  return rows.map((r) => ({
    periodStart: new Date(r.period_start),
    periodEnd: new Date(r.period_end),
    mrrStart: int(r.mrr_start),
    mrrEnd: int(r.mrr_end),
    subscriptionsStart: int(r.subs_start),
    subscriptionsEnd: int(r.subs_end),
    customersStart: int(r.customers_start),
    customersEnd: int(r.customers_end),
    newMrr: int(r.new_mrr),
    expansionMrr: int(r.expansion_mrr),
    reactivationMrr: int(r.reactivation_mrr),
    contractionMrr: int(r.contraction_mrr),
    churnMrr: int(r.churn_mrr),
    churned: int(r.churned),
  }));
}

/**
 * For a statement of another module that needs a customer's current MRR (experiment results: a visitor's MRR): a
 * scalar subquery answering the MRR of the customer `customerIdSql` (an SQL expression) in the currency of its one
 * `?` parameter, as the ledger has it now: the sum of the customer's movements in that currency, each subscription's
 * MRR decided once by mrr-ledger.ts `monthlyAmount` (docs/analytics.md, rounded once per subscription). So every answer
 * that shows MRR shows the ledger's number: one rule, one rounding. It reads the index (merchant_id, mode,
 * customer_id, currency, occurred_at); its tenant is the enclosing tenant statement's.
 */
export function customerMrrSql(customerIdSql: string): string {
  return `(select coalesce(sum(lm.amount), 0) from mrr_movements lm where {tenant:lm} and lm.customer_id = ${customerIdSql} and lm.currency = ?)`;
}

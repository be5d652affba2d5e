import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { tenantQuery, tenantRows } from '../../core/sql';
import { customerMrrSql } from '../analytics';
import { customerSql } from '../customers';
import { invoiceSql } from '../invoices';
import { COLLECTED_STATUSES, paymentSql } from '../payments';
import { subscriptionSql } from '../subscriptions';
import { ExperimentVariant, Targeting } from './experiment.entities';

/**
 * Every statement on the experiment tables. Two of them read other modules' rows in the same statement, through those
 * modules' SQL pieces: the enrolment's check that the customer is the tenant's (inside the insert, so a resolve costs
 * no extra statement; customer.store.ts customerSql), and the results aggregate, a read-only analytics query over
 * billing data (subscriptions and their events, payments, invoices, the MRR ledger: subscriptionSql, paymentSql,
 * invoiceSql, customerMrrSql) joined to the enrolments in one statement, so the counting happens in the database
 * rather than over rows loaded into the process.
 */

/** A visitor's current MRR in a currency, from the MRR ledger (the analytics store): the MRR every analytics answer shows. */
const VISITOR_MRR = customerMrrSql('en.customer_id');

/** Array parameters as literals: the statement may run on a transaction's connection too. */
const uuidArray = (ids: readonly string[]) => `{${ids.join(',')}}`;

/** The variants of the tenant's experiments `ids`, ordered by id (the bucketing order). */
export function variantsOf(em: EntityManager, experimentIds: readonly string[]): Promise<ExperimentVariant[]> {
  return tenantRows(em, ExperimentVariant, 'experiment_id = any(?::uuid[])', [uuidArray(experimentIds)], {
    orderBy: 'id',
  });
}

export interface CandidateVariant {
  id: string;
  key: string;
  offering_id: string;
  traffic_percent: number;
}

/** A running experiment as assignment sees it, with the customer's enrolment in it, if any. */
export interface Candidate {
  id: string;
  targeting: Targeting;
  traffic_version: number;
  variants: CandidateVariant[];
  enrolled_variant_id: string | null;
}

/**
 * Whether the customer is the tenant's, and every running experiment of the tenant in serving order (started_at, then
 * id) with its variants and the customer's enrolment in it: the one statement a resolve runs when the customer is
 * already enrolled or matches nothing (customers: read only, as in `enrol`). Enrolled experiments come first,
 * oldest enrolment first. No row: no such customer.
 */
export async function runningCandidates(
  em: EntityManager,
  customerId: string,
): Promise<{ customerFound: boolean; candidates: Candidate[] }> {
  const rows = await tenantQuery<Candidate | { id: null }>(
    em,
    `select e.id, e.targeting, e.traffic_version, en.variant_id as enrolled_variant_id,
       (select json_agg(json_build_object('id', v.id, 'key', v.key, 'offering_id', v.offering_id, 'traffic_percent', v.traffic_percent) order by v.id)
          from experiment_variants v where v.experiment_id = e.id) as variants
     from ${customerSql.from('c')}
     left join experiments e on {tenant:e} and e.status = 'running'
     left join experiment_enrolments en on en.experiment_id = e.id and en.customer_id = c.id
     where {tenant:c} and c.id = ?::uuid
     order by en.created_at nulls last, en.id, e.started_at, e.id`,
    [customerId],
  );
  return { customerFound: rows.length > 0, candidates: rows.filter((r): r is Candidate => r.id !== null) };
}

/**
 * Enrols the customer in a variant unless already enrolled in that experiment (the unique (experiment, customer)
 * key decides between concurrent resolves), and only if the customer is the tenant's (customerSql.exists).
 * Answers the variant the customer is enrolled in, null when the customer does not exist.
 */
export async function enrol(
  em: EntityManager,
  e: { experimentId: string; variantId: string; customerId: string; trafficVersion: number },
): Promise<string | null> {
  const inserted = await tenantQuery<{ variant_id: string }>(
    em,
    `insert into experiment_enrolments (id, created_at, merchant_id, mode, experiment_id, variant_id, customer_id, traffic_version)
     select ?, ?, {tenant_values}, ?, ?, ?, ? where ${customerSql.exists('?')}
     on conflict (experiment_id, customer_id) do nothing
     returning variant_id`,
    [uuidv7(), new Date(), e.experimentId, e.variantId, e.customerId, e.trafficVersion, e.customerId],
  );
  if (inserted.length) return inserted[0].variant_id;
  // Lost the race (or enrolled before): a new statement sees the row the winner committed.
  const existing = await tenantQuery<{ variant_id: string }>(
    em,
    'select variant_id from experiment_enrolments where {tenant} and experiment_id = ? and customer_id = ?',
    [e.experimentId, e.customerId],
  );
  return existing[0]?.variant_id ?? null;
}

/** Per-variant counts of an experiment's visitors, as the database adds them up. */
export interface VariantCounts {
  variant_id: string;
  visitors: number;
  /** Visitors enrolled under the current traffic split (the sample-ratio check's sample). */
  current_visitors: number;
  conversions: number;
  trial_starts: number;
  revenue: number;
  mrr: number;
  /** MRR per visitor: mean and sample variance (null below 2 visitors). */
  mrr_mean: number;
  mrr_variance: number | null;
}

/**
 * Results of an experiment per variant, counted in one statement (docs/growth.md). For each visitor
 * (enrolment), against billing rows written at or after the enrolment:
 * - subscribed: a subscription of theirs left `created` for `trialing` or `active` (its start);
 * - trial: that start was into `trialing`;
 * - paid: a one-off payment of theirs created after enrolment was collected;
 * - revenue: what their payments created after enrolment collected (`amount_total`, tax included: one-off payments
 *   and subscriptions' collections alike) less what was returned, plus what subscription invoices issued after
 *   enrolment that no payment names collected (`amount_paid`: invoices paid before collections were payments), in `currency`
 *   only (no conversion; other currencies are not added);
 * - mrr: their current MRR in `currency` as the MRR movements ledger has it (analytics.store.ts customerMrrSql):
 *   subscriptions `active` or `past_due`, each monthly-normalised and rounded once by the ledger's one rule
 *   (mrr-ledger.ts monthlyAmount, docs/analytics.md), so a variant's MRR is whole subunits and adds up to what
 *   GET /analytics/mrr shows for the same customers.
 * Then per variant: visitors, conversions (subscribed or paid), trial starts, sums, and the mean and sample variance
 * of MRR per visitor (numeric arithmetic: exact sums, no float drift).
 */
export async function variantCounts(
  em: EntityManager,
  experimentId: string,
  currency: string,
  trafficVersion: number,
): Promise<VariantCounts[]> {
  const rows = await tenantQuery<Record<string, string | number | null>>(
    em,
    `with visitor as (
       select en.variant_id, en.traffic_version,
         coalesce(st.subscribed, false) as subscribed, coalesce(st.trial, false) as trial,
         ${paymentSql.paidOneOffSince('en.customer_id', 'en.created_at')} as paid,
         ${paymentSql.collectedSince('en.customer_id', 'en.created_at')}
         + ${invoiceSql.subscriptionPaidSince('en.customer_id', 'en.created_at')}
           as revenue,
         ${VISITOR_MRR} as mrr
       from experiment_enrolments en
       left join lateral ${subscriptionSql.startedSince('en.customer_id', 'en.created_at')} st on true
       where {tenant:en} and en.experiment_id = ?
     )
     select variant_id, count(*) as visitors,
       count(*) filter (where traffic_version = ?) as current_visitors,
       count(*) filter (where subscribed or paid) as conversions,
       count(*) filter (where trial) as trial_starts,
       sum(revenue)::bigint as revenue,
       sum(mrr)::bigint as mrr,
       avg(mrr)::float8 as mrr_mean,
       var_samp(mrr)::float8 as mrr_variance
     from visitor group by variant_id`,
    [
      `{${COLLECTED_STATUSES.join(',')}}`,
      `{${COLLECTED_STATUSES.join(',')}}`,
      currency,
      currency,
      currency,
      experimentId,
      trafficVersion,
    ],
  );
  return rows.map((r) => ({
    variant_id: String(r.variant_id),
    visitors: Number(r.visitors),
    current_visitors: Number(r.current_visitors),
    conversions: Number(r.conversions),
    trial_starts: Number(r.trial_starts),
    revenue: Number(r.revenue),
    mrr: Number(r.mrr),
    mrr_mean: Number(r.mrr_mean),
    mrr_variance: r.mrr_variance == null ? null : Number(r.mrr_variance),
  }));
}

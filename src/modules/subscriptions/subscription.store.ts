import type { EntityManager } from '@mikro-orm/postgresql';
import { Mode, TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, Db, systemQuery, tenantQuery, tenantQueryAs, tenantRows } from '../../core/sql';
import { Customer, CustomerDetails, customerByIdCte, customerSql, customerUpsertCte } from '../customers';
import { Merchant, merchantSql } from '../merchants';
import { gatewayEventCte, GatewayEventRow } from '../payments';
import type { SubscriptionPeriodColumn } from '../usage';
import { testClockSql } from '../test-clock';
import { BillingSubscription, SubscriptionEvent } from './subscription.entities';
import { SubscriptionStatus } from './subscription.machine';
import type { FirstMove } from './subscription.lifecycle';
import type { PreDebitKind } from './pre-debit.entities';

/**
 * Every statement on subscriptions, subscription_events and gateway_clock_syncs beyond the ORM's. Other modules
 * read subscriptions through these functions (customers' counts, entitlements), never the tables.
 */

/** Statuses in which a subscription gives the customer the service (entitlements; customers' counts). */
export const PROVISIONED: SubscriptionStatus[] = [SubscriptionStatus.ACTIVE, SubscriptionStatus.TRIALING];
/** Statuses counted in a customer's `active_subscription_count`. */
export const COUNTED: SubscriptionStatus[] = [
  SubscriptionStatus.ACTIVE,
  SubscriptionStatus.TRIALING,
  SubscriptionStatus.PAST_DUE,
];

export type NewSubscription = Omit<
  Pick<
    BillingSubscription,
    | 'id'
    | 'productId'
    | 'planId'
    | 'priceId'
    | 'currency'
    | 'amount'
    | 'setupFee'
    | 'billingFrequency'
    | 'billingInterval'
    | 'trialPeriodDays'
    | 'trialEndAction'
    | 'provider'
    | 'connectionId'
    | 'providerSubscriptionId'
    | 'providerCustomerId'
    | 'checkoutSessionId'
    | 'checkoutUrl'
    | 'successUrl'
    | 'cancelUrl'
    | 'maxCycles'
    | 'couponCode'
    | 'metadata'
    | 'taxTreatment'
    | 'taxRateBps'
    | 'taxBehavior'
    | 'couponId'
    | 'discountPercentBps'
    | 'discountAmountOff'
    | 'discountCycles'
    | 'gatewayDiscounted'
    | 'nextActionAt'
    | 'mandateMaxAmount'
    | 'mandateFrequency'
    | 'mandateValidUntil'
  >,
  never
>;

/**
 * Writes a new subscription in the state of its first move (subscription.lifecycle.ts SubscriptionChange.create) for
 * the customer `customer` (an id, with details to fill in, or details to find or create the tenant's customer by e-mail
 * in the same statement), with the move's audit row, in one statement.
 */
export async function insertSubscription(
  em: EntityManager,
  s: NewSubscription,
  customer: { id: string; fill?: CustomerDetails } | CustomerDetails,
  eventId: string,
  first: FirstMove,
): Promise<BillingSubscription> {
  const cte =
    'email' in customer
      ? customerUpsertCte(customer)
      : customer.fill
        ? customerByIdCte(customer.id, customer.fill)
        : { sql: 'c as (select ?::uuid as id)', params: [customer.id] };
  const rows = await tenantQuery(
    em,
    `with ${cte.sql},
     s as (
       insert into subscriptions (id, created_at, updated_at, merchant_id, mode, customer_id, product_id, plan_id, price_id,
         status, currency, amount, setup_fee, billing_frequency, billing_interval, trial_period_days, trial_end_action,
         provider, connection_id, provider_subscription_id, provider_customer_id, checkout_session_id, checkout_url,
         success_url, cancel_url, cancel_at_period_end, anchor_cycle, cycles_completed, max_cycles, coupon_code, metadata,
         retry_attempt, credit_balance, tax_treatment, tax_rate_bps, tax_behavior, gateway_addons,
         coupon_id, discount_percent_bps, discount_amount_off, discount_cycles, discount_cycles_used, period_discount,
         gateway_discounted, next_action, next_action_at, mandate_max_amount, mandate_frequency, mandate_valid_until)
       select ?, now(), now(), {tenant_values}, c.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
         false, 0, 0, ?, ?, ?::jsonb, 0, 0, ?, ?, ?, '[]'::jsonb, ?, ?, ?, ?, 0, 0, ?,
         'checkout_expiry', ?, ?, ?, ?
       from c
       returning *
     ),
     e as (
       insert into subscription_events (id, created_at, merchant_id, mode, subscription_id, from_state, to_state, event_type, triggered_by, metadata_json)
       select ?, now(), {tenant_values}, s.id, null, s.status, ?, ?, '{}'::jsonb from s
     )
     select * from s`,
    [
      ...cte.params,
      s.id,
      s.productId,
      s.planId,
      s.priceId,
      first.status,
      s.currency,
      s.amount,
      s.setupFee,
      s.billingFrequency,
      s.billingInterval,
      s.trialPeriodDays,
      s.trialEndAction,
      s.provider,
      s.connectionId,
      s.providerSubscriptionId ?? null,
      s.providerCustomerId ?? null,
      s.checkoutSessionId ?? null,
      s.checkoutUrl ?? null,
      s.successUrl,
      s.cancelUrl,
      s.maxCycles ?? null,
      s.couponCode ?? null,
      JSON.stringify(s.metadata ?? {}),
      s.taxTreatment,
      s.taxRateBps,
      s.taxBehavior,
      s.couponId ?? null,
      s.discountPercentBps ?? null,
      s.discountAmountOff ?? null,
      s.discountCycles ?? null,
      s.gatewayDiscounted ?? false,
      s.nextActionAt ?? null,
      s.mandateMaxAmount ?? null,
      s.mandateFrequency ?? null,
      s.mandateValidUntil ?? null,
      eventId,
      first.eventType,
      first.triggeredBy,
    ],
  );
  return em.map(BillingSubscription, rows[0] as never);
}

/** What a gateway event's statement found: whether the event is new, the merchant's clock, and its subscription. */
export interface GatewayEventTarget {
  /** False: (provider, event id) was recorded before (a repeat). */
  fresh: boolean;
  /** The merchant's test-clock offset (0 in live mode): merchant time is the wall clock plus this. */
  clockOffsetMs: number;
  /** The event's subscription, locked for the caller's transaction; null: none of the tenant's, or a repeated event. */
  sub: BillingSubscription | null;
  /** Read in the same statement (the invoice a charge issues needs them): the merchant, and the subscription's customer. */
  merchant: Merchant | null;
  customer: Customer | null;
}

/**
 * Every gateway event about a subscription starts with this one statement (each renewal runs it): the event recorded
 * once per (provider, event id) (payment.store.ts gatewayEventCte), the merchant's test-clock offset, and the event's
 * subscription locked for the caller's transaction, found by our id, else the gateway's subscription id, else the
 * checkout session, with its merchant and customer. A repeated event locks nothing. The event is recorded before the
 * subscription is locked (the lock's condition reads `ge`), as two statements did it: two deliveries of one event at
 * once queue on the event's row, never on each other crosswise.
 */
export async function recordEventAndLockSubscription(
  em: EntityManager,
  tenant: TenantParams,
  record: GatewayEventRow,
  by: { id: string | null; providerSubscriptionId: string | null; checkoutSessionId: string | null },
): Promise<GatewayEventTarget> {
  const ge = gatewayEventCte(record);
  const [row] = await tenantQueryAs<Record<string, unknown>>(
    em,
    tenant,
    `with ${ge.sql},
     found as (
       select id from (
         select id, 1 as k from subscriptions where {tenant} and id = ?::uuid
         union all select id, 2 from subscriptions where {tenant} and provider_subscription_id = ?
         union all select id, 3 from subscriptions where {tenant} and checkout_session_id = ?
       ) f order by k limit 1
     ),
     s as materialized (select * from subscriptions where id = (select id from found) and exists (select from ge) for update)
     select (select count(*) from ge)::int as fresh, ${testClockSql.offsetMs('m.id', '?::text')}::float8 as clock_offset_ms,
       ${aliasedColumns(em, BillingSubscription, 's')}, ${aliasedColumns(em, Merchant, 'm')}, ${aliasedColumns(em, Customer, 'c')}
     from ${merchantSql.from('m')} left join s on true ${customerSql.leftJoin('c', 's.customer_id')}
     where m.id = ?`,
    [...ge.params, by.id, by.providerSubscriptionId, by.checkoutSessionId, tenant.mode, tenant.merchantId],
  );
  if (!row) throw new Error(`gateway event: merchant ${tenant.merchantId} not found`);
  const [s, m, c] = ['s', 'm', 'c'].map((alias) => aliasedPart(row, alias) as never);
  return {
    fresh: Number(row.fresh) > 0,
    clockOffsetMs: Number(row.clock_offset_ms),
    sub: s ? em.map(BillingSubscription, s) : null,
    merchant: m ? em.map(Merchant, m) : null,
    customer: c ? em.map(Customer, c) : null,
  };
}

/** A subscription's audit trail, oldest first. */
export function eventsOf(em: EntityManager, subscriptionId: string): Promise<SubscriptionEvent[]> {
  return tenantRows(em, SubscriptionEvent, 'subscription_id = ?', [subscriptionId], { orderBy: 'id' });
}

/** How many subscriptions in `statuses` each customer of a page has (one indexed statement). */
export async function countByCustomer(
  em: EntityManager,
  customerIds: readonly string[],
  statuses: readonly SubscriptionStatus[] = COUNTED,
): Promise<Map<string, number>> {
  const rows = await tenantQuery<{ customer_id: string; n: string }>(
    em,
    `select customer_id, count(*) as n from subscriptions
     where {tenant} and customer_id = any(?::uuid[]) and status = any(?::text[]) group by customer_id`,
    [`{${customerIds.join(',')}}`, `{${statuses.join(',')}}`],
  );
  return new Map(rows.map((r) => [r.customer_id, Number(r.n)]));
}

/** A customer's subscriptions in `statuses` (default: active or trialing), oldest first: what entitlements build on. */
export function customerSubscriptions(
  em: EntityManager,
  customerId: string,
  statuses: readonly SubscriptionStatus[] = PROVISIONED,
): Promise<BillingSubscription[]> {
  return tenantRows(
    em,
    BillingSubscription,
    'customer_id = ? and status = any(?::text[])',
    [customerId, `{${statuses.join(',')}}`],
    {
      orderBy: 'id',
    },
  );
}

/** Subscriptions of a connection that have not ended (a connection in use cannot be deleted). */
export async function openSubscriptionsOfConnection(em: EntityManager, connectionId: string): Promise<number> {
  const [row] = await tenantQuery<{ n: string }>(
    em,
    `select count(*) as n from subscriptions where {tenant} and connection_id = ? and status not in ('cancelled', 'completed')`,
    [connectionId],
  );
  return Number(row?.n ?? 0);
}

/** Merchant time of a subscription row's tenant, in SQL (the test-clock offset in test mode). */
const MERCHANT_NOW = `now() + ${testClockSql.offsetMs('s.merchant_id', 's.mode')} * interval '1 millisecond'`;

/** Scheduled actions due now in merchant time, across tenants (the worker's sweep), oldest first. */
export function dueActions(db: Db, limit: number): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(
    db,
    `select s.id, s.merchant_id, s.mode from subscriptions s
     where s.next_action_at is not null
       and s.next_action_at <= now() + ${testClockSql.maxOffsetMs} * interval '1 millisecond'
       and s.next_action_at <= ${MERCHANT_NOW}
     order by s.next_action_at limit ?`,
    [limit],
  );
}

/**
 * Scheduled actions due now in merchant time, across tenants, as dueActions finds them, for GET /metrics: a backlog the
 * scheduler has not caught up with (on the next-action index).
 */
export async function dueActionCount(db: Db): Promise<number> {
  const [row] = await systemQuery<{ n: number }>(
    db,
    `select count(*)::int as n from subscriptions s
     where s.next_action_at is not null
       and s.next_action_at <= now() + ${testClockSql.maxOffsetMs} * interval '1 millisecond'
       and s.next_action_at <= ${MERCHANT_NOW}`,
  );
  return row?.n ?? 0;
}

const testMode = (merchantId: string): TenantParams => ({ merchantId, mode: Mode.TEST });

/** The earliest scheduled action of a merchant's test mode due by `until` (test-clock advances). */
export async function nextActionAt(db: Db, merchantId: string, until: Date): Promise<Date | null> {
  const [row] = await tenantQueryAs<{ at: Date | null }>(
    db,
    testMode(merchantId),
    'select min(next_action_at) as at from subscriptions where {tenant} and next_action_at <= ?',
    [until],
  );
  return row?.at ? new Date(row.at) : null;
}

/** A merchant's test-mode subscriptions with an action due by `at`, in time order. */
export function actionsDueBy(db: Db, merchantId: string, at: Date, limit: number): Promise<{ id: string }[]> {
  return tenantQueryAs(
    db,
    testMode(merchantId),
    'select id from subscriptions where {tenant} and next_action_at <= ? order by next_action_at, id limit ?',
    [at, limit],
  );
}

/**
 * When the gateway next has something to report for a merchant's test mode after `after` and by `until`: a trial's end
 * or a period's end of a subscription it charges (renewals, period-end cancellations). The test clock asks before each
 * step of an advance: the partial index subscriptions_gateway_next_event_index (migration
 * Migration20261124200400_renewal_indexes) is on exactly this expression and condition, so keep them in step.
 */
export async function nextGatewayEventAt(db: Db, merchantId: string, after: Date, until: Date): Promise<Date | null> {
  const [row] = await tenantQueryAs<{ at: Date | null }>(
    db,
    testMode(merchantId),
    `select min(at) as at from (
       select case when status = 'trialing' then trial_end else current_period_end end as at
       from subscriptions where {tenant} and status in ('trialing', 'active', 'paused') and provider_subscription_id is not null
     ) t where at > ? and at <= ?`,
    [after, until],
  );
  return row?.at ? new Date(row.at) : null;
}

/** How far the gateway sandbox's clock was moved for the merchant (null: never). */
export async function gatewaySyncedTo(db: Db, merchantId: string): Promise<Date | null> {
  const [row] = await systemQuery<{ synced_to: Date }>(
    db,
    'select synced_to from gateway_clock_syncs where merchant_id = ?',
    [merchantId],
  );
  return row ? new Date(row.synced_to) : null;
}

export async function setGatewaySyncedTo(db: Db, merchantId: string, at: Date): Promise<void> {
  await systemQuery(
    db,
    `insert into gateway_clock_syncs (merchant_id, synced_to) values (?, ?)
     on conflict (merchant_id) do update set synced_to = greatest(gateway_clock_syncs.synced_to, excluded.synced_to)`,
    [merchantId, at],
  );
}

/** Subscriptions of every tenant updated since `since`, newest `limit` (the live-update catch-up). */
export function subscriptionsChangedSince(
  db: Db,
  since: Date,
  limit: number,
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(
    db,
    'select id, merchant_id, mode from subscriptions where updated_at >= ? order by updated_at desc limit ?',
    [since, limit],
  );
}

/** When the gateway should report next: the trial's end, else the period's (the overdue index's expression). */
const GATEWAY_DUE = `(case when s.status = 'trialing' then s.trial_end else s.current_period_end end)`;

/**
 * Subscriptions whose gateway report is overdue by `graceMs` (a renewal or trial end passed without its event), for the
 * reconciliation job, the most overdue first; `reconciled_at` keeps one from being read again and again. Merchant
 * time differs by tenant (test clocks): the furthest clock bounds them all for the index, as noticesDue does.
 */
export function overdueAtGateway(
  db: Db,
  graceMs: number,
  limit: number,
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(db, OVERDUE_AT_GATEWAY, [graceMs, graceMs, limit]);
}

/** overdueAtGateway's statement (params: grace ms, grace ms, limit), served by subscriptions_gateway_overdue_index. */
export const OVERDUE_AT_GATEWAY = `select s.id, s.merchant_id, s.mode from subscriptions s
  where s.status in ('trialing', 'active') and s.provider_subscription_id is not null
    and ${GATEWAY_DUE} < now() + (${testClockSql.maxOffsetMs} - ?) * interval '1 millisecond'
    and ${GATEWAY_DUE} < ${MERCHANT_NOW} - ? * interval '1 millisecond'
    and (s.reconciled_at is null or s.reconciled_at < now() - interval '10 minutes')
  order by ${GATEWAY_DUE} limit ?`;

/** Subscriptions with a command whose gateway call went unanswered at least `olderThanMs` ago (across tenants). */
export function unansweredCommands(
  db: Db,
  olderThanMs: number,
  limit: number,
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(
    db,
    `select s.id, s.merchant_id, s.mode from subscriptions s
     where s.pending_outcome is not null and (s.pending_outcome->>'since')::timestamptz < now() - ? * interval '1 millisecond'
     order by s.id limit ?`,
    [olderThanMs, limit],
  );
}

export async function markReconciled(db: Db, tenant: TenantParams, id: string): Promise<void> {
  await tenantQueryAs(db, tenant, 'update subscriptions set reconciled_at = now() where {tenant} and id = ?', [id]);
}

/**
 * SQL pieces for statements of other modules that read the tenant's subscriptions together with their own rows, in
 * one statement on their hot paths (entitlement checks, usage reports) or over a page of rows (experiment results,
 * autopay reports). Each names the subscriptions' tenant with `{tenant...}` (the enclosing tenant statement fills it
 * in). Entitlements and experiments import them; analytics and usage, which subscriptions imports, are given theirs
 * by the composition root (src/container.ts).
 */
export const subscriptionSql = {
  /**
   * The customer's subscriptions that give the service (`active`, `trialing`) as the from-item `<alias>` and its
   * condition (the statement writes `from <from> ... where <where>`): `<alias>` has `id`, `product_id` (its plan's
   * product), `status`, `trial_end` and `current_period_end`. Index: (merchant_id, mode, customer_id, status).
   */
  granting: (alias: string, customerIdSql: string): { from: string; where: string } => ({
    from: `subscriptions ${alias}`,
    where: `{tenant:${alias}} and ${alias}.customer_id = ${customerIdSql}
      and ${alias}.status in ('active', 'trialing')`,
  }),
  /**
   * A digest (text, null when none) of the row versions (`xmin`) of every subscription of the customer, whatever its
   * status: any committed insert, update or delete of one of them changes it.
   */
  rowVersions: (customerIdSql: string): string =>
    `(select md5(string_agg(x.id::text || '.' || x.xmin::text, ',' order by x.id))
                   from subscriptions x where {tenant:x} and x.customer_id = ${customerIdSql})`,
  /**
   * A subquery of one row `(subscribed, trial)` when a subscription of the customer started (left `created` for
   * `trialing` or `active`) at or after `sinceSql` (`trial`: one of them started into `trialing`), else of none.
   */
  startedSince: (customerIdSql: string, sinceSql: string): string =>
    `(
         select true as subscribed, bool_or(se.to_state = 'trialing') as trial
         from subscriptions s join subscription_events se on se.subscription_id = s.id
         where {tenant:s} and s.customer_id = ${customerIdSql} and se.from_state = 'created'
           and se.to_state in ('trialing', 'active') and se.created_at >= ${sinceSql}
         having count(*) > 0
       )`,
  /**
   * `exists (...)`: whether the subscription `subscriptionIdSql` is billed in a currency (placeholder: the currency).
   * One primary-key probe.
   */
  /**
   * A `select` of the tenant's pre-debit notices sent in (from, to], counted by kind (`renewals`, `retries`) and
   * declined by the customer since (`declined`). Placeholders: from, to (and the currency, when `oneCurrency`).
   */
  preDebitCounts: (oneCurrency: boolean): string =>
    `select count(*) filter (where n.kind = 'renewal') as renewals, count(*) filter (where n.kind = 'retry') as retries,
            count(*) filter (where n.kind = 'collection') as collections,
            count(*) filter (where n.declined_at is not null) as declined
       from pre_debit_notices n
      where {tenant:n} and n.sent_at > ? and n.sent_at <= ?${oneCurrency ? ' and n.currency = ?' : ''}`,
  inCurrency: (subscriptionIdSql: string): string =>
    `exists (select 1 from subscriptions s where {tenant:s} and s.id = ${subscriptionIdSql} and s.currency = ?)`,
  /**
   * A `select` of `columns` of the tenant's subscriptions `s` whose id meets `idCondition` (SQL on `s.id`), each
   * column under its name; `merchant_now` is merchant time (the test clock in test mode). What decides where a usage
   * event belongs (usage.store.ts SubscriptionPeriodsSql).
   */
  periods: (idCondition: string, columns: readonly SubscriptionPeriodColumn[]): string =>
    `select ${columns.map((c) => (c === 'merchant_now' ? `${MERCHANT_NOW} as merchant_now` : `s.${c}`)).join(', ')}
     from subscriptions s where {tenant:s} and ${idCondition}`,
};

/**
 * Subscriptions whose next debit from the mandate is due for its pre-debit notice (docs/india.md) and has none: INR,
 * active or trialing into a charge, renewing at the period's (or trial's) end, not ending there. The notice is due
 * PRE_DEBIT_LEAD_HOURS before the debit, or at the period's start when the period is shorter. "Has none" is the
 * subscription's own mark (`noticed_debit_at`, set with the notice), not a join to the notices: a join's plan follows
 * the notices' statistics, which lag while a month-start writes them by the thousand (one sweep ran for over 18
 * minutes at 100,000, planned from statistics taken before any notice existed). The first lines are the partial
 * index's condition (subscriptions_notice_due_index).
 */
const NOTICE_DUE = `
  s.status in ('active', 'trialing') and s.currency = 'INR' and not s.cancel_at_period_end
  and s.provider_subscription_id is not null and s.noticed_debit_at is distinct from s.current_period_end
  and s.current_period_end is not null
  and (s.status <> 'trialing' or s.trial_end_action <> 'cancel_subscription')
  and (s.max_cycles is null or s.cycles_completed < s.max_cycles)`;
const NOTICE_AT = (lead: number) =>
  `greatest(coalesce(s.current_period_start, s.current_period_end), s.current_period_end - interval '${lead} hours')`;
/** NOTICE_AT(lead) <= `at`, with the bound the index serves: a notice is never due before `lead` ahead of the debit. */
const NOTICE_BY = (lead: number, at: string) =>
  `s.current_period_end <= ${at} + interval '${lead} hours' and ${NOTICE_AT(lead)} <= ${at}`;

/**
 * Marks the subscriptions' current debit as announced (NOTICE_DUE), in the notices' transaction, under their row
 * locks. A plain statement, not the ORM's flush: announcing a debit does not change the subscription (`updated_at`).
 */
export async function markNoticed(em: EntityManager, subs: readonly BillingSubscription[]): Promise<void> {
  if (!subs.length) return;
  await tenantQuery(
    em,
    'update subscriptions set noticed_debit_at = current_period_end where {tenant} and id = any(?::uuid[])',
    [`{${subs.map((sub) => sub.id).join(',')}}`],
  );
}

/** A renewal's pre-debit notice as insertNotices writes it. */
export interface NoticeRow {
  id: string;
  createdAt: Date;
  subscriptionId: string;
  kind: PreDebitKind;
  debitAt: Date;
  amountDue: number;
  currency: string;
  sentAt: Date;
}

/**
 * Writes pre-debit notices in one statement of the caller's transaction. The table's unique key (subscription, debit
 * instant) keeps a notice sent before, by any process; answers the subscriptions whose notice this wrote.
 */
export async function insertNotices(em: EntityManager, rows: readonly NoticeRow[]): Promise<Set<string>> {
  if (!rows.length) return new Set();
  const written = await tenantQuery<{ subscription_id: string }>(
    em,
    `insert into pre_debit_notices (id, created_at, merchant_id, mode, subscription_id, kind, debit_at, amount_due, currency, sent_at)
     select x.id, x.created_at, {tenant_values}, x.subscription_id, x.kind, x.debit_at, x.amount_due, x.currency, x.sent_at
     from jsonb_to_recordset(?::jsonb) as x(id uuid, created_at timestamptz, subscription_id uuid, kind text,
       debit_at timestamptz, amount_due bigint, currency text, sent_at timestamptz)
     on conflict (subscription_id, debit_at) do nothing
     returning subscription_id`,
    [
      JSON.stringify(
        rows.map((r) => ({
          id: r.id,
          created_at: r.createdAt,
          subscription_id: r.subscriptionId,
          kind: r.kind,
          debit_at: r.debitAt,
          amount_due: r.amountDue,
          currency: r.currency,
          sent_at: r.sentAt,
        })),
      ),
    ],
  );
  return new Set(written.map((r) => r.subscription_id));
}

/** The earliest pre-debit notice of a merchant's test mode due by `until` (test-clock advances). */
export async function nextNoticeAt(db: Db, merchantId: string, until: Date, lead: number): Promise<Date | null> {
  const [row] = await tenantQueryAs<{ at: Date | null }>(
    db,
    testMode(merchantId),
    `select min(${NOTICE_AT(lead)}) as at from subscriptions s where {tenant:s} and ${NOTICE_DUE}
       and ${NOTICE_BY(lead, '?::timestamptz')}`,
    [until, until],
  );
  return row?.at ? new Date(row.at) : null;
}

/**
 * Notices due by `at` of a merchant's test mode, or (no merchant) due now in merchant time across tenants, earliest
 * debit first: the order of the partial index, so a sweep reads `limit` of them however many are due (ordered by the
 * notice time instead, each sweep sorted every due subscription: 0.5 s per 100 notices at a 100,000 month-start).
 */
export function noticesDue(
  db: Db,
  lead: number,
  limit: number,
  testClock?: { merchantId: string; at: Date },
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  if (testClock)
    return tenantQueryAs(
      db,
      testMode(testClock.merchantId),
      `select s.id, s.merchant_id, s.mode from subscriptions s where {tenant:s} and ${NOTICE_DUE}
         and ${NOTICE_BY(lead, '?::timestamptz')} order by s.current_period_end limit ?`,
      [testClock.at, testClock.at, limit],
    );
  // Merchant time differs by tenant (test clocks); the furthest clock bounds them all for the index.
  return systemQuery(
    db,
    `select s.id, s.merchant_id, s.mode from subscriptions s where ${NOTICE_DUE}
       and s.current_period_end <= now() + ${testClockSql.maxOffsetMs} * interval '1 millisecond' + interval '${lead} hours'
       and ${NOTICE_AT(lead)} <= ${MERCHANT_NOW} order by s.current_period_end limit ?`,
    [limit],
  );
}

import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import type { ServicePool } from '../../core/orm-pool';
import { withClient } from '../../core/pool';
import { Queryable, systemQuery, tenantQuery, tenantQueryAs } from '../../core/sql';
import type { Frequency } from '../../core/billing-period';
import { BILLABLE, EventDraft, MAX_FUTURE_MS } from './usage.rules';

/**
 * Every statement on usage_events (monthly partitions), usage_aggregates, usage_event_keys and usage_units.
 *
 * Ingestion reads the subscription in the same statement that writes the event (one round trip for a single event),
 * through the subscriptions module's SQL piece (SubscriptionPeriodsSql): a read of its status, current period, anchor
 * and cadence only.
 * Sums are PostgreSQL `numeric`: quantities arrive as decimal text and are added by the database, never in JavaScript.
 */

/** Advisory lock class of partition maintenance (the migration that creates the first months takes it too). */
const USAGE_PARTITION_LOCK = 727_120;

/** A subscription column usage statements read (`merchant_now`: merchant time, the test clock in test mode). */
export type SubscriptionPeriodColumn =
  | 'id'
  | 'status'
  | 'current_period_start'
  | 'current_period_end'
  | 'billing_anchor'
  | 'trial_start'
  | 'trial_end'
  | 'billing_frequency'
  | 'billing_interval'
  | 'merchant_now';

/**
 * A `select` of `columns` of the tenant's subscriptions `s` whose id meets `idCondition` (SQL on `s.id`): the
 * subscriptions module's SQL piece (subscription.store.ts subscriptionSql.periods), given by the composition root
 * (usage may not import subscriptions, which imports usage). Each statement below is built once per piece
 * (`statements`).
 */
export type SubscriptionPeriodsSql = (idCondition: string, columns: readonly SubscriptionPeriodColumn[]) => string;

/** The columns that decide billability and billing periods (usage.rules.ts SubscriptionPeriods), and merchant time. */
const PERIOD_COLUMNS: SubscriptionPeriodColumn[] = [
  'status',
  'current_period_start',
  'current_period_end',
  'billing_anchor',
  'trial_start',
  'trial_end',
  'billing_frequency',
  'billing_interval',
  'merchant_now',
];

/**
 * Where an event of the row `v` fits its subscription as it stands, as usage.rules.ts says it: a billable status, at
 * most MAX_FUTURE_MS ahead of merchant time, inside the period `[v.ps, v.pe)`. Both write statements use it.
 */
const FITS = `v.status in (${BILLABLE.map((s) => `'${s}'`).join(', ')})
       and v.ts <= v.merchant_now + interval '${MAX_FUTURE_MS} milliseconds' and v.ts >= v.ps and v.ts < v.pe`;

export interface SubscriptionRow {
  status: string;
  current_period_start: Date | null;
  current_period_end: Date | null;
  billing_anchor: Date | null;
  trial_start: Date | null;
  trial_end: Date | null;
  billing_frequency: Frequency;
  billing_interval: number;
  merchant_now: Date;
}

export interface SingleEvent extends EventDraft {
  id: string;
  /** The billing period, when the caller worked it out; null: the subscription's current period. */
  period: { start: Date; end: Date } | null;
  /** Aggregate row slot, 0..7. */
  slot: number;
}

/**
 * What the single-event statement saw and did. When it wrote the event, only `inserted`, `ts` and the event's period
 * and creation time are set (the subscription's columns are null: nothing to explain, and nothing to parse).
 */
export type SingleOutcome =
  | { inserted: true; ts: Date; period_start: Date; period_end: Date; created_at: Date }
  | (SubscriptionRow & {
      inserted: false;
      /** The event's timestamp (given, or the merchant's now). */
      ts: Date;
      /** The unit already registered for (subscription, event type), as of the statement's snapshot. */
      known_unit: string | null;
    });

/** The subscription's columns of the single-event answer, set only when the event was not written. */
const UNLESS_WRITTEN = [
  'status',
  'current_period_start',
  'current_period_end',
  'billing_anchor',
  'trial_start',
  'trial_end',
  'billing_frequency',
  'billing_interval',
  'merchant_now',
  'known_unit',
]
  .map((c) => `case when e.created_at is null then v.${c} end as ${c}`)
  .join(', ');

/**
 * One event in one statement: reads the subscription (tenant, status, current period), the unit registered for its
 * event type and whether its key was used, and only when the event fits — billable, at most 5 minutes ahead of
 * merchant time, inside the period (the current one, or `period` as given), the same unit, a new key — registers the
 * unit, takes the idempotency key, adds the quantity to the aggregate row `slot` and inserts the event. Answers what
 * it saw, so the caller can tell why not (no row: no such subscription of the tenant). Each write depends on the one
 * before, so a key taken or a unit registered meanwhile by a concurrent event stops the rest. Periods are compared in
 * whole milliseconds, as JavaScript computes them (usage.rules.ts periodFor), so both agree on bounds. A month without
 * its partition fails the whole statement (SQLSTATE 23514), nothing written.
 *
 * Six CTEs, the reads in one row (`v`): each CTE is a step the executor materialises. The commit waits for its WAL
 * flush as every other write does: with `synchronous_commit = off` for these transactions the bench measured ~10%
 * less PostgreSQL CPU per event under 50 connections (commits share flushes anyway) and no more events/s, not worth
 * acknowledged events that a database crash would lose unbilled (bench/README.md, "Usage and analytics").
 */
const reportOneSql = (subs: SubscriptionPeriodsSql) => `with v as (
     select s.*,
            coalesce($2::timestamptz, date_trunc('milliseconds', s.merchant_now)) as ts,
            coalesce($3::timestamptz, date_trunc('milliseconds', s.current_period_start)) as ps,
            coalesce($4::timestamptz, date_trunc('milliseconds', s.current_period_end)) as pe,
            (select unit from usage_units where {tenant} and subscription_id = $1::uuid and event_type = $5::text) as known_unit,
            ($7::text is not null and exists (select 1 from usage_event_keys where {tenant} and key = $7::text)) as key_used
     from (${subs('s.id = $1::uuid', PERIOD_COLUMNS)} offset 0) s
   ),
   ok as (
     select v.ts, v.ps, v.pe, v.known_unit from v
     where ${FITS}
       and (v.known_unit is null or v.known_unit = $6::text) and not v.key_used
   ),
   nu as (
     insert into usage_units (subscription_id, event_type, merchant_id, mode, unit)
     select $1::uuid, $5::text, {tenant_values}, $6::text from ok where ok.known_unit is null
     on conflict do nothing
     returning 1
   ),
   k as (
     insert into usage_event_keys (merchant_id, mode, key, event_id, "timestamp")
     select {tenant_values}, $7::text, $8::uuid, ok.ts from ok
     where $7::text is not null and (ok.known_unit is not null or exists (select 1 from nu))
     on conflict do nothing
     returning 1
   ),
   a as (
     insert into usage_aggregates (subscription_id, period_start, event_type, slot, merchant_id, mode, period_end, unit, total_quantity, event_count)
     select $1::uuid, ok.ps, $5::text, $9::smallint, {tenant_values}, ok.pe, $6::text, $10::numeric, 1 from ok
     where (ok.known_unit is not null or exists (select 1 from nu)) and ($7::text is null or exists (select 1 from k))
     on conflict (subscription_id, period_start, event_type, slot) do update
       set total_quantity = usage_aggregates.total_quantity + excluded.total_quantity,
           event_count = usage_aggregates.event_count + 1, updated_at = now()
     returning 1
   ),
   e as (
     insert into usage_events (id, "timestamp", merchant_id, mode, subscription_id, period_start, period_end, event_type, unit, quantity, metadata, idempotency_key)
     select $8::uuid, ok.ts, {tenant_values}, $1::uuid, ok.ps, ok.pe, $5::text, $6::text, $10::numeric, $11::jsonb, $7::text from ok
     where exists (select 1 from a)
     returning period_start, period_end, created_at
   )
   select e.created_at is not null as inserted, v.ts, e.period_start, e.period_end, e.created_at, ${UNLESS_WRITTEN}
   from v left join e on true`;

/**
 * The single-event statement (reportOneSql) for `e`, on its own (autocommit); null: no such subscription of the tenant.
 * Given the pool and the tenant rather than the request's EntityManager, which would be forked for nothing. The
 * service runs it for the events the group statement (reportGroupSql) left unwritten, and for the rounds after.
 */
export async function reportOne(
  db: Queryable,
  subs: SubscriptionPeriodsSql,
  tenant: TenantParams,
  e: SingleEvent,
): Promise<SingleOutcome | null> {
  const rows = await tenantQueryAs<SingleOutcome>(db, tenant, statements(subs).reportOne, [
    e.subscriptionId,
    e.timestamp?.toISOString() ?? null,
    e.period?.start.toISOString() ?? null,
    e.period?.end.toISOString() ?? null,
    e.eventType,
    e.unit,
    e.key,
    e.id,
    e.slot,
    e.quantity,
    JSON.stringify(e.metadata),
  ]);
  return rows[0] ?? null;
}

/** A single event the group statement wrote: its timestamp, billing period and creation time. */
export interface GroupWritten {
  ts: Date;
  period_start: Date;
  period_end: Date;
  created_at: Date;
}

/** What the group statement reads of each subscription. */
const GROUP_COLUMNS: SubscriptionPeriodColumn[] = [
  'id',
  'status',
  'current_period_start',
  'current_period_end',
  'merchant_now',
];

/**
 * Several single events of one tenant in one statement (usage.service.ts groups the requests that arrive while the
 * last group's statement runs): each event is written only where reportOneSql would write it alone — its subscription
 * billable, its timestamp (given, or the merchant's now) at most 5 minutes ahead and inside the current period, its
 * unit the registered one (or registered now, by the group's first event of that pair), its key new — and the
 * statement answers the events it wrote. Anything else is left unwritten for the caller to run on its own
 * (reportOneSql, which explains it): within a group, a key given twice is taken by one event (the other then answers
 * it, as a retry would) and a new pair with two units keeps the first's. Aggregate rows are summed per slot before
 * the upsert (one row cannot be updated twice by one statement) and, like units and keys, written in a fixed order
 * (concurrent writers lock them in the same order: no deadlock). One commit, one round trip and one plan for many
 * events: a single event's statement cost PostgreSQL five raw one-row INSERTs' worth of CPU, most of it per
 * statement.
 *
 * The events arrive as one JSON array of rows: `[id, subscription, timestamp or null, event type, unit, key or null,
 * slot, quantity as decimal text, metadata]`.
 */
const reportGroupSql = (subs: SubscriptionPeriodsSql) => `with input as (
     select x.ord, (x.r->>0)::uuid as id, (x.r->>1)::uuid as subscription_id, (x.r->>2)::timestamptz as given_ts,
            x.r->>3 as event_type, x.r->>4 as unit, x.r->>5 as key, (x.r->>6)::smallint as slot, (x.r->>7)::numeric as quantity,
            x.r->8 as metadata
     from jsonb_array_elements($1::jsonb) with ordinality as x(r, ord)
   ),
   v as (
     select i.*, s.status, s.merchant_now,
            coalesce(i.given_ts, date_trunc('milliseconds', s.merchant_now)) as ts,
            date_trunc('milliseconds', s.current_period_start) as ps,
            date_trunc('milliseconds', s.current_period_end) as pe,
            (select u.unit from usage_units u where {tenant:u} and u.subscription_id = i.subscription_id and u.event_type = i.event_type) as known_unit,
            (i.key is not null and exists (select 1 from usage_event_keys k where {tenant:k} and k.key = i.key)) as key_used
     from input i
     join (${subs('s.id in (select subscription_id from input)', GROUP_COLUMNS)} offset 0) s on s.id = i.subscription_id
   ),
   ok as (
     select v.* from v
     where ${FITS}
       and (v.known_unit is null or v.known_unit = v.unit) and not v.key_used
   ),
   nu as (
     insert into usage_units (subscription_id, event_type, merchant_id, mode, unit)
     select f.subscription_id, f.event_type, {tenant_values}, f.unit
     from (select distinct on (subscription_id, event_type) subscription_id, event_type, unit from ok
           where known_unit is null order by subscription_id, event_type, ord) f
     order by f.subscription_id, f.event_type
     on conflict do nothing
     returning subscription_id, event_type, unit
   ),
   u as (
     select ok.* from ok where ok.known_unit is not null
     union all
     select ok.* from ok join nu on nu.subscription_id = ok.subscription_id and nu.event_type = ok.event_type and nu.unit = ok.unit
     where ok.known_unit is null
   ),
   k as (
     insert into usage_event_keys (merchant_id, mode, key, event_id, "timestamp")
     select {tenant_values}, u.key, u.id, u.ts from u where u.key is not null order by u.key, u.ord
     on conflict do nothing
     returning event_id
   ),
   w as (select u.* from u where u.key is null or u.id in (select event_id from k)),
   a as (
     insert into usage_aggregates (subscription_id, period_start, event_type, slot, merchant_id, mode, period_end, unit, total_quantity, event_count)
     select w.subscription_id, w.ps, w.event_type, w.slot, {tenant_values}, max(w.pe), max(w.unit), sum(w.quantity), count(*) from w
     group by w.subscription_id, w.ps, w.event_type, w.slot order by w.subscription_id, w.ps, w.event_type, w.slot
     on conflict (subscription_id, period_start, event_type, slot) do update
       set total_quantity = usage_aggregates.total_quantity + excluded.total_quantity,
           event_count = usage_aggregates.event_count + excluded.event_count, updated_at = now()
   ),
   e as (
     insert into usage_events (id, "timestamp", merchant_id, mode, subscription_id, period_start, period_end, event_type, unit, quantity, metadata, idempotency_key)
     select w.id, w.ts, {tenant_values}, w.subscription_id, w.ps, w.pe, w.event_type, w.unit, w.quantity, w.metadata, w.key from w
     returning id, "timestamp", period_start, period_end, created_at
   )
   select e.id::text as id, e."timestamp" as ts, e.period_start, e.period_end, e.created_at from e`;

/**
 * The group statement (reportGroupSql) for `events`, on its own (autocommit): the events it wrote, by id. The rest
 * were not written (the caller runs each on its own). Fails as a whole (nothing written) where one of its events
 * would fail the single statement: a month without its partition, a deadlock.
 */
export async function reportGroup(
  db: Queryable,
  subs: SubscriptionPeriodsSql,
  tenant: TenantParams,
  events: readonly SingleEvent[],
): Promise<Map<string, GroupWritten>> {
  const rows = events.map((e) => [
    e.id,
    e.subscriptionId,
    e.timestamp?.toISOString() ?? null,
    e.eventType,
    e.unit,
    e.key,
    e.slot,
    e.quantity,
    e.metadata,
  ]);
  const written = await tenantQueryAs<GroupWritten & { id: string }>(db, tenant, statements(subs).reportGroup, [
    JSON.stringify(rows),
  ]);
  return new Map(written.map((w) => [w.id, w]));
}

/** A stored event, as read back (a replay by idempotency key). */
export interface EventRow {
  id: string;
  mode: string;
  subscription_id: string;
  event_type: string;
  unit: string;
  /** Decimal text. */
  quantity: string;
  metadata: Record<string, string>;
  timestamp: Date;
  period_start: Date;
  period_end: Date;
  idempotency_key: string | null;
  created_at: Date;
}

const EVENT_COLUMNS = `e.id, e.mode, e.subscription_id, e.event_type, e.unit, e.quantity::text as quantity, e.metadata, e."timestamp",
  e.period_start, e.period_end, e.idempotency_key, e.created_at`;

/**
 * The tenant's events taken by these body idempotency keys. Written as a loop over the keys: each one a probe of the
 * key's primary key, then of its event's in the one partition its timestamp names (`offset 0` keeps the event lookup a
 * subquery run per key: flattened into a join, the planner may again hash a scan of every partition, as it did for
 * `key = any(...)` joined to usage_events: ~570 ms for 1,000 keys at 1,000,000 events, growing with them). This form:
 * 15-20 ms for 1,000 keys, whatever is stored.
 */
export async function eventsByKeys(em: EntityManager, keys: string[]): Promise<EventRow[]> {
  if (!keys.length) return [];
  return tenantQuery<EventRow>(
    em,
    `select ${EVENT_COLUMNS}
     from unnest($1::text[]) as q(key)
     join usage_event_keys k on {tenant:k} and k.key = q.key
     cross join lateral (select * from usage_events e where e.id = k.event_id and e."timestamp" = k."timestamp" offset 0) e`,
    [keys],
  );
}

/** The tenant's subscriptions among `ids` (those that exist), with merchant time. */
export async function subscriptionsFor(
  em: EntityManager,
  subs: SubscriptionPeriodsSql,
  ids: string[],
): Promise<(SubscriptionRow & { id: string })[]> {
  return tenantQuery(em, statements(subs).subscriptionsFor, [ids]);
}

/** Units registered for the event types of these subscriptions. */
export async function unitsFor(
  em: EntityManager,
  subscriptionIds: string[],
): Promise<{ subscription_id: string; event_type: string; unit: string }[]> {
  return tenantQuery(
    em,
    'select subscription_id, event_type, unit from usage_units where {tenant} and subscription_id = any($1::uuid[])',
    [subscriptionIds],
  );
}

/** One event of a batch, checked and placed in its billing period. */
export interface BatchRow {
  id: string;
  timestamp: Date;
  subscriptionId: string;
  periodStart: Date;
  periodEnd: Date;
  eventType: string;
  unit: string;
  quantity: string;
  metadata: Record<string, string>;
  key: string | null;
}

/** A (subscription, event type) the batch uses for the first time, and the unit it brings. */
export interface NewUnit {
  subscriptionId: string;
  eventType: string;
  unit: string;
}

export interface BatchOutcome {
  /** (subscription, event type) pairs registered meanwhile with another unit than the batch's: nothing was written. */
  conflicts: { subscription_id: string; event_type: string; unit: string }[];
  /** Keys of the batch that another request took meanwhile: those events were not written. */
  skippedKeys: string[];
  createdAt: Date;
}

/**
 * The batch statement: registers the units of `pairs` that a written event uses (pairs the batch uses first; their
 * rows are locked in a fixed order, so a unit another request registered meanwhile comes back in `conflicts`), takes
 * the idempotency keys, adds the sums to the aggregate rows of the slot and inserts every event whose key it took
 * (one INSERT of all of them). The inserts return nothing: data-modifying CTEs run to completion whether read or not.
 *
 * Two forms, for how the keys are taken:
 * - `fresh` expects every key to be new: a plain INSERT, so a key already taken (before, or by a concurrent request)
 *   fails the whole statement with a unique violation on usage_event_keys_pkey and nothing is written;
 * - `guarded` takes them with ON CONFLICT DO NOTHING: events whose key is taken are left out of everything, and their
 *   keys come back in `skipped`.
 * ON CONFLICT checks the index before each insert and inserts speculatively: it cost PostgreSQL ~4 us per event,
 * a quarter of the whole statement (bench/README.md, "Usage batch: fresh keys, compiled coercion, leaner mapping"). Batches of new keys are the
 * rule (a retry of a stored batch is the exception), so writeBatch runs `fresh` first and `guarded` only after a
 * taken key failed it.
 *
 * The events arrive as one JSON array of rows (`[id, timestamp, subscription, period start, period end, event type,
 * unit, quantity as decimal text, metadata, key]`): one JSON.stringify instead of ten text arrays, which pg writes out
 * element by element with two escaping passes each (a third of the cost); PostgreSQL's side is the same.
 */
function batchStatement(keys: 'fresh' | 'guarded'): string {
  const guarded = keys === 'guarded';
  return `with input as (
     select (r->>0)::uuid as id, (r->>1)::timestamptz as ts, (r->>2)::uuid as subscription_id, (r->>3)::timestamptz as ps,
            (r->>4)::timestamptz as pe, r->>5 as event_type, r->>6 as unit, (r->>7)::numeric as quantity, r->8 as metadata, r->>9 as key
     from jsonb_array_elements($1::jsonb) r
   ),
   k as (
     insert into usage_event_keys (merchant_id, mode, key, event_id, "timestamp")
     select {tenant_values}, key, id, ts from input where key is not null
     ${guarded ? 'on conflict do nothing\n     returning key' : ''}
   ),
   w as (select input.* from input${guarded ? ' where input.key is null or input.key in (select key from k)' : ''}),
   pairs as (
     select * from unnest($2::uuid[], $3::text[], $4::text[]) as p(subscription_id, event_type, unit)
     where exists (select 1 from w where w.subscription_id = p.subscription_id and w.event_type = p.event_type)
   ),
   nu as (
     insert into usage_units (subscription_id, event_type, merchant_id, mode, unit)
     select subscription_id, event_type, {tenant_values}, unit from pairs order by subscription_id, event_type
     on conflict (subscription_id, event_type) do update set unit = usage_units.unit where usage_units.unit <> excluded.unit
     returning subscription_id, event_type, unit
   ),
   a as (
     insert into usage_aggregates (subscription_id, period_start, event_type, slot, merchant_id, mode, period_end, unit, total_quantity, event_count)
     select subscription_id, ps, event_type, $5::smallint, {tenant_values}, max(pe), max(unit), sum(quantity), count(*) from w
     group by subscription_id, ps, event_type order by subscription_id, ps, event_type
     on conflict (subscription_id, period_start, event_type, slot) do update
       set total_quantity = usage_aggregates.total_quantity + excluded.total_quantity,
           event_count = usage_aggregates.event_count + excluded.event_count, updated_at = now()
   ),
   e as (
     insert into usage_events (id, "timestamp", merchant_id, mode, subscription_id, period_start, period_end, event_type, unit, quantity, metadata, idempotency_key)
     select id, ts, {tenant_values}, subscription_id, ps, pe, event_type, unit, quantity, metadata, key from w
   )
   select (select coalesce(json_agg(json_build_object('subscription_id', nu.subscription_id, 'event_type', nu.event_type, 'unit', nu.unit)), '[]')
             from nu join pairs p using (subscription_id, event_type) where nu.unit <> p.unit) as conflicts,
          ${guarded ? "(select coalesce(array_agg(key), '{}') from input where key is not null and key not in (select key from k))" : "'{}'::text[]"} as skipped,
          now() as created_at`;
}
const WRITE_BATCH = { fresh: batchStatement('fresh'), guarded: batchStatement('guarded') };

/** The `fresh` batch statement met a key already taken (it wrote nothing). */
const isKeyTaken = (err: unknown): boolean => {
  const e = err as { code?: string; constraint?: string };
  return e?.code === '23505' && e.constraint === 'usage_event_keys_pkey';
};

/**
 * Writes a checked batch with one statement (WRITE_BATCH: `fresh`, then `guarded` if a key was taken). With new
 * units it runs in a transaction of its own connection, rolled back when one of them conflicts (nothing kept);
 * without, it is one autocommitted statement and touches no unit row, so concurrent batches of one subscription do
 * not queue on it. The rows' instants are mostly the same few Date objects (a subscription's period, the merchant's
 * now), each written out once.
 */
export async function writeBatch(
  pool: ServicePool,
  tenant: TenantParams,
  rows: BatchRow[],
  newUnits: NewUnit[],
  slot: number,
): Promise<BatchOutcome> {
  type Out = { conflicts: BatchOutcome['conflicts']; skipped: string[]; created_at: Date };
  const events = new Array<unknown[]>(rows.length);
  const isoOf = new Map<Date, string>();
  const iso = (d: Date) => {
    let t = isoOf.get(d);
    if (t === undefined) isoOf.set(d, (t = d.toISOString()));
    return t;
  };
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    events[i] = [
      r.id,
      iso(r.timestamp),
      r.subscriptionId,
      iso(r.periodStart),
      iso(r.periodEnd),
      r.eventType,
      r.unit,
      r.quantity,
      r.metadata,
      r.key,
    ];
  }
  const params = [
    JSON.stringify(events),
    newUnits.map((u) => u.subscriptionId),
    newUnits.map((u) => u.eventType),
    newUnits.map((u) => u.unit),
    slot,
  ];
  const attempt = async (sql: string): Promise<BatchOutcome> => {
    const run = async (db: Queryable): Promise<Out> => (await tenantQueryAs<Out>(db, tenant, sql, params))[0];
    if (!newUnits.length) {
      const out = await run(pool);
      return { conflicts: [], skippedKeys: out.skipped, createdAt: out.created_at };
    }
    return withClient(pool, async (c) => {
      await systemQuery(c, 'begin');
      try {
        const out = await run(c);
        if (out.conflicts.length) {
          await systemQuery(c, 'rollback');
          return { conflicts: out.conflicts, skippedKeys: [], createdAt: out.created_at };
        }
        await systemQuery(c, 'commit');
        return { conflicts: [], skippedKeys: out.skipped, createdAt: out.created_at };
      } catch (err) {
        await systemQuery(c, 'rollback').catch(() => undefined);
        throw err;
      }
    });
  };
  try {
    return await attempt(WRITE_BATCH.fresh);
  } catch (err) {
    if (!isKeyTaken(err)) throw err;
  }
  return attempt(WRITE_BATCH.guarded);
}

export interface AggregationRow {
  /** The period's bounds as epoch milliseconds (a Date is made once per period, not parsed per row). */
  start_ms: number;
  end_ms: number;
  event_type: string;
  unit: string;
  /** The exact sum as decimal text, without trailing zeros. */
  total: string;
  /** Events counted (exact: a double holds integers up to 2^53). */
  events: number;
}

/**
 * A subscription's usage per (billing period, event type), its slots added up: newest period first, then event type
 * (byte order). From usage_aggregates alone (its primary key leads with subscription_id), never the events. No row:
 * no such subscription of the tenant; one row with a null period: a subscription without usage.
 */
export async function summaryRows(
  em: EntityManager,
  subs: SubscriptionPeriodsSql,
  subscriptionId: string,
): Promise<(AggregationRow | { start_ms: null })[]> {
  return tenantQuery(em, statements(subs).summaryRows, [subscriptionId]);
}

/**
 * The subscription (one row, none when not the tenant's) and its aggregate rows, summed per period and event type.
 * The subscription is a plain subquery: the planner pulls it up into the join, as if the table were named here.
 */
const summaryRowsSql = (
  subs: SubscriptionPeriodsSql,
) => `select (extract(epoch from a.period_start) * 1000)::float8 as start_ms, (extract(epoch from max(a.period_end)) * 1000)::float8 as end_ms,
            a.event_type, min(a.unit) as unit, trim_scale(sum(a.total_quantity))::text as total, sum(a.event_count)::float8 as events
     from (${subs('s.id = $1::uuid', ['id'])}) s
     left join usage_aggregates a on a.subscription_id = s.id and {tenant:a}
     group by a.period_start, a.event_type
     order by a.period_start desc, a.event_type collate "C"`;

/** The statements that read subscriptions, per piece given (one in practice): texts built once, not per call. */
const built = new WeakMap<
  SubscriptionPeriodsSql,
  Record<'reportOne' | 'reportGroup' | 'subscriptionsFor' | 'summaryRows', string>
>();
function statements(subs: SubscriptionPeriodsSql) {
  let b = built.get(subs);
  if (!b) {
    b = {
      reportOne: reportOneSql(subs),
      reportGroup: reportGroupSql(subs),
      subscriptionsFor: subs('s.id = any($1::uuid[])', ['id', ...PERIOD_COLUMNS]),
      summaryRows: summaryRowsSql(subs),
    };
    built.set(subs, b);
  }
  return b;
}

// --- partitions -----------------------------------------------------------------------------------------------------

/** Whether `name` is attached to usage_events as a partition. */
export async function partitionAttached(db: Queryable, name: string): Promise<boolean> {
  const [row] = await systemQuery<{ attached: boolean }>(
    db,
    `select exists (select 1 from pg_inherits i where i.inhparent = 'usage_events'::regclass and i.inhrelid = to_regclass($1::text)) as attached`,
    [name],
  );
  return row.attached;
}

/**
 * Creates and attaches the partition `name` for `[from, to)` unless it is attached already, under the partition lock
 * (one creator at a time across processes). Built beside the table and then attached: ATTACH PARTITION takes only a
 * SHARE UPDATE EXCLUSIVE lock on usage_events, so inserts into the other months go on meanwhile (CREATE TABLE ...
 * PARTITION OF would take ACCESS EXCLUSIVE on the whole table). The bound check added first lets ATTACH skip its scan.
 * `name`, `from` and `to` are made by usage.partitions.ts from numbers only (DDL takes no parameters). Answers
 * whether this call created it.
 */
export async function createPartition(
  pool: ServicePool,
  p: { name: string; from: string; to: string },
): Promise<boolean> {
  if (
    !/^usage_events_\d{4}_\d{2}$/.test(p.name) ||
    [p.from, p.to].some((t) => !/^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/.test(t))
  ) {
    throw new Error(`usage: bad partition ${JSON.stringify(p)}`);
  }
  return withClient(pool, async (c) => {
    await systemQuery(c, 'begin');
    try {
      await systemQuery(c, 'select pg_advisory_xact_lock($1)', [USAGE_PARTITION_LOCK]);
      const attached = await partitionAttached(c, p.name);
      if (!attached) {
        await systemQuery(c, `create table if not exists "${p.name}" (like "usage_events" including all)`);
        await systemQuery(
          c,
          `alter table "${p.name}" add constraint "${p.name}_bounds" check ("timestamp" >= '${p.from}' and "timestamp" < '${p.to}')`,
        );
        await systemQuery(
          c,
          `alter table "usage_events" attach partition "${p.name}" for values from ('${p.from}') to ('${p.to}')`,
        );
        await systemQuery(c, `alter table "${p.name}" drop constraint "${p.name}_bounds"`);
      }
      await systemQuery(c, 'commit');
      return !attached;
    } catch (err) {
      await systemQuery(c, 'rollback').catch(() => undefined);
      throw err;
    }
  });
}

/** The partitions of usage_events, oldest first (names: usage_events_YYYY_MM). */
export async function partitionNames(db: Queryable): Promise<string[]> {
  const rows = await systemQuery<{ name: string }>(
    db,
    `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'usage_events'::regclass order by c.relname`,
  );
  return rows.map((r) => r.name);
}

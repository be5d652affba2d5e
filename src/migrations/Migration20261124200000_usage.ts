import { Migration } from '@mikro-orm/migrations';

/** Advisory lock class of usage partition maintenance (src/modules/usage/usage.store.ts takes the same). */
const USAGE_PARTITION_LOCK = 727_120;

/** `usage_events_2026_11` and the month's bounds in UTC, for the month `offset` months from `now`. */
function month(now: Date, offset: number): { name: string; from: string; to: string } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth() + offset;
  const start = new Date(Date.UTC(y, m, 1));
  const end = new Date(Date.UTC(y, m + 1, 1));
  const name = `usage_events_${start.getUTCFullYear()}_${String(start.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name, from: start.toISOString(), to: end.toISOString() };
}

/**
 * Metered usage (src/modules/usage; docs/usage.md).
 * - `usage_events`: every reported event, RANGE-partitioned by month on its timestamp (the partition key is in the
 *   primary key). No default partition: a row for a month without its partition fails, and the service then creates
 *   that month (usage.partitions.ts) and retries; a default partition would have to stay empty for that to work.
 *   No secondary index: nothing reads events by subscription (the summary reads the aggregates), and every index
 *   costs each insert. This migration creates last month, this month and the next two.
 * - `usage_aggregates`: the running sums per (subscription, billing period, event type), spread over up to 8 `slot`
 *   rows so concurrent events of one metric do not queue on one row lock; the summary adds the slots. Kept in the
 *   same statement as the event insert. `billed_quantity` belongs to period-close billing. fillfactor 70 leaves room
 *   for HOT updates (no indexed column changes when a sum moves).
 * - `usage_event_keys`: the body `idempotency_key` of events, unique per merchant and mode, pointing at the event.
 * - `usage_units`: the unit of each (subscription, event type), fixed by its first event; another unit is refused.
 */
export class Migration20261124200000_usage extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "usage_events" ("id" uuid not null, "timestamp" timestamptz not null, "merchant_id" uuid not null, "subscription_id" uuid not null, "period_start" timestamptz not null, "period_end" timestamptz not null, "created_at" timestamptz not null default now(), "mode" text check ("mode" in ('test', 'live')) not null, "event_type" varchar(100) not null, "unit" varchar(50) not null, "quantity" numeric not null check ("quantity" >= 0), "metadata" jsonb not null default '{}', "idempotency_key" varchar(255) null, constraint "usage_events_pkey" primary key ("id", "timestamp")) partition by range ("timestamp");`);
    this.addSql(`select pg_advisory_xact_lock(${USAGE_PARTITION_LOCK});`);
    const now = new Date();
    for (const offset of [-1, 0, 1, 2]) {
      const m = month(now, offset);
      this.addSql(`create table if not exists "${m.name}" partition of "usage_events" for values from ('${m.from}') to ('${m.to}');`);
    }

    this.addSql(`create table "usage_aggregates" ("subscription_id" uuid not null, "period_start" timestamptz not null, "event_type" varchar(100) not null, "slot" smallint not null check ("slot" between 0 and 7), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "period_end" timestamptz not null, "unit" varchar(50) not null, "total_quantity" numeric not null, "billed_quantity" numeric not null default 0, "event_count" bigint not null, "updated_at" timestamptz not null default now(), constraint "usage_aggregates_pkey" primary key ("subscription_id", "period_start", "event_type", "slot")) with (fillfactor = 70);`);

    this.addSql(`create table "usage_event_keys" ("merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "key" varchar(255) not null, "event_id" uuid not null, "timestamp" timestamptz not null, "created_at" timestamptz not null default now(), constraint "usage_event_keys_pkey" primary key ("merchant_id", "mode", "key"));`);

    this.addSql(`create table "usage_units" ("subscription_id" uuid not null, "event_type" varchar(100) not null, "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "unit" varchar(50) not null, "created_at" timestamptz not null default now(), constraint "usage_units_pkey" primary key ("subscription_id", "event_type"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "usage_units";`);
    this.addSql(`drop table if exists "usage_event_keys";`);
    this.addSql(`drop table if exists "usage_aggregates";`);
    this.addSql(`drop table if exists "usage_events" cascade;`);
  }

}

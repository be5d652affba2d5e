import { Migration } from '@mikro-orm/migrations';

/**
 * The MRR movements ledger (docs/analytics.md) (src/modules/analytics/mrr-ledger.ts; schema agreed in the
 * ledger notes). One row per change of a subscription's MRR, written in the change's transaction; every analytics
 * answer is a SQL aggregation over it and its daily rollup (below). The first index serves the window's edge days
 * (index-only scans over one merchant, mode and currency in time order); the second the per-customer facts the writer
 * reads under its lock.
 *
 * Backfill: every subscription counted now (active or past_due) gets one movement at the moment it became counted
 * (its latest audit row into active/past_due from another status; merchant time: in test mode the test clock's
 * current offset is added), so an existing database starts consistent: MRR now = the sum of the ledger. Per customer
 * and currency, the earliest is `new` (customer_delta +1) and any later one `expansion`. The history before the
 * ledger existed (earlier churn) is not reconstructed.
 */
export class Migration20261124200100_mrr_movements extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "mrr_movements" (
      "id" uuid not null,
      "created_at" timestamptz not null default now(),
      "merchant_id" uuid not null,
      "mode" text not null check ("mode" in ('test', 'live')),
      "subscription_id" uuid not null,
      "customer_id" uuid not null,
      "currency" text not null,
      "kind" text not null check ("kind" in ('new', 'expansion', 'contraction', 'churn', 'reactivation')),
      "amount" bigint not null,
      "mrr_before" bigint not null,
      "mrr_after" bigint not null,
      "subscription_delta" smallint not null check ("subscription_delta" in (-1, 0, 1)),
      "customer_delta" smallint not null check ("customer_delta" in (-1, 0, 1)),
      "reporting_currency" text not null,
      "fx_rate" numeric null,
      "cause" text not null,
      "occurred_at" timestamptz not null,
      constraint "mrr_movements_pkey" primary key ("id"));`);
    this.addSql(`create index "mrr_movements_window_index" on "mrr_movements" ("merchant_id", "mode", "currency", "occurred_at")
      include ("kind", "amount", "subscription_delta", "customer_delta", "customer_id");`);
    this.addSql(`create index "mrr_movements_customer_index" on "mrr_movements" ("merchant_id", "mode", "customer_id", "currency", "occurred_at");`);

    // The daily rollup the analytics read for whole days (analytics.store.ts), so an answer reads a few thousand rows
    // however long the history: per merchant, mode, currency and UTC day D (holding (D, D + 1 day], as a window's
    // buckets do), in 8 shards by subscription so concurrent writers of one merchant rarely wait on one row. A trigger
    // keeps it, whoever writes the ledger (the writer, this backfill, a bulk load): statement-level, so a bulk insert
    // updates each day once.
    this.addSql(`create table "mrr_movement_days" (
      "merchant_id" uuid not null,
      "mode" text not null,
      "currency" text not null,
      "day" timestamp not null,
      "shard" smallint not null,
      "net" bigint not null,
      "subscriptions" bigint not null,
      "customers" bigint not null,
      "new_mrr" bigint not null,
      "expansion_mrr" bigint not null,
      "reactivation_mrr" bigint not null,
      "contraction_mrr" bigint not null,
      "churn_mrr" bigint not null,
      "churned" bigint not null,
      constraint "mrr_movement_days_pkey" primary key ("merchant_id", "mode", "currency", "day", "shard"));`);
    const apply = (rows: string, sign: string) => `insert into mrr_movement_days as d (merchant_id, mode, currency, day, shard, net, subscriptions,
          customers, new_mrr, expansion_mrr, reactivation_mrr, contraction_mrr, churn_mrr, churned)
        select r.merchant_id, r.mode, r.currency, date_trunc('day', (r.occurred_at - interval '1 microsecond') at time zone 'UTC'),
          (hashtext(r.subscription_id::text) & 7)::smallint,
          ${sign} sum(r.amount), ${sign} sum(r.subscription_delta), ${sign} sum(r.customer_delta),
          ${sign} coalesce(sum(r.amount) filter (where r.kind = 'new'), 0), ${sign} coalesce(sum(r.amount) filter (where r.kind = 'expansion'), 0),
          ${sign} coalesce(sum(r.amount) filter (where r.kind = 'reactivation'), 0), ${sign} coalesce(sum(r.amount) filter (where r.kind = 'contraction'), 0),
          ${sign} coalesce(sum(r.amount) filter (where r.kind = 'churn'), 0), ${sign} count(*) filter (where r.kind = 'churn')
        from ${rows} r group by 1, 2, 3, 4, 5
        on conflict (merchant_id, mode, currency, day, shard) do update set
          net = d.net + excluded.net, subscriptions = d.subscriptions + excluded.subscriptions, customers = d.customers + excluded.customers,
          new_mrr = d.new_mrr + excluded.new_mrr, expansion_mrr = d.expansion_mrr + excluded.expansion_mrr,
          reactivation_mrr = d.reactivation_mrr + excluded.reactivation_mrr, contraction_mrr = d.contraction_mrr + excluded.contraction_mrr,
          churn_mrr = d.churn_mrr + excluded.churn_mrr, churned = d.churned + excluded.churned;`;
    this.addSql(`create or replace function "mrr_movement_days_apply"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'TRUNCATE' then
          delete from mrr_movement_days;
          return null;
        end if;
        if tg_op in ('DELETE', 'UPDATE') then
          ${apply('old_rows', '-')}
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          ${apply('new_rows', '')}
        end if;
        return null;
      end $$;`);
    this.addSql(`create trigger "mrr_movements_days_insert" after insert on "mrr_movements" referencing new table as new_rows for each statement execute function "mrr_movement_days_apply"();`);
    this.addSql(`create trigger "mrr_movements_days_update" after update on "mrr_movements" referencing old table as old_rows new table as new_rows for each statement execute function "mrr_movement_days_apply"();`);
    this.addSql(`create trigger "mrr_movements_days_delete" after delete on "mrr_movements" referencing old table as old_rows for each statement execute function "mrr_movement_days_apply"();`);
    this.addSql(`create trigger "mrr_movements_days_truncate" after truncate on "mrr_movements" for each statement execute function "mrr_movement_days_apply"();`);

    // The MRR rule as of this migration (docs/analytics.md; the live definition is mrr-ledger.ts mrrStateOf).
    const amount = `(s.amount - case when s.coupon_id is not null and s.discount_cycles is null then
        case when s.discount_amount_off is not null then least(s.discount_amount_off, s.amount)
             else coalesce(round(s.amount::numeric * s.discount_percent_bps / 10000), 0) end
      else 0 end)::numeric`;
    this.addSql(`insert into "mrr_movements" ("id", "created_at", "merchant_id", "mode", "subscription_id", "customer_id", "currency", "kind",
        "amount", "mrr_before", "mrr_after", "subscription_delta", "customer_delta", "reporting_currency", "fx_rate", "cause", "occurred_at")
      with counted as (
        select s.merchant_id, s.mode, s.id, s.customer_id, s.currency,
          round(case s.billing_frequency
            when 'monthly' then ${amount} / s.billing_interval
            when 'yearly' then ${amount} / (12 * s.billing_interval)
            when 'weekly' then ${amount} * 52 / (12 * s.billing_interval)
            when 'daily' then ${amount} * 365 / (12 * s.billing_interval) end)::bigint as mrr,
          coalesce(e.event_type, 'subscription.activated') as cause,
          coalesce(e.created_at, s.created_at)
            + (case when s.mode = 'test' then coalesce((select tc.offset_ms from test_clocks tc where tc.merchant_id = s.merchant_id), 0) else 0 end)
              * interval '1 millisecond' as at
        from subscriptions s
        left join lateral (
          select se.event_type, se.created_at from subscription_events se
          where se.subscription_id = s.id and se.to_state in ('active', 'past_due')
            and (se.from_state is null or se.from_state not in ('active', 'past_due'))
          order by se.created_at desc, se.id desc limit 1
        ) e on true
        where s.status in ('active', 'past_due')
      ),
      ranked as (
        select c.*, row_number() over (partition by c.merchant_id, c.mode, c.customer_id, c.currency order by c.at, c.id) as n from counted c
      )
      select gen_random_uuid(), now(), r.merchant_id, r.mode, r.id, r.customer_id, r.currency,
        case when r.n = 1 then 'new' else 'expansion' end,
        r.mrr, 0, r.mrr, 1, case when r.n = 1 then 1 else 0 end,
        m.reporting_currency, case when m.reporting_currency = r.currency then 1 end, r.cause, r.at
      from ranked r join merchants m on m.id = r.merchant_id;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mrr_movements" cascade;`);
    this.addSql(`drop function if exists "mrr_movement_days_apply"();`);
    this.addSql(`drop table if exists "mrr_movement_days" cascade;`);
  }

}

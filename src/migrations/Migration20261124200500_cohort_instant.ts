import { Migration } from '@mikro-orm/migrations';

/**
 * Retention cohorts without a sort by customer (src/modules/analytics/cohorts.store.ts): every MRR movement carries
 * its customer's cohort instant, `customer_first_at`, the instant the customer first became paying in the movement's
 * currency (the occurred_at of its earliest customer_delta +1 movement; on that movement itself, its own occurred_at).
 * With it, a cohort's retention is a grouping of the customer_delta <> 0 movements by (cohort bucket, bucket),
 * read index-only from the partial index below, which replaces mrr_movements_customer_changes_index (migration
 * Migration20261124200200_mandate_attempts; the cohorts statement was its only reader).
 *
 * Filled by whoever writes the ledger: the writer gives it (mrr-ledger.store.ts, from the customer's facts it reads
 * under the per-customer lock), a bulk load may give it (bench/lib/analytics-seed.ts); a row inserted without it
 * gets it from the BEFORE INSERT trigger below (the customer's earliest +1 movement in the currency, else the row's
 * own occurred_at). The ledger is appended in time order per customer (the writer's lock), so a row written later
 * never changes an earlier row's cohort, and the trigger sees the rows an insert statement wrote before (PostgreSQL
 * shows a row-level BEFORE trigger the rows its statement already processed).
 *
 * Backfill: every existing row, from its customer's earliest +1 movement. The update changes nothing the daily rollup
 * (mrr_movement_days) reads, so its statement trigger, which would subtract and add back every row, is off for it
 * (inside this migration's transaction: no writer runs meanwhile, the ALTER TABLE holds the table).
 */
export class Migration20261124200500_cohort_instant extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "mrr_movements" add column "customer_first_at" timestamptz null;`);
    this.addSql(`alter table "mrr_movements" disable trigger "mrr_movements_days_update";`);
    this.addSql(`update "mrr_movements" m set "customer_first_at" = coalesce(f.first_at, m.occurred_at)
      from (
        select merchant_id, mode, customer_id, currency, min(occurred_at) filter (where customer_delta = 1) as first_at
        from "mrr_movements" group by 1, 2, 3, 4
      ) f
      where f.merchant_id = m.merchant_id and f.mode = m.mode and f.customer_id = m.customer_id and f.currency = m.currency;`);
    this.addSql(`alter table "mrr_movements" enable trigger "mrr_movements_days_update";`);
    this.addSql(`alter table "mrr_movements" alter column "customer_first_at" set not null;`);

    this.addSql(`create function "mrr_movements_cohort_instant"() returns trigger language plpgsql as $$
      begin
        select min(x.occurred_at) into new.customer_first_at from mrr_movements x
         where x.merchant_id = new.merchant_id and x.mode = new.mode and x.customer_id = new.customer_id
           and x.currency = new.currency and x.customer_delta = 1;
        new.customer_first_at := coalesce(new.customer_first_at, new.occurred_at);
        return new;
      end $$;`);
    this.addSql(`create trigger "mrr_movements_cohort_instant" before insert on "mrr_movements"
      for each row when (new.customer_first_at is null) execute function "mrr_movements_cohort_instant"();`);

    this.addSql(`drop index if exists "mrr_movements_customer_changes_index";`);
    this.addSql(`create index "mrr_movements_cohort_index" on "mrr_movements" ("merchant_id", "mode", "currency", "customer_first_at")
      include ("occurred_at", "customer_delta") where "customer_delta" <> 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "mrr_movements_cohort_index";`);
    this.addSql(`create index "mrr_movements_customer_changes_index" on "mrr_movements" ("merchant_id", "mode", "currency", "occurred_at")
      include ("customer_id", "customer_delta", "kind") where "customer_delta" <> 0;`);
    this.addSql(`drop trigger if exists "mrr_movements_cohort_instant" on "mrr_movements";`);
    this.addSql(`drop function if exists "mrr_movements_cohort_instant"();`);
    this.addSql(`alter table "mrr_movements" drop column if exists "customer_first_at";`);
  }

}

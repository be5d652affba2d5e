import { Migration } from '@mikro-orm/migrations';

/**
 * Autopay analytics (docs/analytics.md) (src/modules/analytics/autopay.*): `mandate_attempts`, one row per
 * subscription mandate checkout that completed or failed at the gateway, written with the subscription's change that
 * gateway event caused.
 * - `method` how the mandate was set up, `bank` the issuing / UPI PSP / e-mandate bank (null when the gateway named
 *   none), `failure_reason` the gateway's decline reason (failed attempts only), from the gateway event.
 * - One attempt per subscription (its checkout's outcome; the several events one authorisation sends, and a repeated
 *   webhook, record it once), and the gateway event that recorded it unique per provider.
 * - `occurred_at` is merchant time (the test clock in test mode). The index serves the window's aggregation.
 *
 * Also, for retention cohorts (src/modules/analytics/cohorts.store.ts), a partial index of the MRR ledger's movements
 * that change a customer's paying state (customer_delta <> 0, a small share of all movements), in time order with
 * what the cohorts statement reads: it scans those alone, from the first cohort on, without touching the table. So
 * this migration runs after Migration20261124200100_mrr_movements.
 */
export class Migration20261124200200_mandate_attempts extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "mandate_attempts" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null,
      "subscription_id" uuid not null, "customer_id" uuid not null, "provider" text check ("provider" in ('stripe', 'razorpay')) not null,
      "method" text check ("method" in ('upi', 'card', 'emandate', 'unknown')) not null, "bank" varchar(40) null,
      "status" text check ("status" in ('authorized', 'failed')) not null, "failure_reason" varchar(255) null,
      "gateway_event_id" varchar(255) not null, "occurred_at" timestamptz not null,
      constraint "mandate_attempts_pkey" primary key ("id"),
      constraint "mandate_attempts_reason_check" check (("status" = 'failed') = ("failure_reason" is not null)));`);
    this.addSql(`create unique index "mandate_attempts_subscription_unique" on "mandate_attempts" ("subscription_id");`);
    this.addSql(`create unique index "mandate_attempts_provider_event_unique" on "mandate_attempts" ("provider", "gateway_event_id");`);
    this.addSql(`create index "mandate_attempts_window_index" on "mandate_attempts" ("merchant_id", "mode", "occurred_at") include ("method", "bank", "status", "failure_reason");`);
    this.addSql(`create index "mrr_movements_customer_changes_index" on "mrr_movements" ("merchant_id", "mode", "currency", "occurred_at")
      include ("customer_id", "customer_delta", "kind") where "customer_delta" <> 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "mrr_movements_customer_changes_index";`);
    this.addSql(`drop table if exists "mandate_attempts" cascade;`);
  }

}

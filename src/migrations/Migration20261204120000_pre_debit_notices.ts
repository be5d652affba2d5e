import { Migration } from '@mikro-orm/migrations';

/**
 * Pre-debit notices (docs/india.md): one row per subscription and announced debit instant, so a notice is sent once
 * however many workers sweep, and the debit it announces can be checked against it.
 */
export class Migration20261204120000_pre_debit_notices extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "pre_debit_notices" (
      "id" uuid not null,
      "created_at" timestamptz not null default now(),
      "merchant_id" uuid not null,
      "mode" text check ("mode" in ('test', 'live')) not null,
      "subscription_id" uuid not null references "subscriptions" ("id"),
      "kind" text check ("kind" in ('renewal', 'retry')) not null,
      "debit_at" timestamptz not null,
      "amount_due" bigint not null,
      "currency" varchar(3) not null,
      "sent_at" timestamptz not null,
      constraint "pre_debit_notices_pkey" primary key ("id"));`);
    this.addSql(`create unique index "pre_debit_notices_subscription_id_debit_at_unique" on "pre_debit_notices" ("subscription_id", "debit_at");`);
    this.addSql(`create index "pre_debit_notices_merchant_id_mode_subscription_id_index" on "pre_debit_notices" ("merchant_id", "mode", "subscription_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "pre_debit_notices";`);
  }

}

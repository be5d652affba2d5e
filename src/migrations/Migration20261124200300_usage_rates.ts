import { Migration } from '@mikro-orm/migrations';

/**
 * Usage rates (docs/usage.md): a plan's price per unit of one usage event type in one currency, billed in arrears when
 * a billing period closes (src/modules/usage/usage.billing.ts). `unit_amount_decimal` is subunits per unit as an exact
 * numeric (at most 9 integer and 12 fractional digits, >= 0: the checks hold the API's rule in the database too).
 * One rate per plan, event type and currency; that unique index also serves the close's look-up by plan.
 */
export class Migration20261124200300_usage_rates extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "usage_rates" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "plan_id" uuid not null, "event_type" varchar(100) not null, "currency" varchar(3) not null, "unit_amount_decimal" numeric not null, constraint "usage_rates_pkey" primary key ("id"),
      constraint "usage_rates_unit_amount_check" check ("unit_amount_decimal" >= 0 and "unit_amount_decimal" < 1000000000 and scale("unit_amount_decimal") <= 12));`);
    this.addSql(`create index "usage_rates_merchant_id_mode_id_index" on "usage_rates" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "usage_rates" add constraint "usage_rates_plan_event_type_currency_unique" unique ("plan_id", "event_type", "currency");`);
    this.addSql(`alter table "usage_rates" add constraint "usage_rates_plan_id_foreign" foreign key ("plan_id") references "plans" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "usage_rates" cascade;`);
  }

}

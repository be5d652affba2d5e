import { Migration } from '@mikro-orm/migrations';

/**
 * Coupons (src/modules/coupons; docs/growth.md).
 * - `coupons`: codes unique per merchant and mode regardless of case (a unique index on lower(code), which also serves
 *   the look-up by code). The checks keep the invariants in the database too: percent XOR amount, repeating iff
 *   duration_in_cycles, and times_redeemed never above max_redemptions.
 * - `coupon_redemptions`: one row per subscription created with a coupon (released when its checkout never completed).
 * - `subscriptions`: the coupon's discount fixed at creation (percent in basis points or a fixed amount), how many
 *   billed periods it covers (null: every one) and has covered, the current period's discount, and whether the gateway
 *   charges a discounted price now.
 * - `invoices.discount_amount`: the discount taken off the invoice's lines (shown as a negative line too).
 */
export class Migration20261124000600_coupons extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "coupons" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "code" varchar(64) not null, "name" varchar(255) null, "percent_off_bps" int null, "amount_off" bigint null, "currency" varchar(3) null, "duration" text check ("duration" in ('once', 'repeating', 'forever')) not null, "duration_in_cycles" int null, "max_redemptions" int null, "redeem_by" timestamptz null, "applies_to_plan_ids" jsonb null, "times_redeemed" int not null default 0, "metadata" jsonb not null default '{}', constraint "coupons_pkey" primary key ("id"),
      constraint "coupons_discount_check" check (("percent_off_bps" is null) <> ("amount_off" is null)),
      constraint "coupons_percent_check" check ("percent_off_bps" is null or "percent_off_bps" between 1 and 10000),
      constraint "coupons_amount_check" check ("amount_off" is null or ("amount_off" > 0 and "currency" is not null)),
      constraint "coupons_cycles_check" check (("duration" = 'repeating') = ("duration_in_cycles" is not null) and coalesce("duration_in_cycles", 1) >= 1),
      constraint "coupons_redemptions_check" check ("times_redeemed" >= 0 and ("max_redemptions" is null or "times_redeemed" <= "max_redemptions")));`);
    this.addSql(`create index "coupons_merchant_id_mode_id_index" on "coupons" ("merchant_id", "mode", "id");`);
    this.addSql(`create unique index "coupons_code_unique" on "coupons" ("merchant_id", "mode", lower("code"));`);

    this.addSql(`create table "coupon_redemptions" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "coupon_id" uuid not null, "subscription_id" uuid not null, "customer_id" uuid not null, "status" text check ("status" in ('active', 'released')) not null default 'active', "released_at" timestamptz null, constraint "coupon_redemptions_pkey" primary key ("id"));`);
    this.addSql(`create index "coupon_redemptions_merchant_id_mode_id_index" on "coupon_redemptions" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "coupon_redemptions_merchant_id_mode_coupon_id_id_index" on "coupon_redemptions" ("merchant_id", "mode", "coupon_id", "id");`);
    this.addSql(`alter table "coupon_redemptions" add constraint "coupon_redemptions_subscription_unique" unique ("subscription_id");`);
    this.addSql(`alter table "coupon_redemptions" add constraint "coupon_redemptions_coupon_id_foreign" foreign key ("coupon_id") references "coupons" ("id") on update cascade;`);

    this.addSql(`alter table "subscriptions" add column "coupon_id" uuid null, add column "discount_percent_bps" int null, add column "discount_amount_off" bigint null, add column "discount_cycles" int null, add column "discount_cycles_used" int not null default 0, add column "period_discount" bigint not null default 0, add column "gateway_discounted" boolean not null default false;`);
    this.addSql(`alter table "invoices" add column "discount_amount" bigint not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "invoices" drop column "discount_amount";`);
    this.addSql(`alter table "subscriptions" drop column "coupon_id", drop column "discount_percent_bps", drop column "discount_amount_off", drop column "discount_cycles", drop column "discount_cycles_used", drop column "period_discount", drop column "gateway_discounted";`);
    this.addSql(`drop table if exists "coupon_redemptions" cascade;`);
    this.addSql(`drop table if exists "coupons" cascade;`);
  }

}

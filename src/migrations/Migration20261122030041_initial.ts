import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030041_initial extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "merchants" ("id" uuid not null, "created_at" timestamptz not null default now(), "name" varchar(255) not null, "gstin" varchar(255) null, "state_code" varchar(2) null, "reporting_currency" varchar(3) not null default 'INR', "rate_limit_per_second" int null, "max_retries" int not null default 3, constraint "merchants_pkey" primary key ("id"));`);

    this.addSql(`create table "api_keys" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "key_hash" varchar(64) not null, "last4" varchar(4) not null, "expires_at" timestamptz null, constraint "api_keys_pkey" primary key ("id"));`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_keys_merchant_id_mode_index" on "api_keys" ("merchant_id", "mode");`);

    this.addSql(`create table "product_families" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "name" varchar(255) not null, "description" text null, constraint "product_families_pkey" primary key ("id"));`);
    this.addSql(`create index "product_families_merchant_id_mode_id_index" on "product_families" ("merchant_id", "mode", "id");`);

    this.addSql(`create table "products" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "name" varchar(255) not null, "description" text null, "type" text check ("type" in ('subscription', 'one_time')) not null, "status" text check ("status" in ('active', 'inactive')) not null default 'active', "product_family_id" uuid null, "updated_at" timestamptz not null default now(), constraint "products_pkey" primary key ("id"));`);
    this.addSql(`create index "products_product_family_id_index" on "products" ("product_family_id");`);
    this.addSql(`create index "products_merchant_id_mode_id_index" on "products" ("merchant_id", "mode", "id");`);

    this.addSql(`create table "plans" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "product_id" uuid not null, "name" varchar(255) not null, "billing_frequency" text check ("billing_frequency" in ('daily', 'weekly', 'monthly', 'yearly')) null, "billing_interval" int not null default 1, "trial_period_days" int not null default 0, "trial_end_action" text check ("trial_end_action" in ('start_subscription', 'cancel_subscription')) not null default 'start_subscription', "max_cycles" int null, constraint "plans_pkey" primary key ("id"));`);
    this.addSql(`create index "plans_merchant_id_mode_id_index" on "plans" ("merchant_id", "mode", "id");`);

    this.addSql(`create table "prices" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "plan_id" uuid not null, "currency" varchar(3) not null, "amount" bigint not null, "setup_fee" bigint not null default 0, "is_default" boolean not null default false, "provider_price_ids" jsonb not null, constraint "prices_pkey" primary key ("id"));`);
    this.addSql(`create index "prices_merchant_id_mode_id_index" on "prices" ("merchant_id", "mode", "id");`);
    this.addSql(`create unique index "prices_one_default_per_currency" on "prices" ("plan_id", "currency") where "is_default";`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_merchant_id_foreign" foreign key ("merchant_id") references "merchants" ("id") on update cascade;`);

    this.addSql(`alter table "products" add constraint "products_product_family_id_foreign" foreign key ("product_family_id") references "product_families" ("id") on update cascade on delete set null;`);

    this.addSql(`alter table "plans" add constraint "plans_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade;`);

    this.addSql(`alter table "prices" add constraint "prices_plan_id_foreign" foreign key ("plan_id") references "plans" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "api_keys" drop constraint "api_keys_merchant_id_foreign";`);

    this.addSql(`alter table "products" drop constraint "products_product_family_id_foreign";`);

    this.addSql(`alter table "plans" drop constraint "plans_product_id_foreign";`);

    this.addSql(`alter table "prices" drop constraint "prices_plan_id_foreign";`);

    this.addSql(`drop table if exists "merchants" cascade;`);

    this.addSql(`drop table if exists "api_keys" cascade;`);

    this.addSql(`drop table if exists "product_families" cascade;`);

    this.addSql(`drop table if exists "products" cascade;`);

    this.addSql(`drop table if exists "plans" cascade;`);

    this.addSql(`drop table if exists "prices" cascade;`);
  }

}

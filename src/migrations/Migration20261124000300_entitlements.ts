import { Migration } from '@mikro-orm/migrations';

/**
 * Entitlements (src/modules/entitlements): the gates, their product links and the links' version per merchant and
 * mode. The evaluation joins a customer's subscriptions (by the subscriptions module's (merchant_id, mode,
 * customer_id, status) index) to the links by product (entitlement_products_product_index), then entitlements by id.
 */
export class Migration20261124000300_entitlements extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "entitlements" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "lookup_key" varchar(100) not null, "name" varchar(255) not null, "description" text null, constraint "entitlements_pkey" primary key ("id"));`);
    this.addSql(`create index "entitlements_merchant_id_mode_id_index" on "entitlements" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "entitlements" add constraint "entitlements_lookup_key_unique" unique ("merchant_id", "mode", "lookup_key");`);

    this.addSql(`create table "entitlement_products" ("entitlement_id" uuid not null, "product_id" uuid not null, "merchant_id" uuid not null, "mode" text not null, "link_id" uuid not null, "created_at" timestamptz not null default now(), constraint "entitlement_products_pkey" primary key ("entitlement_id", "product_id"));`);
    this.addSql(`create index "entitlement_products_product_index" on "entitlement_products" ("merchant_id", "mode", "product_id");`);
    this.addSql(`alter table "entitlement_products" add constraint "entitlement_products_entitlement_id_foreign" foreign key ("entitlement_id") references "entitlements" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "entitlement_products" add constraint "entitlement_products_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade;`);

    this.addSql(`create table "entitlement_versions" ("merchant_id" uuid not null, "mode" text not null, "version" bigint not null, constraint "entitlement_versions_pkey" primary key ("merchant_id", "mode"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "entitlement_products" cascade;`);
    this.addSql(`drop table if exists "entitlement_versions" cascade;`);
    this.addSql(`drop table if exists "entitlements" cascade;`);
  }

}

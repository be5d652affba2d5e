import { Migration } from '@mikro-orm/migrations';

export class Migration20261124000400_offerings extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "offerings" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "lookup_key" varchar(200) not null, "name" varchar(255) not null, "description" text null, "is_current" boolean not null default false, "metadata" jsonb not null, "updated_at" timestamptz not null default now(), constraint "offerings_pkey" primary key ("id"));`);
    this.addSql(`create index "offerings_merchant_id_mode_id_index" on "offerings" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "offerings" add constraint "offerings_merchant_id_mode_lookup_key_unique" unique ("merchant_id", "mode", "lookup_key");`);
    this.addSql(`create unique index "offerings_one_current" on "offerings" ("merchant_id", "mode") where "is_current";`);

    this.addSql(`create table "packages" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "lookup_key" varchar(200) not null, "name" varchar(255) not null, "description" text null, constraint "packages_pkey" primary key ("id"));`);
    this.addSql(`create index "packages_merchant_id_mode_id_index" on "packages" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "packages" add constraint "packages_merchant_id_mode_lookup_key_unique" unique ("merchant_id", "mode", "lookup_key");`);

    this.addSql(`create table "offering_packages" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "offering_id" uuid not null, "package_id" uuid not null, "position" int not null, constraint "offering_packages_pkey" primary key ("id"));`);
    this.addSql(`create index "offering_packages_merchant_id_mode_id_index" on "offering_packages" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "offering_packages" add constraint "offering_packages_offering_id_package_id_unique" unique ("offering_id", "package_id");`);
    // Checked at commit: shifting positions is one statement whose rows collide while it runs.
    this.addSql(`alter table "offering_packages" add constraint "offering_packages_offering_id_position_unique" unique ("offering_id", "position") deferrable initially deferred;`);
    this.addSql(`alter table "offering_packages" add constraint "offering_packages_offering_id_foreign" foreign key ("offering_id") references "offerings" ("id") on update cascade;`);
    this.addSql(`alter table "offering_packages" add constraint "offering_packages_package_id_foreign" foreign key ("package_id") references "packages" ("id") on update cascade;`);

    this.addSql(`create table "package_products" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "package_id" uuid not null, "product_id" uuid not null, constraint "package_products_pkey" primary key ("id"));`);
    this.addSql(`create index "package_products_merchant_id_mode_id_index" on "package_products" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "package_products" add constraint "package_products_package_id_product_id_unique" unique ("package_id", "product_id");`);
    this.addSql(`alter table "package_products" add constraint "package_products_package_id_foreign" foreign key ("package_id") references "packages" ("id") on update cascade;`);
    this.addSql(`alter table "package_products" add constraint "package_products_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade;`);

    this.addSql(`create table "paywalls" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "name" varchar(255) not null, "offering_id" uuid not null, "template" text check ("template" in ('simple', 'feature_comparison', 'sliding_cards')) not null, "config" jsonb not null, constraint "paywalls_pkey" primary key ("id"));`);
    this.addSql(`create index "paywalls_merchant_id_mode_id_index" on "paywalls" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "paywalls" add constraint "paywalls_merchant_id_mode_offering_id_unique" unique ("merchant_id", "mode", "offering_id");`);
    this.addSql(`alter table "paywalls" add constraint "paywalls_offering_id_foreign" foreign key ("offering_id") references "offerings" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "paywalls" cascade;`);
    this.addSql(`drop table if exists "package_products" cascade;`);
    this.addSql(`drop table if exists "offering_packages" cascade;`);
    this.addSql(`drop table if exists "packages" cascade;`);
    this.addSql(`drop table if exists "offerings" cascade;`);
  }

}

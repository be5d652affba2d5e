import { Migration } from '@mikro-orm/migrations';

export class Migration20261124000500_experiments extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "experiments" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "name" varchar(255) not null, "status" text check ("status" in ('draft', 'running', 'stopped')) not null default 'draft', "targeting" jsonb not null, "traffic_version" int not null default 1, "started_at" timestamptz null, "stopped_at" timestamptz null, "updated_at" timestamptz not null default now(), constraint "experiments_pkey" primary key ("id"));`);
    this.addSql(`create index "experiments_merchant_id_mode_id_index" on "experiments" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "experiments_running_index" on "experiments" ("merchant_id", "mode", "started_at", "id") where "status" = 'running';`);

    this.addSql(`create table "experiment_variants" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "experiment_id" uuid not null, "key" varchar(64) not null, "name" varchar(255) not null, "offering_id" uuid not null, "traffic_percent" int not null, "is_control" boolean not null default false, constraint "experiment_variants_pkey" primary key ("id"));`);
    this.addSql(`create index "experiment_variants_merchant_id_mode_id_index" on "experiment_variants" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "experiment_variants" add constraint "experiment_variants_experiment_id_key_unique" unique ("experiment_id", "key");`);
    this.addSql(`alter table "experiment_variants" add constraint "experiment_variants_experiment_id_foreign" foreign key ("experiment_id") references "experiments" ("id") on update cascade;`);

    this.addSql(`create table "experiment_enrolments" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "experiment_id" uuid not null, "variant_id" uuid not null, "customer_id" uuid not null, "traffic_version" int not null, constraint "experiment_enrolments_pkey" primary key ("id"));`);
    this.addSql(`create index "experiment_enrolments_merchant_id_mode_id_index" on "experiment_enrolments" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "experiment_enrolments" add constraint "experiment_enrolments_experiment_id_customer_id_unique" unique ("experiment_id", "customer_id");`);
    this.addSql(`alter table "experiment_enrolments" add constraint "experiment_enrolments_experiment_id_foreign" foreign key ("experiment_id") references "experiments" ("id") on update cascade;`);
    this.addSql(`alter table "experiment_enrolments" add constraint "experiment_enrolments_variant_id_foreign" foreign key ("variant_id") references "experiment_variants" ("id") on update cascade;`);
    this.addSql(`alter table "experiment_enrolments" add constraint "experiment_enrolments_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "experiment_enrolments" cascade;`);
    this.addSql(`drop table if exists "experiment_variants" cascade;`);
    this.addSql(`drop table if exists "experiments" cascade;`);
  }

}

import { Migration } from '@mikro-orm/migrations';

export class Migration20261122034255_catalog_versions extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "catalog_versions" ("merchant_id" uuid not null, "mode" text not null, "version" bigint not null, constraint "catalog_versions_pkey" primary key ("merchant_id", "mode"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "catalog_versions" cascade;`);
  }

}

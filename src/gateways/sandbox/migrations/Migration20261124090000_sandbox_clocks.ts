import { Migration } from '@mikro-orm/migrations';

/**
 * Per-account sandbox clocks: an account's time is the wall clock plus `offset_ms`, which only grows (a merchant's
 * test clock moves it through the test-clock extension routes; renewals are charged by each account's own time).
 */
export class Migration20261124090000_sandbox_clocks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists "sandbox_clocks" ("account_key" text not null, "offset_ms" bigint not null default 0, "updated_at" timestamptz not null default now(), constraint "sandbox_clocks_pkey" primary key ("account_key"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_clocks" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Customer portal sessions (docs/portal.md): one customer of one merchant and mode, for an hour; only the token's
 * SHA-256 is stored, looked up by it.
 */
export class Migration20261203100000_portal_sessions extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "portal_sessions" (
      "id" uuid not null,
      "created_at" timestamptz not null default now(),
      "merchant_id" uuid not null,
      "mode" text check ("mode" in ('test', 'live')) not null,
      "customer_id" uuid not null references "customers" ("id"),
      "token_hash" text not null,
      "return_url" text not null,
      "expires_at" timestamptz not null,
      constraint "portal_sessions_pkey" primary key ("id"));`);
    this.addSql(`create unique index "portal_sessions_token_hash_index" on "portal_sessions" ("token_hash");`);
    this.addSql(`create index "portal_sessions_merchant_id_mode_id_index" on "portal_sessions" ("merchant_id", "mode", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "portal_sessions";`);
  }

}

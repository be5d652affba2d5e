import { Migration } from '@mikro-orm/migrations';

/**
 * Per-key limits shared by every process on the database (docs/operations.md, "Shared limits"): rate-limiter-flexible's
 * counters (its own layout: key, points, expiry in ms) and the WebSocket leases. Unlogged: counters for the current
 * second and leases of a minute are not worth a WAL write each; after a crash they start empty, which only forgives.
 */
export class Migration20261208100000_shared_limits extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create unlogged table "rate_limits" ("key" varchar(255) primary key, "points" integer not null default 0, "expire" bigint);`);
    this.addSql(`create index "rate_limits_expire_index" on "rate_limits" ("expire");`);
    this.addSql(`create unlogged table "websocket_leases" ("id" uuid primary key, "api_key_id" uuid not null, "expires_at" timestamptz not null);`);
    this.addSql(`create index "websocket_leases_key_index" on "websocket_leases" ("api_key_id", "expires_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "websocket_leases";`);
    this.addSql(`drop table if exists "rate_limits";`);
  }

}

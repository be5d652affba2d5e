import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox's tables. Databases made before the sandbox had migrations of its own already hold them (the service's
 * Migration20261122031548_sandbox created them): every statement is a no-op then.
 */
export class Migration20261123200000_sandbox_tables extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists "sandbox_events" ("id" text not null, "provider" text not null, "account_key" text not null, "type" text not null, "body" text not null, "delivered" boolean not null default false, "attempts" int not null default 0, "last_error" text null, "created_at" timestamptz not null default now(), constraint "sandbox_events_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create index if not exists "sandbox_events_delivered_created_at_index" on "sandbox_events" ("delivered", "created_at");`,
    );

    this.addSql(
      `create table if not exists "sandbox_idempotency_keys" ("id" uuid not null, "provider" text not null, "account_key" text not null, "key" text not null, "request_hash" text not null, "status" int not null, "response" jsonb not null, "created_at" timestamptz not null default now(), constraint "sandbox_idempotency_keys_pkey" primary key ("id"), constraint "sandbox_idempotency_keys_provider_account_key_key_unique" unique ("provider", "account_key", "key"));`,
    );

    this.addSql(
      `create table if not exists "sandbox_objects" ("id" text not null, "provider" text not null, "account_key" text not null, "type" text not null, "data" jsonb not null, "internal" jsonb not null, "due_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "sandbox_objects_pkey" primary key ("id"));`,
    );
    this.addSql(`create index if not exists "sandbox_objects_due_at_index" on "sandbox_objects" ("due_at");`);
    this.addSql(
      `create index if not exists "sandbox_objects_account_key_type_index" on "sandbox_objects" ("account_key", "type");`,
    );

    this.addSql(
      `create table if not exists "sandbox_webhooks" ("id" uuid not null, "provider" text not null, "account_key" text not null, "external_id" text not null, "url" text not null, "secret" text not null, "events" jsonb not null, "created_at" timestamptz not null default now(), constraint "sandbox_webhooks_pkey" primary key ("id"), constraint "sandbox_webhooks_provider_account_key_unique" unique ("provider", "account_key"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_events" cascade;`);
    this.addSql(`drop table if exists "sandbox_idempotency_keys" cascade;`);
    this.addSql(`drop table if exists "sandbox_objects" cascade;`);
    this.addSql(`drop table if exists "sandbox_webhooks" cascade;`);
  }
}

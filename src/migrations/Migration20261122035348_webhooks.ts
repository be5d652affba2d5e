import { Migration } from '@mikro-orm/migrations';

export class Migration20261122035348_webhooks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "test_clocks" ("merchant_id" uuid not null, "offset_ms" bigint not null default 0, "updated_at" timestamptz not null default now(), constraint "test_clocks_pkey" primary key ("merchant_id"));`);

    this.addSql(`create table "webhook_endpoints" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "url" text not null, "description" text null, "enabled" boolean not null default true, "enabled_events" jsonb not null, "disabled_reason" varchar(32) null, "secret_sealed" text not null, "previous_secret_sealed" text null, "previous_secret_expires_at" timestamptz null, "failing_since" timestamptz null, "deleted_at" timestamptz null, "updated_at" timestamptz not null default now(), constraint "webhook_endpoints_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_endpoints_merchant_id_mode_id_index" on "webhook_endpoints" ("merchant_id", "mode", "id");`);

    this.addSql(`create table "webhook_deliveries" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "endpoint_id" uuid not null, "event_id" uuid not null, "event_type" varchar(64) not null, "status" text check ("status" in ('pending', 'succeeded', 'failed')) not null default 'pending', "attempts" int not null default 0, "response_status" int null, "error" text null, "latency_ms" int null, "response_body" text null, "next_attempt_at" timestamptz null, "last_attempt_at" timestamptz null, "locked_until" timestamptz null, "lock_token" uuid null, "attempt_log" jsonb not null, "updated_at" timestamptz not null default now(), constraint "webhook_deliveries_pkey" primary key ("id"));`);
    this.addSql(`create index "webhook_deliveries_merchant_id_mode_id_index" on "webhook_deliveries" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`);
    this.addSql(`create index "webhook_deliveries_merchant_id_mode_endpoint_id_id_index" on "webhook_deliveries" ("merchant_id", "mode", "endpoint_id", "id");`);

    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_endpoint_id_foreign" foreign key ("endpoint_id") references "webhook_endpoints" ("id") on update cascade;`);

    // Wakes delivery workers (LISTEN cadence_webhooks) when any feature writes outbox events; NOTIFY is delivered at
    // commit, once per transaction, so workers never look for an event that is not there yet.
    this.addSql(`create or replace function "cadence_webhooks_notify"() returns trigger language plpgsql as $$ begin perform pg_notify('cadence_webhooks', ''); return null; end $$;`);
    this.addSql(`create trigger "outbox_events_notify_webhooks" after insert on "outbox_events" for each statement execute function "cadence_webhooks_notify"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "outbox_events_notify_webhooks" on "outbox_events";`);
    this.addSql(`drop function if exists "cadence_webhooks_notify"();`);

    this.addSql(`alter table "webhook_deliveries" drop constraint "webhook_deliveries_endpoint_id_foreign";`);

    this.addSql(`drop table if exists "test_clocks" cascade;`);

    this.addSql(`drop table if exists "webhook_endpoints" cascade;`);

    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
  }

}

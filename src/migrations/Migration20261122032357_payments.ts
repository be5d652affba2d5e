import { Migration } from '@mikro-orm/migrations';

export class Migration20261122032357_payments extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "customers" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "email" varchar(255) not null, "name" varchar(255) null, "phone" varchar(255) null, "state_code" varchar(2) null, "gstin" varchar(15) null, "updated_at" timestamptz not null default now(), constraint "customers_pkey" primary key ("id"));`);
    this.addSql(`create index "customers_merchant_id_mode_id_index" on "customers" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "customers" add constraint "customers_merchant_id_mode_email_unique" unique ("merchant_id", "mode", "email");`);

    this.addSql(`create table "gateway_events" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "provider" text check ("provider" in ('stripe', 'razorpay')) not null, "event_id" varchar(255) not null, "type" varchar(255) not null, "connection_id" uuid not null, "payload" jsonb not null, constraint "gateway_events_pkey" primary key ("id"));`);
    this.addSql(`create index "gateway_events_merchant_id_mode_id_index" on "gateway_events" ("merchant_id", "mode", "id");`);
    this.addSql(`create unique index "gateway_events_provider_event_unique" on "gateway_events" ("provider", "event_id");`);

    this.addSql(`create table "idempotency_keys" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "key" varchar(255) not null, "fingerprint" varchar(64) not null, "state" varchar(16) not null, "resource_id" uuid not null, "locked_until" timestamptz not null, "expires_at" timestamptz not null, "response_status" int null, "response_body" text null, constraint "idempotency_keys_pkey" primary key ("id"));`);
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`);
    this.addSql(`alter table "idempotency_keys" add constraint "idempotency_keys_merchant_id_mode_key_unique" unique ("merchant_id", "mode", "key");`);

    this.addSql(`create table "outbox_events" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "type" varchar(64) not null, "payload" jsonb not null, "dispatched_at" timestamptz null, constraint "outbox_events_pkey" primary key ("id"));`);
    this.addSql(`create index "outbox_events_merchant_id_mode_id_index" on "outbox_events" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "outbox_events_dispatched_at_id_index" on "outbox_events" ("dispatched_at", "id");`);

    this.addSql(`create table "payments" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "amount" bigint not null, "amount_refunded" bigint not null default 0, "currency" varchar(3) not null, "status" text check ("status" in ('pending', 'succeeded', 'failed', 'expired', 'partially_refunded', 'refunded')) not null default 'pending', "customer_id" uuid not null, "customer_email" varchar(255) not null, "customer_name" varchar(255) null, "customer_phone" varchar(255) null, "reference_id" varchar(255) null, "metadata" jsonb not null, "provider" text check ("provider" in ('stripe', 'razorpay')) not null, "connection_id" uuid null, "provider_payment_id" varchar(255) null, "checkout_session_id" varchar(255) not null, "checkout_url" text not null, "success_url" text not null, "cancel_url" text not null, "failure_reason" varchar(255) null, "method" varchar(255) null, "bank" varchar(255) null, "updated_at" timestamptz not null default now(), constraint "payments_pkey" primary key ("id"));`);
    this.addSql(`create index "payments_merchant_id_mode_id_index" on "payments" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "payments_merchant_id_mode_customer_id_id_index" on "payments" ("merchant_id", "mode", "customer_id", "id");`);
    this.addSql(`create index "payments_checkout_session_id_index" on "payments" ("checkout_session_id");`);

    this.addSql(`create table "provider_connections" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "provider" text check ("provider" in ('stripe', 'razorpay')) not null, "status" varchar(16) not null default 'active', "is_default" boolean not null default false, "credentials_hint" varchar(255) not null, "credentials_sealed" text not null, "webhook_url" text not null, constraint "provider_connections_pkey" primary key ("id"));`);
    this.addSql(`create index "provider_connections_merchant_id_mode_id_index" on "provider_connections" ("merchant_id", "mode", "id");`);
    this.addSql(`alter table "provider_connections" add constraint "provider_connections_merchant_id_mode_provider_unique" unique ("merchant_id", "mode", "provider");`);

    this.addSql(`create table "refunds" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "payment_id" uuid not null, "amount" bigint not null, "currency" varchar(3) not null, "status" text check ("status" in ('pending', 'succeeded', 'failed')) not null default 'pending', "reason" varchar(255) null, "provider_refund_id" varchar(255) null, "failure_reason" varchar(255) null, constraint "refunds_pkey" primary key ("id"));`);
    this.addSql(`create index "refunds_payment_id_index" on "refunds" ("payment_id");`);
    this.addSql(`create index "refunds_merchant_id_mode_id_index" on "refunds" ("merchant_id", "mode", "id");`);

    this.addSql(`alter table "payments" add constraint "payments_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade;`);

    this.addSql(`alter table "refunds" add constraint "refunds_payment_id_foreign" foreign key ("payment_id") references "payments" ("id") on update cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "payments" drop constraint "payments_customer_id_foreign";`);

    this.addSql(`alter table "refunds" drop constraint "refunds_payment_id_foreign";`);

    this.addSql(`drop table if exists "customers" cascade;`);

    this.addSql(`drop table if exists "gateway_events" cascade;`);

    this.addSql(`drop table if exists "idempotency_keys" cascade;`);

    this.addSql(`drop table if exists "outbox_events" cascade;`);

    this.addSql(`drop table if exists "payments" cascade;`);

    this.addSql(`drop table if exists "provider_connections" cascade;`);

    this.addSql(`drop table if exists "refunds" cascade;`);
  }

}

import { Migration } from '@mikro-orm/migrations';

export class Migration20261123211507_subscriptions_invoices extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "invoices" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "type" text check ("type" in ('invoice', 'credit_note')) not null, "number" varchar(16) not null, "billing_reason" text check ("billing_reason" in ('subscription_create', 'subscription_cycle', 'subscription_update', 'one_time')) not null, "status" text check ("status" in ('open', 'paid', 'void', 'uncollectible', 'issued')) not null, "customer_id" uuid not null, "subscription_id" uuid null, "payment_id" uuid null, "currency" varchar(3) not null, "subtotal" bigint not null, "cgst_amount" bigint not null default 0, "sgst_amount" bigint not null default 0, "igst_amount" bigint not null default 0, "tax_amount" bigint not null default 0, "total" bigint not null, "credit_applied" bigint not null default 0, "amount_paid" bigint not null default 0, "amount_due" bigint not null, "tax_rate_bps" int not null default 0, "place_of_supply" varchar(2) null, "supplier_gstin" varchar(15) null, "customer_gstin" varchar(15) null, "line_items" jsonb not null, "related_invoice_id" uuid null, "period_start" timestamptz null, "period_end" timestamptz null, "issued_at" timestamptz not null, "paid_at" timestamptz null, constraint "invoices_pkey" primary key ("id"));`);
    this.addSql(`create index "invoices_merchant_id_mode_id_index" on "invoices" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "invoices_merchant_id_mode_subscription_id_id_index" on "invoices" ("merchant_id", "mode", "subscription_id", "id");`);
    this.addSql(`create index "invoices_merchant_id_mode_customer_id_id_index" on "invoices" ("merchant_id", "mode", "customer_id", "id");`);
    this.addSql(`alter table "invoices" add constraint "invoices_merchant_id_mode_type_number_unique" unique ("merchant_id", "mode", "type", "number");`);

    this.addSql(`create table "invoice_sequences" ("merchant_id" uuid not null, "mode" text not null, "type" text not null, "financial_year" int not null, "last_number" int not null, constraint "invoice_sequences_pkey" primary key ("merchant_id", "mode", "type", "financial_year"));`);

    this.addSql(`create table "subscriptions" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "customer_id" uuid not null, "product_id" uuid not null, "plan_id" uuid not null, "price_id" uuid not null, "status" text check ("status" in ('created', 'trialing', 'active', 'paused', 'past_due', 'halted', 'cancelled', 'completed')) not null default 'created', "currency" varchar(3) not null, "amount" bigint not null, "setup_fee" bigint not null default 0, "billing_frequency" text check ("billing_frequency" in ('daily', 'weekly', 'monthly', 'yearly')) not null, "billing_interval" int not null default 1, "trial_period_days" int not null default 0, "trial_end_action" text check ("trial_end_action" in ('start_subscription', 'cancel_subscription')) not null default 'start_subscription', "provider" text check ("provider" in ('stripe', 'razorpay')) not null, "connection_id" uuid not null, "provider_subscription_id" varchar(255) null, "provider_customer_id" varchar(255) null, "checkout_session_id" varchar(255) null, "checkout_url" text null, "success_url" text not null, "cancel_url" text not null, "cancel_at_period_end" boolean not null default false, "current_period_start" timestamptz null, "current_period_end" timestamptz null, "billing_anchor" timestamptz null, "anchor_cycle" int not null default 0, "trial_start" timestamptz null, "trial_end" timestamptz null, "cycles_completed" int not null default 0, "max_cycles" int null, "paused_at" timestamptz null, "cancelled_at" timestamptz null, "ended_at" timestamptz null, "coupon_code" varchar(255) null, "metadata" jsonb not null, "retry_attempt" int not null default 0, "past_due_since" timestamptz null, "reconciled_at" timestamptz null, "credit_balance" bigint not null default 0, "open_invoice_id" uuid null, "next_action" text check ("next_action" in ('trial_end_cancel', 'period_end_cancel', 'complete', 'retry')) null, "next_action_at" timestamptz null, "pending_command" varchar(255) null, "pending_command_at" timestamptz null, "updated_at" timestamptz not null default now(), constraint "subscriptions_pkey" primary key ("id"));`);
    this.addSql(`create index "subscriptions_merchant_id_mode_id_index" on "subscriptions" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "subscriptions_next_action_index" on "subscriptions" ("next_action_at") where "next_action_at" is not null;`);
    this.addSql(`create index "subscriptions_updated_at_index" on "subscriptions" ("updated_at");`);
    this.addSql(`create index "subscriptions_checkout_session_id_index" on "subscriptions" ("checkout_session_id");`);
    this.addSql(`create index "subscriptions_provider_subscription_id_index" on "subscriptions" ("provider_subscription_id");`);
    this.addSql(`create index "subscriptions_merchant_id_mode_plan_id_id_index" on "subscriptions" ("merchant_id", "mode", "plan_id", "id");`);
    this.addSql(`create index "subscriptions_merchant_id_mode_status_id_index" on "subscriptions" ("merchant_id", "mode", "status", "id");`);
    this.addSql(`create index "subscriptions_merchant_id_mode_customer_id_status_index" on "subscriptions" ("merchant_id", "mode", "customer_id", "status");`);

    this.addSql(`create table "subscription_events" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "subscription_id" uuid not null, "from_state" text check ("from_state" in ('created', 'trialing', 'active', 'paused', 'past_due', 'halted', 'cancelled', 'completed')) null, "to_state" text check ("to_state" in ('created', 'trialing', 'active', 'paused', 'past_due', 'halted', 'cancelled', 'completed')) not null, "event_type" varchar(64) not null, "triggered_by" varchar(16) not null, "metadata_json" jsonb not null, constraint "subscription_events_pkey" primary key ("id"));`);
    this.addSql(`create index "subscription_events_merchant_id_mode_id_index" on "subscription_events" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "subscription_events_subscription_id_id_index" on "subscription_events" ("subscription_id", "id");`);

    this.addSql(`alter table "subscriptions" add constraint "subscriptions_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_product_id_foreign" foreign key ("product_id") references "products" ("id") on update cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_plan_id_foreign" foreign key ("plan_id") references "plans" ("id") on update cascade;`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_price_id_foreign" foreign key ("price_id") references "prices" ("id") on update cascade;`);

    this.addSql(`create table "gateway_clock_syncs" ("merchant_id" uuid not null, "synced_to" timestamptz not null, constraint "gateway_clock_syncs_pkey" primary key ("merchant_id"));`);

    this.addSql(`alter table "merchants" add column "tax_rate_bps" int not null default 1800, add column "sac_code" varchar(8) null, add column "address" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "invoices" cascade;`);

    this.addSql(`drop table if exists "invoice_sequences" cascade;`);

    this.addSql(`drop table if exists "subscriptions" cascade;`);

    this.addSql(`drop table if exists "subscription_events" cascade;`);

    this.addSql(`drop table if exists "gateway_clock_syncs" cascade;`);

    this.addSql(`alter table "merchants" drop column "tax_rate_bps", drop column "sac_code", drop column "address";`);
  }

}

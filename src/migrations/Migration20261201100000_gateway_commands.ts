import { Migration } from '@mikro-orm/migrations';

/**
 * Durable gateway commands (src/modules/gateway-commands, docs/durable-work.md): a gateway call that follows a
 * committed change is a row written in the change's transaction, claimed by the worker (the partial index on due
 * pending rows), retried with backoff until done or given up. NOTIFY cadence_gateway_commands wakes the workers.
 */
export class Migration20261201100000_gateway_commands extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "gateway_commands" ("id" uuid not null, "created_at" timestamptz not null default now(), "merchant_id" uuid not null, "mode" text check ("mode" in ('test', 'live')) not null, "action" varchar(64) not null, "description" text not null, "subscription_id" uuid null, "payment_id" uuid null, "invoice_id" uuid null, "connection_id" uuid not null, "args" jsonb not null, "idempotency_key" text not null, "status" text check ("status" in ('pending', 'succeeded', 'failed')) not null default 'pending', "attempts" int not null default 0, "next_attempt_at" timestamptz null, "last_error" text null, "completed_at" timestamptz null, "give_up_at" timestamptz not null, "lock_token" uuid null, constraint "gateway_commands_pkey" primary key ("id"));`);
    this.addSql(`create index "gateway_commands_merchant_id_mode_id_index" on "gateway_commands" ("merchant_id", "mode", "id");`);
    this.addSql(`create index "gateway_commands_merchant_id_mode_subscription_id_id_index" on "gateway_commands" ("merchant_id", "mode", "subscription_id", "id");`);
    this.addSql(`create index "gateway_commands_merchant_id_mode_payment_id_id_index" on "gateway_commands" ("merchant_id", "mode", "payment_id", "id");`);
    this.addSql(`create index "gateway_commands_due_index" on "gateway_commands" ("next_attempt_at") where "status" = 'pending';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "gateway_commands";');
  }

}

import { Migration } from '@mikro-orm/migrations';

/**
 * One merchant's pending deliveries by due time: what a test-clock advance claims and checks (delivery.store.ts). The
 * cross-tenant due index alone left the planner to combine it with the merchant's index of every delivery it ever
 * had (docs/sandbox.md).
 */
export class Migration20261209110000_webhook_tenant_due extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "webhook_deliveries_tenant_due_index" on "webhook_deliveries" ("merchant_id", "mode", "next_attempt_at") where "status" = 'pending';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_tenant_due_index";`);
  }

}

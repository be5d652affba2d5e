import { Migration } from '@mikro-orm/migrations';

export class Migration20261123223500_outbox_undispatched extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "outbox_events_undispatched_index" on "outbox_events" ("id") where "dispatched_at" is null;`);
    this.addSql(`create index "outbox_events_undispatched_tenant_index" on "outbox_events" ("merchant_id", "mode", "id") where "dispatched_at" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "outbox_events_undispatched_index";`);
    this.addSql(`drop index "outbox_events_undispatched_tenant_index";`);
  }

}

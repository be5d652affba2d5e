import { Migration } from '@mikro-orm/migrations';

export class Migration20261122072223_retention extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "webhook_deliveries_event_id_index";`);
  }

}

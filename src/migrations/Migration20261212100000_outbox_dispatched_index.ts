import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox's (dispatched_at, id) index was read by nothing: the fan-out reads the undispatched partial indexes and
 * retention walks the primary key. Every event paid for it twice (its insert and its dispatch): six of the 83 index
 * entries a renewal wrote (bench/README.md "Where a renewal's writes go").
 */
export class Migration20261212100000_outbox_dispatched_index extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index if exists "outbox_events_dispatched_at_id_index";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create index "outbox_events_dispatched_at_id_index" on "outbox_events" ("dispatched_at", "id");`);
  }

}

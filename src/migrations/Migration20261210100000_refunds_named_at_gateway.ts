import { Migration } from '@mikro-orm/migrations';

/**
 * Whether the gateway was told a refund's id, so its events name it (docs/durable-work.md). Existing refunds were not:
 * their commands are retried as first asked, and an unnamed refund event may still be theirs.
 */
export class Migration20261210100000_refunds_named_at_gateway extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "refunds" add column "named_at_gateway" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "refunds" drop column "named_at_gateway";`);
  }

}

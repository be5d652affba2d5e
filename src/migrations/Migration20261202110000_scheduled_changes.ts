import { Migration } from '@mikro-orm/migrations';

/**
 * A plan change scheduled for the end of the current period (or trial): what it moves to and when the gateway applies
 * it (docs/subscriptions.md "Scheduled changes"). Null when none is scheduled.
 */
export class Migration20261202110000_scheduled_changes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "scheduled_change" jsonb null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "scheduled_change";`);
  }

}

import { Migration } from '@mikro-orm/migrations';

/**
 * Late gateway outcomes: a pause, resume or cancel whose gateway call timed out stays pending on the subscription
 * (`pending_outcome`) until the gateway's event or the reconciliation pass settles it; a partial index finds them.
 */
export class Migration20261201120000_pending_outcomes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "pending_outcome" jsonb null;`);
    this.addSql(`create index "subscriptions_pending_outcome_index" on "subscriptions" ("id") where "pending_outcome" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "subscriptions_pending_outcome_index";`);
    this.addSql(`alter table "subscriptions" drop column "pending_outcome";`);
  }

}

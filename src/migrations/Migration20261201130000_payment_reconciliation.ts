import { Migration } from '@mikro-orm/migrations';

/**
 * One-off payments are reconciled like subscriptions: a payment still pending well after its checkout opened is read
 * back from its gateway (`reconciled_at`: when it last was), found by a partial index on pending checkouts.
 */
export class Migration20261201130000_payment_reconciliation extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "payments" add column "reconciled_at" timestamptz null;`);
    this.addSql(`create index "payments_pending_checkout_index" on "payments" ("created_at") where "status" = 'pending' and "checkout_session_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "payments_pending_checkout_index";`);
    this.addSql(`alter table "payments" drop column "reconciled_at";`);
  }

}

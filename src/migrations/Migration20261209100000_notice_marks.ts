import { Migration } from '@mikro-orm/migrations';

/**
 * The pre-debit notices' due lookup without a join (docs/india.md): each subscription keeps the debit instant its
 * notice announced, filled from the notices already sent, and a partial index holds the INR renewals not yet
 * announced by their period's end, so the worker's sweep (several times a second per process) reads only those due
 * within the notice lead instead of every subscription, whatever the planner's statistics say about the notices.
 */
export class Migration20261209100000_notice_marks extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "noticed_debit_at" timestamptz null;`);
    this.addSql(`update "subscriptions" s set "noticed_debit_at" = s."current_period_end" where exists (select 1 from "pre_debit_notices" n where n."subscription_id" = s."id" and n."debit_at" = s."current_period_end");`);
    this.addSql(`create index "subscriptions_notice_due_index" on "subscriptions" ("current_period_end") where "status" in ('active', 'trialing') and "currency" = 'INR' and not "cancel_at_period_end" and "provider_subscription_id" is not null and "noticed_debit_at" is distinct from "current_period_end";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "subscriptions_notice_due_index";`);
    this.addSql(`alter table "subscriptions" drop column if exists "noticed_debit_at";`);
  }

}

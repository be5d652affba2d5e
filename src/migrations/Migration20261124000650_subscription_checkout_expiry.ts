import { Migration } from '@mikro-orm/migrations';

/**
 * Abandoned checkouts (docs/subscriptions.md): a subscription's hosted checkout that nobody completes is ended by the scheduler
 * (`checkout_expiry`, SUBSCRIPTION_CHECKOUT_EXPIRY_SECONDS after creation). Subscriptions already waiting at checkout
 * get the action 24 h (the default) after they were created.
 */
export class Migration20261124000650_subscription_checkout_expiry extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop constraint if exists "subscriptions_next_action_check";`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_next_action_check" check ("next_action" in ('checkout_expiry', 'trial_end_cancel', 'period_end_cancel', 'complete', 'retry'));`);
    this.addSql(`update "subscriptions" set "next_action" = 'checkout_expiry', "next_action_at" = "created_at" + interval '1 day' where "status" = 'created' and "next_action" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`update "subscriptions" set "next_action" = null, "next_action_at" = null where "next_action" = 'checkout_expiry';`);
    this.addSql(`alter table "subscriptions" drop constraint if exists "subscriptions_next_action_check";`);
    this.addSql(`alter table "subscriptions" add constraint "subscriptions_next_action_check" check ("next_action" in ('trial_end_cancel', 'period_end_cancel', 'complete', 'retry'));`);
  }

}

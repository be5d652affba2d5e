import { Migration } from '@mikro-orm/migrations';

/**
 * The reconciliation job's lookup of subscriptions whose gateway event is overdue, across merchants
 * (subscription.store.ts overdueAtGateway): by the instant the gateway should have reported, so a pass reads the few
 * that are overdue instead of every trialing and active subscription (0.5 s a pass at 100,000).
 */
export class Migration20261211100000_gateway_overdue_index extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create index "subscriptions_gateway_overdue_index" on "subscriptions"
      ((case when "status" = 'trialing' then "trial_end" else "current_period_end" end))
      where "status" in ('trialing', 'active') and "provider_subscription_id" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "subscriptions_gateway_overdue_index";`);
  }

}

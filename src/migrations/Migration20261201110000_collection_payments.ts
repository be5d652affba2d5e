import { Migration } from '@mikro-orm/migrations';

/**
 * Every collection is a payment: a subscription's renewals, retries and adjustments are payments too (billing_reason,
 * subscription_id), named by their invoices' payment_id; they have no hosted checkout, so its columns may be null.
 */
export class Migration20261201110000_collection_payments extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "payments" add column "billing_reason" text check ("billing_reason" in ('one_time', 'subscription_create', 'subscription_cycle', 'subscription_retry', 'subscription_update')) not null default 'one_time', add column "subscription_id" uuid null;`);
    this.addSql(`alter table "payments" alter column "checkout_session_id" drop not null, alter column "checkout_url" drop not null, alter column "success_url" drop not null, alter column "cancel_url" drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "payments" where "billing_reason" <> 'one_time';`);
    this.addSql(`alter table "payments" drop column "billing_reason", drop column "subscription_id";`);
    this.addSql(`alter table "payments" alter column "checkout_session_id" set not null, alter column "checkout_url" set not null, alter column "success_url" set not null, alter column "cancel_url" set not null;`);
  }

}

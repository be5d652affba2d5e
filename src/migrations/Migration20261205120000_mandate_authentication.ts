import { Migration } from '@mikro-orm/migrations';

/**
 * Mandate debits (docs/india.md): the merchant's limit above which a debit needs the customer's authentication, on
 * an invoice the gateway's page where the customer authenticates its debit, a debit the customer declined, and the
 * subscription's mandate (method, bank, status).
 */
export class Migration20261205120000_mandate_authentication extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "merchants" add column "mandate_afa_limit" int not null default 1500000;`);
    this.addSql(`alter table "pre_debit_notices" add column "declined_at" timestamptz null;`);
    this.addSql(`alter table "subscriptions" add column "mandate_status" text null, add column "mandate_method" text null, add column "mandate_bank" text null, add column "mandate_authorized_at" timestamptz null, add column "mandate_revoked_at" timestamptz null;`);
    this.addSql(`alter table "invoices" add column "hosted_authentication_url" text null, add column "authentication_required_at" timestamptz null;`);
    // The autopay analytics count them by window; few invoices ever have one.
    this.addSql(`create index "invoices_authentication_required_at_index" on "invoices" ("merchant_id", "mode", "authentication_required_at") where "authentication_required_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "invoices_authentication_required_at_index";`);
    this.addSql(`alter table "invoices" drop column "hosted_authentication_url", drop column "authentication_required_at";`);
    this.addSql(`alter table "subscriptions" drop column "mandate_status", drop column "mandate_method", drop column "mandate_bank", drop column "mandate_authorized_at", drop column "mandate_revoked_at";`);
    this.addSql(`alter table "pre_debit_notices" drop column "declined_at";`);
    this.addSql(`alter table "merchants" drop column "mandate_afa_limit";`);
  }

}

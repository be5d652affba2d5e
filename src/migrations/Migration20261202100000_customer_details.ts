import { Migration } from '@mikro-orm/migrations';

/**
 * Customers can be made before any purchase (docs/payments.md, "Customers"): they also carry a postal `address` (text,
 * printed as the recipient's on tax invoices) and `metadata` (the merchant's own keys; existing customers start empty).
 */
export class Migration20261202100000_customer_details extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "customers" add column "address" text null, add column "metadata" jsonb not null default '{}';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "customers" drop column "address", drop column "metadata";`);
  }

}

import { Migration } from '@mikro-orm/migrations';

/**
 * A subscription keeps its price's tax_behavior (docs/invoices-and-gst.md, "Tax-inclusive prices"): its invoices and
 * its gateway amounts follow it. Every existing subscription is tax-exclusive.
 */
export class Migration20261204100100_subscription_tax_behavior extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "subscriptions" add column "tax_behavior" text check ("tax_behavior" in ('exclusive', 'inclusive')) not null default 'exclusive';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "subscriptions" drop column "tax_behavior";`);
  }

}

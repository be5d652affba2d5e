import { Migration } from '@mikro-orm/migrations';

/**
 * A price is tax-exclusive (GST added on top, as every existing price is) or tax-inclusive (its amount contains the
 * GST): docs/catalog.md and docs/invoices-and-gst.md, "Tax-inclusive prices".
 */
export class Migration20261204100000_price_tax_behavior extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "prices" add column "tax_behavior" text check ("tax_behavior" in ('exclusive', 'inclusive')) not null default 'exclusive';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "prices" drop column "tax_behavior";`);
  }

}

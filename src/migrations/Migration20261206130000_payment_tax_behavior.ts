import { Migration } from '@mikro-orm/migrations';

/**
 * A one-off payment's tax_behavior (docs/payments.md): `inclusive`, its amount contains its GST and is what the checkout
 * charges. Every existing payment is tax-exclusive.
 */
export class Migration20261206130000_payment_tax_behavior extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "payments" add column "tax_behavior" text check ("tax_behavior" in ('exclusive', 'inclusive')) not null default 'exclusive';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "payments" drop column "tax_behavior";`);
  }

}

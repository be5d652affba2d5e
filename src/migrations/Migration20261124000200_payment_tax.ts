import { Migration } from '@mikro-orm/migrations';

/**
 * One-time payments collect GST (docs/invoices-and-gst.md): the tax fixed at creation, the amount the checkout charges,
 * the tax parties the invoice is computed from, and each refund's amount at the gateway. Existing payments were charged
 * their amount untaxed: tax_amount 0, amount_total = amount, and their refunds went to the gateway as they were.
 */
export class Migration20261124000200_payment_tax extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "payments" add column "tax_amount" bigint not null default 0, add column "amount_total" bigint null, add column "gateway_amount_refunded" bigint not null default 0, add column "tax_parties" jsonb null;`);
    this.addSql(`update "payments" set "amount_total" = "amount", "gateway_amount_refunded" = "amount_refunded";`);
    this.addSql(`alter table "payments" alter column "amount_total" set not null;`);
    this.addSql(`alter table "refunds" add column "gateway_amount" bigint null;`);
    this.addSql(`update "refunds" set "gateway_amount" = "amount";`);
    this.addSql(`alter table "refunds" alter column "gateway_amount" set not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "refunds" drop column "gateway_amount";`);
    this.addSql(`alter table "payments" drop column "tax_amount", drop column "amount_total", drop column "gateway_amount_refunded", drop column "tax_parties";`);
  }

}

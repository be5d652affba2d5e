import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds are money returned; refunds issue credit notes (docs/invoices-and-gst.md "Credit notes", docs/payments.md
 * "Tax and refund amounts"):
 * - invoices: `billing_reason` `refund` (a refund's credit note); `amount_credited`, the sum of the totals of the credit
 *   notes against an invoice (backfilled 0: no credit note named its invoice before), never negative nor above the
 *   total; `refund_id`, the refund a credit note documents (at most one credit note per refund).
 * - refunds and payments: a refund's `amount` was the tax-exclusive part and its `gateway_amount` the money returned;
 *   both are now the money returned (`amount` = `gateway_amount`), and a payment's `amount_refunded` counts against
 *   `amount_total` (= its `gateway_amount_refunded`). Untaxed payments are unchanged (the two were equal). Earlier
 *   refunds get no credit note afterwards.
 */
export class Migration20261129100000_refund_credit_notes extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "invoices" drop constraint if exists "invoices_billing_reason_check";`);
    this.addSql(`alter table "invoices" add constraint "invoices_billing_reason_check" check ("billing_reason" in ('subscription_create', 'subscription_cycle', 'subscription_update', 'one_time', 'refund'));`);
    this.addSql(`alter table "invoices" add column "amount_credited" bigint not null default 0, add column "refund_id" uuid null;`);
    this.addSql(`alter table "invoices" add constraint "invoices_amount_credited_check" check ("amount_credited" >= 0 and "amount_credited" <= "total");`);
    this.addSql(`create unique index "invoices_refund_id_unique" on "invoices" ("refund_id") where "refund_id" is not null;`);
    this.addSql(`update "refunds" set "amount" = "gateway_amount" where "amount" <> "gateway_amount";`);
    this.addSql(`update "payments" set "amount_refunded" = "gateway_amount_refunded" where "amount_refunded" <> "gateway_amount_refunded";`);
  }

  override async down(): Promise<void> {
    // Refund amounts stay money returned (the tax-exclusive part is not kept); refund credit notes must be removed first.
    this.addSql(`drop index if exists "invoices_refund_id_unique";`);
    this.addSql(`alter table "invoices" drop constraint if exists "invoices_amount_credited_check";`);
    this.addSql(`alter table "invoices" drop column if exists "refund_id", drop column if exists "amount_credited";`);
    this.addSql(`alter table "invoices" drop constraint if exists "invoices_billing_reason_check";`);
    this.addSql(`alter table "invoices" add constraint "invoices_billing_reason_check" check ("billing_reason" in ('subscription_create', 'subscription_cycle', 'subscription_update', 'one_time'));`);
  }

}

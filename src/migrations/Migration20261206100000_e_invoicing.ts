import { Migration } from '@mikro-orm/migrations';

/**
 * GST e-invoicing (docs/india.md, "E-invoicing"): the merchant's switch, and on invoices and credit notes their
 * registration with the invoice registration portal (IRN, acknowledgement, signed QR, status). A registration is
 * a durable command with no payment gateway behind it, so a command's gateway connection becomes optional.
 */
export class Migration20261206100000_e_invoicing extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "merchants" add column "e_invoicing" boolean not null default false;`);
    this.addSql(`alter table "invoices" add column "e_invoice_status" text null, add column "irn" varchar(64) null, add column "ack_no" text null, add column "ack_date" timestamptz null, add column "signed_qr" text null, add column "e_invoice_error" text null, add column "e_invoice_cancelled_at" timestamptz null;`);
    this.addSql(`alter table "gateway_commands" alter column "connection_id" drop not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "gateway_commands" where "connection_id" is null;`);
    this.addSql(`alter table "gateway_commands" alter column "connection_id" set not null;`);
    this.addSql(`alter table "invoices" drop column "e_invoice_status", drop column "irn", drop column "ack_no", drop column "ack_date", drop column "signed_qr", drop column "e_invoice_error", drop column "e_invoice_cancelled_at";`);
    this.addSql(`alter table "merchants" drop column "e_invoicing";`);
  }

}

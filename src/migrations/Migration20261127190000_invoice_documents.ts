import { Migration } from '@mikro-orm/migrations';

/**
 * Rendered PDFs of issued documents (src/modules/invoices/invoice.documents.ts): each is rendered once per printed
 * state and kept, so a repeated download costs one indexed read instead of a render. Removed with its invoice.
 */
export class Migration20261127190000_invoice_documents extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "invoice_documents" (
      "invoice_id" uuid not null primary key references "invoices" ("id") on delete cascade,
      "merchant_id" uuid not null,
      "mode" text not null,
      "printed_state" text not null,
      "pdf" bytea not null,
      "rendered_at" timestamptz not null
    );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "invoice_documents";');
  }

}

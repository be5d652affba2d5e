import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox's invoice registration portal (src/gateways/sandbox/irp.ts): its signing key (made once, the private
 * half sealed, so restarts and other sandbox processes on the database sign with the same published key), the
 * documents it registered, and its acknowledgement numbers.
 */
export class Migration20261206100000_sandbox_irp extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists "sandbox_irp_keys" ("kid" text not null, "private_key" text not null, "public_jwk" jsonb not null, "created_at" timestamptz not null default now(), constraint "sandbox_irp_keys_pkey" primary key ("kid"));`,
    );
    this.addSql(
      `create table if not exists "sandbox_irp_documents" ("irn" varchar(64) not null, "supplier_gstin" varchar(15) not null, "doc_type" text not null, "doc_no" text not null, "ack_no" bigint not null, "ack_date" timestamptz not null, "signed_qr" text not null, "status" text not null default 'ACT', "cancelled_at" timestamptz null, "cancel_reason" text null, constraint "sandbox_irp_documents_pkey" primary key ("irn"));`,
    );
    this.addSql(`create sequence if not exists "sandbox_irp_ack_numbers" start 112600000000001;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop sequence if exists "sandbox_irp_ack_numbers";`);
    this.addSql(`drop table if exists "sandbox_irp_documents" cascade;`);
    this.addSql(`drop table if exists "sandbox_irp_keys" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * The certificate (and its key, sealed) the sandbox shows to clients that tunnel to a gateway's host through it
 * (src/gateways/sandbox/tls-identity.ts), one per host: made once, so restarts and other sandbox processes on the same
 * database show the same one, which clients trust through NODE_EXTRA_CA_CERTS.
 */
export class Migration20261128040000_sandbox_tls_identities extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table if not exists "sandbox_tls_identities" ("host" text not null, "certificate" text not null, "private_key" text not null, "created_at" timestamptz not null default now(), constraint "sandbox_tls_identities_pkey" primary key ("host"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_tls_identities" cascade;`);
  }
}

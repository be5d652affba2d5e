import { Client } from 'pg';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { openSandboxDatabase } from '../../src/gateways/sandbox';
import { freshDatabase } from '../harness/database';

/**
 * The sandbox migrates its own tables (src/gateways/sandbox/migrations, recorded in sandbox_migrations). The
 * service's migrations no longer create them; databases where an older service did keep their tables and rows.
 */

async function query<T = any>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows as T[];
  } finally {
    await c.end();
  }
}

const sandboxTables = (url: string) =>
  query<{ table_name: string }>(
    url,
    `select table_name from information_schema.tables where table_name like 'sandbox\\_%' order by table_name`,
  ).then((rows) => rows.map((r) => r.table_name));

it('a new database: the service creates no sandbox table, the sandbox creates its own (several starting together)', async () => {
  const db = await freshDatabase('cadence_sbmig');
  try {
    const orm = await openDatabase(db.url, entities, 2);
    expect(await sandboxTables(db.url)).toEqual([]);
    const sandboxes = await Promise.all([1, 2, 3].map(() => openSandboxDatabase(db.url, 2)));
    expect(await sandboxTables(db.url)).toEqual([
      'sandbox_clocks',
      'sandbox_events',
      'sandbox_idempotency_keys',
      'sandbox_irp_documents',
      'sandbox_irp_keys',
      'sandbox_migrations',
      'sandbox_objects',
      'sandbox_tls_identities',
      'sandbox_webhooks',
    ]);
    const applied = await query(db.url, 'select name from sandbox_migrations order by id');
    expect(applied.map((r) => r.name)).toEqual([
      'Migration20261123200000_sandbox_tables',
      'Migration20261124090000_sandbox_clocks',
      'Migration20261124100000_sandbox_subscription_due',
      'Migration20261128040000_sandbox_tls_identities',
      'Migration20261206100000_sandbox_irp',
    ]);
    // The renewal pick reads the due subscriptions of one account through this partial index.
    const [index] = await query<{ indexdef: string }>(
      db.url,
      `select indexdef from pg_indexes where indexname = 'sandbox_objects_subscription_due_index'`,
    );
    expect(index?.indexdef).toMatch(/\(account_key, due_at, id\) WHERE \(type = 'subscription'::text\)/);
    await Promise.all([orm, ...sandboxes].map((o) => o.close(true)));
  } finally {
    await db.drop();
  }
});

it('a database whose tables an older service created: the first sandbox migration changes nothing', async () => {
  const db = await freshDatabase('cadence_sbold');
  try {
    const orm = await openDatabase(db.url, entities, 2);
    // What Migration20261122031548_sandbox used to create, with a row in it.
    await query(
      db.url,
      `create table "sandbox_objects" ("id" text not null, "provider" text not null, "account_key" text not null, "type" text not null, "data" jsonb not null, "internal" jsonb not null, "due_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), constraint "sandbox_objects_pkey" primary key ("id"))`,
    );
    await query(db.url, `create index "sandbox_objects_due_at_index" on "sandbox_objects" ("due_at")`);
    await query(
      db.url,
      `create table "sandbox_webhooks" ("id" uuid not null, "provider" text not null, "account_key" text not null, "external_id" text not null, "url" text not null, "secret" text not null, "events" jsonb not null, "created_at" timestamptz not null default now(), constraint "sandbox_webhooks_pkey" primary key ("id"))`,
    );
    await query(
      db.url,
      `alter table "sandbox_webhooks" add constraint "sandbox_webhooks_provider_account_key_unique" unique ("provider", "account_key")`,
    );
    await query(
      db.url,
      `insert into sandbox_objects (id, provider, account_key, type, data, internal) values ('cs_test_old', 'stripe', 'acct', 'checkout_session', '{}', '{}')`,
    );

    const sandbox = await openSandboxDatabase(db.url, 2);
    expect(await query(db.url, 'select id from sandbox_objects')).toEqual([{ id: 'cs_test_old' }]);
    expect(await sandboxTables(db.url)).toContain('sandbox_events'); // the missing ones are created
    const service = await query(db.url, 'select name from mikro_orm_migrations');
    expect(service.map((r) => r.name)).toContain('Migration20261122031548_sandbox'); // its old entry stays
    await Promise.all([orm, sandbox].map((o) => o.close(true)));
  } finally {
    await db.drop();
  }
});

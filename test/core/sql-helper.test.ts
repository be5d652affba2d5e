import { Pool } from 'pg';
import { Mode } from '../../src/core/entity';
import { systemQuery, tenantQueryAs } from '../../src/core/sql';
import { FreshDatabase, freshDatabase } from '../harness/database';

/**
 * src/core/sql.ts writes the tenant condition itself: a statement sees only its tenant's rows, gets its parameters
 * in the right places in both placeholder styles, and does not run without a tenant or without naming one.
 */

let db: FreshDatabase;
let pool: Pool;
const A = { merchantId: '00000000-0000-0000-0000-00000000000a', mode: Mode.TEST };
const B = { merchantId: '00000000-0000-0000-0000-00000000000b', mode: Mode.TEST };

beforeAll(async () => {
  db = await freshDatabase('cadence_sql');
  pool = new Pool({ connectionString: db.url, max: 2 });
  await pool.query(
    `create table notes (id int primary key, merchant_id uuid not null, mode text not null, body text not null)`,
  );
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe('tenant statements', () => {
  it('insert with {tenant_values}, read back with {tenant}: each tenant sees its own rows only', async () => {
    const ins = `insert into notes (id, merchant_id, mode, body) values (?, {tenant_values}, ?) returning id`;
    expect(await tenantQueryAs(pool, A, ins, [1, 'a1'])).toEqual([{ id: 1 }]);
    await tenantQueryAs(pool, A, ins, [2, 'a2']);
    await tenantQueryAs(pool, B, ins, [3, 'b1']);
    await tenantQueryAs(pool, { ...A, mode: Mode.LIVE }, ins, [4, 'a-live']);
    const mine = (t: typeof A) =>
      tenantQueryAs<{ body: string }>(pool, t, 'select body from notes where {tenant} and id > ? order by id', [0]);
    expect((await mine(A)).map((r) => r.body)).toEqual(['a1', 'a2']);
    expect((await mine(B)).map((r) => r.body)).toEqual(['b1']);
    expect((await mine({ ...A, mode: Mode.LIVE })).map((r) => r.body)).toEqual(['a-live']);
  });

  it('puts parameters around the tenant condition in order, with aliases and $n placeholders too', async () => {
    const rows = await tenantQueryAs<{ id: number }>(
      pool,
      A,
      `select n.id from notes n where n.id >= ? and {tenant:n} and n.body like ? order by n.id`,
      [2, 'a%'],
    );
    expect(rows).toEqual([{ id: 2 }]);
    const dollar = await tenantQueryAs<{ id: number }>(pool, B, 'select id from notes where body = $1 and {tenant}', [
      'b1',
    ]);
    expect(dollar).toEqual([{ id: 3 }]);
  });

  it('refuses to run without a tenant, or without naming the tenant columns', async () => {
    await expect(
      tenantQueryAs(pool, { merchantId: '', mode: Mode.TEST }, 'select id from notes where {tenant}', []),
    ).rejects.toThrow(/without a tenant/);
    await expect(tenantQueryAs(pool, undefined as never, 'select id from notes where {tenant}', [])).rejects.toThrow(
      /without a tenant/,
    );
    await expect(tenantQueryAs(pool, A, 'select id from notes', [])).rejects.toThrow(/without \{tenant\}/);
    await expect(systemQuery(pool, 'select id from notes where {tenant}')).rejects.toThrow(/system statement/);
    expect(await systemQuery<{ n: number }>(pool, 'select count(*)::int as n from notes')).toEqual([{ n: 4 }]);
  });
});

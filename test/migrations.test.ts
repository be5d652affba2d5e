import crypto from 'node:crypto';
import { Client } from 'pg';
import { ensureDatabase, openDatabase } from '../src/core/db';
import { migrationsList } from '../src/migrations';

// Several API and worker processes may start at once on one database: one migrates, the others wait and find
// nothing left to do.
it('applies migrations once when several processes start together', async () => {
  const admin = process.env.TEST_PG_ADMIN_URL!;
  const name = `cadence_mig_${crypto.randomBytes(4).toString('hex')}`;
  await ensureDatabase(admin, name);
  const u = new URL(admin);
  u.pathname = `/${name}`;
  try {
    const orms = await Promise.all([1, 2, 3, 4].map(() => openDatabase(u.toString(), 2)));
    const c = new Client({ connectionString: u.toString() });
    await c.connect();
    const { rows } = await c.query('select name from mikro_orm_migrations order by id');
    await c.end();
    expect(rows.map((r) => r.name)).toEqual(migrationsList.map((m) => m.name));
    await Promise.all(orms.map((o) => o.close(true)));
  } finally {
    const c = new Client({ connectionString: admin });
    await c.connect();
    await c.query(`drop database if exists "${name}" with (force)`);
    await c.end();
  }
});

import { Client } from 'pg';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { migrationsList } from '../../src/migrations';
import { freshDatabase } from '../harness/database';

// Several API and worker processes may start at once on one database: one migrates, the others wait and find
// nothing left to do.
it('applies migrations once when several processes start together', async () => {
  const db = await freshDatabase('cadence_mig');
  try {
    const orms = await Promise.all([1, 2, 3, 4].map(() => openDatabase(db.url, entities, 2)));
    const c = new Client({ connectionString: db.url });
    await c.connect();
    const { rows } = await c.query('select name from mikro_orm_migrations order by id');
    await c.end();
    expect(rows.map((r) => r.name)).toEqual(migrationsList.map((m) => m.name));
    await Promise.all(orms.map((o) => o.close(true)));
  } finally {
    await db.drop();
  }
});

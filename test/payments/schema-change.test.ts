/**
 * Hot paths run prepared statements (src/core/sql.ts). A migration that adds a column while a process runs changes
 * the result type under them (PostgreSQL: "cached plan must not change result type"); the process must carry on.
 */
import { useHarness } from '../harness';
import { connect, createPayment } from './helpers';

const h = useHarness({ dbPoolMax: 1 }); // one plain connection: the statements prepared before are reused

it('keeps creating and reading payments after a migration adds columns to their tables', async () => {
  const m = await h.merchant();
  await connect(m.test, 'stripe');
  const before = await createPayment(m.test);
  expect((await m.test.get(`/payments/${before.id}`)).status).toBe(200);

  await h.app.orm.em
    .getConnection()
    .execute('alter table payments add column added_later int; alter table customers add column added_later int');

  const after = await createPayment(m.test);
  expect(after).toMatchObject({ object: 'payment', status: 'pending' });
  const got = await m.test.get(`/payments/${after.id}`);
  expect(got.status).toBe(200);
  expect(got.body).not.toHaveProperty('added_later');
  expect((await m.test.get(`/payments/${before.id}`)).body.id).toBe(before.id);
});

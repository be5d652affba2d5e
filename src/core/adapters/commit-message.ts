import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrmTransaction } from './knex-transaction';

/**
 * Runs `statements`, then COMMIT, then BEGIN, in one simple-query message on the transaction's connection, and answers
 * each statement's rows. MikroORM inlines the parameters (so pg sends a simple query, which may hold several
 * statements) and answers one result per statement; knex keeps no transaction state of its own in SQL, so its COMMIT
 * afterwards ends the empty transaction that BEGIN opened. When a statement or the commit fails, nothing after it
 * runs and the call fails (the ORM's rollback follows). None of this is documented; test/core/adapters.test.ts runs
 * it against the installed MikroORM, knex and pg.
 */
export async function runWithCommit(
  em: EntityManager,
  trx: OrmTransaction,
  statements: { sql: string; params: unknown[] }[],
): Promise<Record<string, unknown>[][]> {
  const text = `${statements.map((st) => st.sql).join(';\n')}; commit; begin`;
  const params = statements.flatMap((st) => st.params);
  // One result per statement, then the commit's and the begin's.
  const results = await em.getConnection().execute<Record<string, unknown>[][]>(text, params, 'all', trx);
  return results.slice(0, statements.length);
}

import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from 'pg';

/**
 * What MikroORM holds as an EntityManager's transaction context: a knex transaction. knex documents neither the
 * client it carries (whose `acquireConnection()` always answers the transaction's one pg connection) nor
 * `parentTransaction` (set on a nested one, a savepoint); `isCompleted()` is public. test/core/adapters.test.ts
 * checks them against the installed knex and MikroORM.
 */
interface KnexTransaction {
  client: { acquireConnection(): Promise<Client> };
  isCompleted(): boolean;
  parentTransaction?: KnexTransaction;
}

/** An ORM transaction, opaque outside this module (usable as a WeakMap key, and as `execute`'s context). */
export type OrmTransaction = object;

export const currentTransaction = (em: EntityManager): OrmTransaction | undefined =>
  em.getTransactionContext<KnexTransaction>();

/** The outermost transaction of the EntityManager's (a nested one is a savepoint of it): the one that commits. */
export function outermostTransaction(em: EntityManager): OrmTransaction | undefined {
  let trx = em.getTransactionContext<KnexTransaction>();
  while (trx?.parentTransaction) trx = trx.parentTransaction;
  return trx;
}

/** Whether the transaction committed or rolled back (its connection is back in the pool, another request's). */
export const transactionEnded = (trx: OrmTransaction): boolean => (trx as KnexTransaction).isCompleted();

/** The transaction's own pg connection (its parsers are the ORM's). */
export const transactionConnection = (trx: OrmTransaction): Promise<Client> =>
  (trx as KnexTransaction).client.acquireConnection();

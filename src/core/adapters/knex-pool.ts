import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from 'pg';

/**
 * The raw pg connections of MikroORM's knex pool, so plain prepared statements run on the ORM's own connections
 * (src/core/orm-pool.ts) instead of a second pool. knex documents none of it: `client.acquireConnection()` and
 * `releaseConnection()` are what its runner calls, and `__knex__disposed` is the mark knex puts on a connection that
 * emitted 'error' or 'end', which makes its pool destroy that connection on the next acquire. `use()` reads the
 * counts of knex's pool (`client.pool`, a tarn pool: numUsed, numFree, numPendingAcquires, numPendingCreates), for
 * GET /metrics. test/core/adapters.test.ts checks all of them against the installed knex.
 */
export interface KnexConnections {
  acquire(): Promise<Client>;
  release(conn: Client): Promise<void>;
  /** Closes `conn` now and gives it back marked as broken: the pool destroys it instead of handing it out again. */
  discard(conn: Client, reason: unknown): Promise<void>;
  /** The pool's connections now: checked out, idle, and acquires waiting for one (zeros before the pool exists). */
  use(): PoolUse;
}

export interface PoolUse {
  used: number;
  free: number;
  /** Acquires waiting for a connection. */
  pending: number;
  /** Connections being opened. */
  creating: number;
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

interface KnexClient {
  acquireConnection(): Promise<Client>;
  releaseConnection(conn: Client): Promise<void>;
  pool?: TarnPool;
}

export function knexConnections(orm: MikroORM): KnexConnections {
  const knex = orm.em.getConnection().getKnex().client as KnexClient;
  return {
    acquire: () => knex.acquireConnection(),
    release: (conn) => knex.releaseConnection(conn),
    discard(conn, reason) {
      (conn as Client & { __knex__disposed?: unknown }).__knex__disposed ??= reason;
      conn.end().catch(() => undefined);
      return knex.releaseConnection(conn);
    },
    use() {
      const pool = knex.pool;
      if (!pool) return { used: 0, free: 0, pending: 0, creating: 0 };
      return {
        used: pool.numUsed(),
        free: pool.numFree(),
        pending: pool.numPendingAcquires(),
        creating: pool.numPendingCreates(),
      };
    },
  };
}

import type { MikroORM } from '@mikro-orm/postgresql';
import { types as pgTypes } from 'pg';
import type { Client, PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';
import { KnexConnections, knexConnections, PoolUse } from './adapters/knex-pool';

export type { PoolUse };

/**
 * pg's own type parsers. MikroORM gives its connections parsers that keep dates and timestamps as strings (it
 * converts them itself); plain statements answer rows as pg-pool would (a timestamp is a Date), whichever pool.
 */
export const plainTypes = pgTypes;

/**
 * The process's one pool, as the part of pg's `Pool` the service uses. The connections are MikroORM's own (its knex
 * pool, tarn): the ORM's queries, the plain prepared statements of src/core/sql.ts, webhook delivery, the test clock
 * and the catch-ups all share them, so one process opens one pool (plus its LISTEN connection).
 */
export interface ServicePool {
  /** The pool's size: the ORM's `pool.max`. */
  readonly options: { readonly max: number };
  /** One statement on a connection of the pool (a named config is a prepared statement of that connection), with pg's type parsers. */
  query<R extends QueryResultRow = QueryResultRow>(
    config: QueryConfig | string,
    values?: unknown[],
  ): Promise<QueryResult<R>>;
  /**
   * A connection held until `release()`; `release(err)` closes it instead (its session may hold a lock or a
   * transaction). Its own parsers are the ORM's: statements pass `types: plainTypes` (src/core/sql.ts does).
   */
  connect(): Promise<PoolClient>;
  /** Its connections now: in use, idle, acquires waiting (GET /metrics). A plain pg pool (the benchmarks') has none. */
  use?(): PoolUse;
}

/** A connection of knex's pool, as a pg-pool client once checked out by `connect()`. */
type KnexConnection = Client & { release?: PoolClient['release'] };

/** An error after which the connection may still be reused: a statement's own error (not a lost or dying session). */
function sessionSurvives(err: unknown): boolean {
  const e = err as { severity?: string; code?: string };
  return e?.severity === 'ERROR' && typeof e.code === 'string' && !/^(08|57)/.test(e.code);
}

class OrmPool implements ServicePool {
  readonly options: { readonly max: number };

  constructor(
    private readonly knex: KnexConnections,
    max: number,
  ) {
    this.options = { max };
  }

  async query<R extends QueryResultRow = QueryResultRow>(
    config: QueryConfig | string,
    values?: unknown[],
  ): Promise<QueryResult<R>> {
    const conn = (await this.knex.acquire()) as KnexConnection;
    let result: QueryResult<R>;
    try {
      const q: QueryConfig =
        typeof config === 'string'
          ? { text: config, types: plainTypes }
          : config.types
            ? config
            : { ...config, types: plainTypes };
      result = await conn.query<R>(q, values);
    } catch (err) {
      await this.giveBack(conn, sessionSurvives(err) ? undefined : err);
      throw err;
    }
    await this.giveBack(conn);
    return result;
  }

  use(): PoolUse {
    return this.knex.use();
  }

  async connect(): Promise<PoolClient> {
    const conn = (await this.knex.acquire()) as KnexConnection;
    let released = false;
    // pg-pool's contract: `release()` gives it back, `release(err)` (or `true`) closes it.
    conn.release = (err?: Error | boolean) => {
      if (released) throw new Error('connection released twice');
      released = true;
      void this.giveBack(conn, err || undefined);
    };
    return conn as PoolClient;
  }

  /**
   * Back to the pool; with `broken`, closed now (its session's locks and transaction end with it) and destroyed by
   * the pool instead of handed out again (src/core/adapters/knex-pool.ts).
   */
  private async giveBack(conn: KnexConnection, broken?: unknown): Promise<void> {
    if (broken) await this.knex.discard(conn, broken);
    else await this.knex.release(conn);
  }
}

/** The ORM's knex pool as the process's service pool. */
export function ormPool(orm: MikroORM): ServicePool {
  return new OrmPool(knexConnections(orm), (orm.config.get('pool') as { max: number }).max);
}

import crypto from 'node:crypto';
import type { EventSubscriber, TransactionEventArgs } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ClassType } from 'type-graphql';
import { TENANT_FILTER, TenantEntity, TenantParams } from './entity';
import { ormPool, plainTypes, ServicePool } from './orm-pool';
import { runWithCommit } from './adapters/commit-message';
import {
  currentTransaction,
  outermostTransaction,
  OrmTransaction,
  transactionConnection,
  transactionEnded,
} from './adapters/knex-transaction';

/**
 * The one way stores write SQL (every statement lives in a module's `*.store.ts`; test/core/sql-literals.test.ts keeps it
 * so).
 *
 * - `tenantQuery(em, sql, params)`: a statement over rows of the EntityManager's tenant. The SQL names the tenant
 *   columns with `{tenant}` (or `{tenant:alias}` for `alias.merchant_id = ... and alias.mode = ...`, and
 *   `{tenant_values}` for the two values of an insert); the helper writes them and their parameters itself, and
 *   refuses to run without a bound tenant or without the placeholder. `tenantQueryAs(db, tenant, ...)` is the same with the tenant given (the worker, the cache).
 * - `systemQuery(db, sql, params)`: the few statements that are not about one tenant (auth by key hash,
 *   cross-tenant sweeps of the worker, catch-ups, locks). Greppable on purpose: each one is a decision.
 * - `tenantRows(em, Entity, where, params)`: rows of an entity of the tenant as managed entities (`em.map`).
 *
 * Placeholders are `?` (`$1..$n` is accepted on a pg pool or client). Why not the ORM: it builds each query through
 * knex and inlines its parameters, so PostgreSQL parses and plans every statement afresh (~0.6 ms of client CPU per
 * `findOne` here). Here a statement is a named prepared statement (parsed and planned once per connection; unnamed
 * behind a transaction-mode pooler, `useNamedStatements`) on the
 * process's one pool (the ORM's connections, src/core/orm-pool.ts), or, inside an ORM transaction, on the
 * transaction's connection. `sendWithCommit` sends a transaction's last statements with its COMMIT.
 */

/** A pg pool, a checked-out client or a plain client: anything that runs `query({ name, text, values })`. */
export interface Queryable {
  query(config: {
    name?: string;
    text: string;
    values?: unknown[];
    types?: typeof plainTypes;
  }): Promise<{ rows: unknown[] }>;
}
/** Where a statement runs: the request's EntityManager (its transaction, else the service pool) or a pg connection. */
export type Db = EntityManager | Queryable;

const pools = new WeakMap<object, ServicePool>();

/**
 * The process's one pool: the ORM's own connections (src/core/orm-pool.ts), also running the plain statements of
 * EntityManagers of this ORM, webhook delivery, the test clock and the catalog version lookups. Its size is the ORM's
 * (`servicePoolSize(DB_POOL_MAX)`, given to openDatabase).
 */
export function openServicePool(orm: MikroORM): ServicePool {
  let pool = pools.get(orm.config);
  if (!pool) pools.set(orm.config, (pool = ormPool(orm)));
  return pool;
}

/**
 * The pool's size for DB_POOL_MAX `max`: at least 4, as a test-clock advance holds one connection (its advisory lock)
 * while its due work runs statements (and ORM transactions) on others.
 */
export const servicePoolSize = (max: number) => Math.max(4, max);

const observers = new WeakMap<ServicePool, Set<(sql: string) => void>>();

/**
 * Calls `fn` for every plain statement an EntityManager (a request) runs on `pool`, the service pool, or in a
 * transaction on one of its connections; not for the work that uses the pool directly (webhook delivery, catalog
 * version lookups, catch-ups). Tests count statements with it (the ORM's own are seen through knex). Answers a
 * function that stops observing.
 */
export function observeStatements(pool: ServicePool, fn: (sql: string) => void): () => void {
  let set = observers.get(pool);
  if (!set) observers.set(pool, (set = new Set()));
  set.add(fn);
  return () => void set.delete(fn);
}

interface Prepared {
  name: string;
  text: string;
}
const prepared = new Map<string, Prepared>();
/**
 * Named prepared statements (the default), or unnamed ones when the pool is a transaction-mode pooler
 * (DATABASE_POOL_MODE=transaction; docs/production.md, "PgBouncer"): a statement prepared on one server connection
 * would be executed on another. Unnamed, each statement is parsed and planned with every run, in its own message.
 */
let named = true;
/** Set once at start-up, before the first statement (openDatabase). */
export function useNamedStatements(on: boolean): void {
  named = on;
}

/** Bumped when PostgreSQL refuses a prepared statement whose result type changed (a migration ran meanwhile). */
let generation = 0;

/** `?` placeholders become `$1..$n`; the name is derived from the text, so one text is always one statement. */
function prepare(sql: string): Prepared {
  let p = prepared.get(sql);
  if (!p) {
    let n = 0;
    const hash = crypto.createHash('sha1').update(sql).digest('hex').slice(0, 20);
    p = { name: `q${hash}g${generation}`, text: sql.replace(/\?/g, () => `$${++n}`) };
    if (prepared.size > 1000) prepared.clear();
    prepared.set(sql, p);
  }
  return p;
}

const isEm = (db: Db): db is EntityManager => typeof (db as EntityManager).getConnection === 'function';

/**
 * A prepared statement on a pg pool or client; prepared again under a new name when a migration changed its result
 * type. `ormTypes`: with the connection's own type parsers (an ORM transaction's connection: rows as the ORM reads them).
 */
async function runPrepared<R>(db: Queryable, sql: string, params: unknown[], ormTypes = false): Promise<R[]> {
  const p = prepare(sql);
  const types = ormTypes ? undefined : plainTypes;
  try {
    return (await db.query({ name: named ? p.name : undefined, text: p.text, values: params, types })).rows as R[];
  } catch (err) {
    // "cached plan must not change result type": the table changed under a prepared statement. Statements are
    // prepared again under new names, on every connection as each one next runs them.
    const e = err as { code?: string; message?: string };
    if (e.code !== '0A000' || !/cached plan must not change result type/.test(e.message ?? '')) throw err;
    generation++;
    prepared.clear();
    const again = prepare(sql);
    return (await db.query({ name: named ? again.name : undefined, text: again.text, values: params, types }))
      .rows as R[];
  }
}

/**
 * Runs a finished statement where `db` says: a prepared statement on the EntityManager's transaction connection (with
 * the ORM's type parsers, so rows read as the ORM's own statements' do), else on the service pool. Inside transactions
 * too: a statement the ORM runs (knex inlines its parameters) is parsed and planned afresh every time, ~0.3-0.6 ms of
 * server CPU for the larger statements of a renewal.
 */
async function run<R>(db: Db, sql: string, params: unknown[]): Promise<R[]> {
  if (!isEm(db)) return runPrepared<R>(db, sql, params);
  const trx = currentTransaction(db);
  const pool = pools.get(db.config);
  if (!pool) {
    if (params.some(Array.isArray)) throw new Error('array parameters need the service pool');
    return db.getConnection().execute<R[]>(sql, params, 'all', trx);
  }
  observers.get(pool)?.forEach((observe) => observe(sql));
  if (!trx) return runPrepared<R>(pool, sql, params);
  // The connection goes back to the pool when the transaction ends: a statement after that would run in another
  // request's session.
  if (transactionEnded(trx)) throw new Error('statement on a transaction that has ended');
  return runPrepared<R>(await transactionConnection(trx), sql, params, true);
}

const TENANT = /\{tenant(?::(\w+))?\}|\{tenant_values\}/g;

/**
 * Writes the tenant where the SQL says: `{tenant}` / `{tenant:alias}` as the condition `merchant_id = ? and mode = ?`,
 * `{tenant_values}` as the two values of an insert (`values (?, {tenant_values}, ...)`), each with its parameters
 * where they belong.
 */
function withTenant(sql: string, params: unknown[], tenant: TenantParams): [string, unknown[]] {
  if (!tenant?.merchantId || !tenant.mode) throw new Error('tenant statement run without a tenant');
  const c = compile(sql, params.length);
  const values: unknown[] = [];
  let used = 0;
  for (const at of c.at) {
    for (; used < at; used++) values.push(params[used]);
    values.push(tenant.merchantId, tenant.mode);
  }
  for (; used < params.length; used++) values.push(params[used]);
  return [c.text, values];
}

/** A tenant statement's text, and before how many of the caller's parameters each tenant pair goes. */
interface Compiled {
  text: string;
  at: number[];
}
/**
 * Per statement text: whether it numbers its parameters (`$n`), and its expansion (for `$n` texts, per parameter
 * count). Keyed by the caller's text itself, so the usual literal text is hashed once, not a new key string per call.
 */
const compiled = new Map<string, { dollar: boolean; byCount: Map<number, Compiled> }>();

/** Expands the tenant placeholders once per text (a hot path: every payment runs several tenant statements). */
function compile(sql: string, paramCount: number): Compiled {
  let entry = compiled.get(sql);
  if (!entry) {
    if (!sql.match(TENANT)) throw new Error('tenant statement without {tenant}: it must name its tenant columns');
    if (compiled.size >= 1000) compiled.clear();
    // `$n` style: the tenant's two parameters follow the caller's, so the text depends on how many there are.
    compiled.set(sql, (entry = { dollar: /\$\d/.test(sql), byCount: new Map() }));
  }
  const count = entry.dollar ? paramCount : -1;
  let c = entry.byCount.get(count);
  if (c) return c;
  const expand = (match: string, alias: string | undefined, m: string, o: string) => {
    if (match === '{tenant_values}') return `${m}, ${o}`;
    const col = (name: string) => (alias ? `${alias}.${name}` : name);
    return `${col('merchant_id')} = ${m} and ${col('mode')} = ${o}`;
  };
  const at: number[] = [];
  let text: string;
  if (entry.dollar) {
    text = sql.replace(TENANT, (match, a) => expand(match, a, `$${paramCount + 1}`, `$${paramCount + 2}`));
    at.push(paramCount);
  } else {
    // `?` style: each expansion's two parameters go in where its placeholders stand.
    let before = 0;
    let last = 0;
    text = sql.replace(TENANT, (match, a, offset: number) => {
      before += (sql.slice(last, offset).match(/\?/g) ?? []).length;
      last = offset + match.length;
      at.push(before);
      return expand(match, a, '?', '?');
    });
  }
  c = { text, at };
  if (entry.byCount.size >= 16) entry.byCount.clear();
  entry.byCount.set(count, c);
  return c;
}

/** The merchant and mode the EntityManager's tenant filter is bound to, if it is. */
function boundTenant(em: EntityManager): TenantParams | undefined {
  const p = em.getFilterParams<TenantParams>(TENANT_FILTER) as TenantParams | undefined;
  return p?.merchantId && p.mode ? p : undefined;
}

/** The merchant and mode the EntityManager is bound to (for statements over rows of the tenant); none is an error. */
function tenantOfEm(em: EntityManager): TenantParams {
  const p = boundTenant(em);
  if (!p) throw new Error('tenant rows read without a tenant');
  return p;
}

/** A statement over rows of the EntityManager's tenant; `{tenant}` in `sql` becomes `merchant_id = ? and mode = ?`. */
export async function tenantQuery<R = Record<string, unknown>>(
  em: EntityManager,
  sql: string,
  params: unknown[],
): Promise<R[]> {
  const [text, values] = withTenant(sql, params, tenantOfEm(em));
  return run<R>(em, text, values);
}

/** `tenantQuery` with the tenant given: for work outside a request (the worker, the catalog cache). */
export async function tenantQueryAs<R = Record<string, unknown>>(
  db: Db,
  tenant: TenantParams,
  sql: string,
  params: unknown[],
): Promise<R[]> {
  const [text, values] = withTenant(sql, params, tenant);
  return run<R>(db, text, values);
}

/** A statement sent with a transaction's COMMIT: text with `?` placeholders (tenant written), parameters, and who gets its rows. */
export interface CommitStatement {
  sql: string;
  params: unknown[];
  rows?: (rows: Record<string, unknown>[]) => void;
}

/** `tenantQueryAs`'s statement, as one to send with a COMMIT (sendWithCommit). */
export function tenantCommitStatement(
  tenant: TenantParams,
  sql: string,
  params: unknown[],
  rows?: (rows: Record<string, unknown>[]) => void,
): CommitStatement {
  const [text, values] = withTenant(sql, params, tenant);
  return { sql: text, params: values, rows };
}

const commitStatements = new WeakMap<object, (() => CommitStatement[])[]>();

/** The outermost transaction of the EntityManager's (a nested one is a savepoint of it): the one that commits. */
export function rootTransaction(em: EntityManager): OrmTransaction | undefined {
  return outermostTransaction(em);
}

/**
 * Statements to send with the COMMIT of the EntityManager's transaction, in the same message: `build` runs just before
 * the commit (so it sees all the transaction did) and answers the statements (none: nothing). The simple-query protocol
 * runs them, the COMMIT and a `begin` in turn (the ORM inlines the parameters: nothing can be bound there); the empty
 * transaction `begin` opens is what the ORM's own COMMIT then ends. So the locks they take are held only while the
 * server runs them and commits, never across a turn of our event loop (which takes milliseconds under load), and a
 * transaction's last statements cost no round trip of their own. When one of them or the commit fails, nothing after
 * it runs and the transaction fails (its rollback follows). A statement registered inside a savepoint is sent even when
 * the savepoint rolls back: `build` decides what still applies.
 */
export function sendWithCommit(em: EntityManager, build: () => CommitStatement[]): void {
  const trx = rootTransaction(em);
  if (!trx) throw new Error('sendWithCommit outside a transaction');
  if (transactionEnded(trx)) throw new Error('sendWithCommit on a transaction that has ended');
  const builds = commitStatements.get(trx);
  if (builds) builds.push(build);
  else commitStatements.set(trx, [build]);
}

/** Sends the statements of sendWithCommit with the COMMIT (an ORM event subscriber, registered in orm-config.ts). */
export const sendStatementsWithCommit: EventSubscriber = {
  async beforeTransactionCommit({ em, transaction }: TransactionEventArgs): Promise<void> {
    const builds = transaction ? commitStatements.get(transaction as object) : undefined;
    if (!builds) return;
    commitStatements.delete(transaction as object);
    const statements = builds.flatMap((build) => build());
    if (!statements.length) return;
    // In the commit's own message (src/core/adapters/commit-message.ts).
    const results = await runWithCommit(em as EntityManager, transaction as object, statements);
    statements.forEach((st, i) => st.rows?.(results[i]));
  },
};

/** A statement about no single tenant (auth, cross-tenant sweeps, locks, catch-ups): each use is a decision. */
export async function systemQuery<R = Record<string, unknown>>(
  db: Db,
  sql: string,
  params: unknown[] = [],
): Promise<R[]> {
  if (sql.match(TENANT)) throw new Error('{tenant} in a system statement: use tenantQuery');
  return run<R>(db, sql, params);
}

/**
 * NOTIFY in the EntityManager's transaction, so listeners hear it when (and only if) it commits: sent with the COMMIT
 * (sendWithCommit), which saves it a round trip (one made in a savepoint that rolled back is sent too: listeners read
 * again and find nothing new). Without a transaction, now.
 */
export async function notify(em: EntityManager, channel: string, payload: string): Promise<void> {
  if (rootTransaction(em)) sendWithCommit(em, () => [{ sql: 'select pg_notify(?, ?)', params: [channel, payload] }]);
  else await em.getConnection().execute('select pg_notify(?, ?)', [channel, payload], 'all');
}

/**
 * A session advisory lock (`pg_advisory_lock(key)`, or `(key, hashtext(name))` per name) on a connection the caller
 * holds (a pg client: the lock is the session's). Migrations and test-clock advances serialise across processes.
 */
export async function advisoryLock(db: Queryable, key: number, name?: string): Promise<void> {
  if (name === undefined) await db.query({ text: 'select pg_advisory_lock($1)', values: [key] });
  else await db.query({ text: 'select pg_advisory_lock($1, hashtext($2))', values: [key, name] });
}

export async function advisoryUnlock(db: Queryable, key: number, name?: string): Promise<void> {
  if (name === undefined) await db.query({ text: 'select pg_advisory_unlock($1)', values: [key] });
  else await db.query({ text: 'select pg_advisory_unlock($1, hashtext($2))', values: [key, name] });
}

/** Whether the database answers (GET /readyz). */
export async function ping(em: EntityManager): Promise<void> {
  await em.getConnection().execute('select 1');
}

/** Whether the server behind `db` is a standby replaying the primary's WAL (a streaming replica): pg_is_in_recovery(). */
export async function inRecovery(db: Queryable): Promise<boolean> {
  const { rows } = await db.query({ text: 'select pg_is_in_recovery() as standby' });
  return (rows[0] as { standby: boolean }).standby;
}

/** The columns an entity persists, by metadata (named, so a column added by a later migration changes no statement). */
function persistedColumns(em: EntityManager, entity: ClassType<object>): string[] {
  const meta = em.getMetadata().get(entity.name);
  return meta.props
    .filter((p) => p.persist !== false && !p.formula && p.fieldNames?.length)
    .flatMap((p) => p.fieldNames);
}

/** `select` list of an entity's columns: named, so a column added by a later migration leaves the statement as it was. */
const selectList = new Map<string, string>();
function columnsOf(em: EntityManager, entity: ClassType<TenantEntity>): string {
  let list = selectList.get(entity.name);
  if (!list) {
    list = `${persistedColumns(em, entity)
      .map((c) => `"${c}"`)
      .join(', ')} from "${em.getMetadata().get(entity.name).tableName}"`;
    selectList.set(entity.name, list);
  }
  return list;
}

/**
 * `select` list of an entity's columns as `"<alias>.<column>"`, so one row of a join can carry several entities (read
 * each back with `aliasedPart`, then `em.map`).
 */
const aliasedLists = new Map<string, string>();
export function aliasedColumns(em: EntityManager, entity: ClassType<object>, alias: string): string {
  const key = `${entity.name}|${alias}`;
  let list = aliasedLists.get(key);
  if (!list) {
    list = persistedColumns(em, entity)
      .map((c) => `${alias}."${c}" as "${alias}.${c}"`)
      .join(', ');
    aliasedLists.set(key, list);
  }
  return list;
}

/** The columns of `alias` in a row of aliased columns, as a row of that table (null: the outer join found none). */
export function aliasedPart(row: Record<string, unknown>, alias: string): Record<string, unknown> | null {
  const out: Record<string, unknown> = {};
  const prefix = `${alias}.`;
  for (const [k, v] of Object.entries(row)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out.id == null ? null : out;
}

/** Rows of `entity` of the EntityManager's tenant matching `where` (SQL over column names), as managed entities. */
export async function tenantRows<T extends TenantEntity>(
  em: EntityManager,
  entity: ClassType<T>,
  where: string,
  params: unknown[],
  opts: { orderBy?: string; forUpdate?: boolean } = {},
): Promise<T[]> {
  const sql =
    `select ${columnsOf(em, entity)} where {tenant} and (${where})` +
    (opts.orderBy ? ` order by ${opts.orderBy}` : '') +
    (opts.forUpdate ? ' for update' : '');
  const rows = await tenantQuery(em, sql, params);
  return rows.map((row) => em.map(entity, row as never));
}

/** Whether the entity is tenant-scoped and the EntityManager has its tenant bound: the cases tenantRows serves. */
export function canReadTenantRows(em: EntityManager, entity: ClassType<object>): entity is ClassType<TenantEntity> {
  return entity.prototype instanceof TenantEntity && boundTenant(em) !== undefined;
}

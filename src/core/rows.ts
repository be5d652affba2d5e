import crypto from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { Pool } from 'pg';
import type { ClassType } from 'type-graphql';
import { TENANT_FILTER, TenantEntity, TenantParams } from './entity';
import { watchPool } from './pool';

/**
 * Plain statements for hot paths, with rows handed to the ORM by `em.map` so callers get managed entities (later
 * changes flush as usual). The ORM builds each query through knex and inlines its parameters, so PostgreSQL parses
 * and plans every statement afresh; on these machines that is ~0.6 ms of client CPU per `findOne`. Here a statement
 * is a named prepared statement on a plain pg pool (parsed and planned once per connection), or, inside an ORM
 * transaction, a raw statement on the transaction's connection.
 *
 * Tenancy stays in one place: tenantRows adds `merchant_id = ? and mode = ?` from the EntityManager's tenant filter,
 * exactly what the filter would add, and refuses to run without it.
 */

const pools = new WeakMap<object, Pool>();

/** Opens the plain pool beside the ORM's (same database); statements of EntityManagers of this ORM use it. */
export function openPlainPool(orm: MikroORM, max: number): Pool {
  const pool = watchPool(new Pool({ connectionString: orm.config.get('clientUrl'), max }), 'plain');
  pools.set(orm.config, pool);
  return pool;
}

interface Prepared {
  name: string;
  text: string;
}
const prepared = new Map<string, Prepared>();
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

/**
 * Runs `sql` (`?` placeholders) on the EntityManager's transaction when it has one, else as a prepared statement
 * on the plain pool. Array parameters (`= any(?)`) work on the pool only.
 */
export async function plainQuery<R = Record<string, unknown>>(em: EntityManager, sql: string, params: unknown[]): Promise<R[]> {
  const trx = em.getTransactionContext();
  const pool = pools.get(em.config);
  if (trx || !pool) {
    if (params.some(Array.isArray)) throw new Error('array parameters need the plain pool (outside a transaction)');
    return em.getConnection().execute<R[]>(sql, params, 'all', trx);
  }
  const p = prepare(sql);
  try {
    return (await pool.query({ name: p.name, text: p.text, values: params })).rows as R[];
  } catch (err) {
    // "cached plan must not change result type": the table changed under a prepared statement. Statements are
    // prepared again under new names, on every connection as each one next runs them.
    const e = err as { code?: string; message?: string };
    if (e.code !== '0A000' || !/cached plan must not change result type/.test(e.message ?? '')) throw err;
    generation++;
    prepared.clear();
    const again = prepare(sql);
    return (await pool.query({ name: again.name, text: again.text, values: params })).rows as R[];
  }
}

/** The merchant and mode the EntityManager's tenant filter is bound to, if it is. */
function boundTenant(em: EntityManager): TenantParams | undefined {
  const p = em.getFilterParams<TenantParams>(TENANT_FILTER) as TenantParams | undefined;
  return p?.merchantId && p.mode ? p : undefined;
}

/** The merchant and mode the EntityManager is bound to (for statements over rows of the tenant); none is an error. */
export function tenantOfEm(em: EntityManager): TenantParams {
  const p = boundTenant(em);
  if (!p) throw new Error('tenant rows read without a tenant');
  return p;
}

/** `select` list of an entity's columns: named, so a column added by a later migration leaves the statement as it was. */
const selectList = new Map<string, string>();
function columnsOf(em: EntityManager, entity: ClassType<TenantEntity>): string {
  let list = selectList.get(entity.name);
  if (!list) {
    const meta = em.getMetadata().get(entity.name);
    const columns = meta.props.filter((p) => p.persist !== false && !p.formula && p.fieldNames?.length).flatMap((p) => p.fieldNames);
    list = `${columns.map((c) => `"${c}"`).join(', ')} from "${meta.tableName}"`;
    selectList.set(entity.name, list);
  }
  return list;
}

/** Rows of `entity` of the EntityManager's tenant matching `where` (SQL over column names), as managed entities. */
export async function tenantRows<T extends TenantEntity>(
  em: EntityManager,
  entity: ClassType<T>,
  where: string,
  params: unknown[],
  opts: { orderBy?: string; forUpdate?: boolean } = {},
): Promise<T[]> {
  const { merchantId, mode } = tenantOfEm(em);
  const sql =
    `select ${columnsOf(em, entity)} where merchant_id = ? and mode = ? and (${where})` +
    (opts.orderBy ? ` order by ${opts.orderBy}` : '') +
    (opts.forUpdate ? ' for update' : '');
  const rows = await plainQuery(em, sql, [merchantId, mode, ...params]);
  return rows.map((row) => em.map(entity, row as never));
}

/** Whether the entity is tenant-scoped and the EntityManager has its tenant bound: the cases tenantRows serves. */
export function canReadTenantRows(em: EntityManager, entity: ClassType<object>): entity is ClassType<TenantEntity> {
  return entity.prototype instanceof TenantEntity && boundTenant(em) !== undefined;
}

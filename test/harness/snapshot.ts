/**
 * Whether a request changed any row: the row count and newest row version (xmin) of every table, read in one
 * statement. Left out, the tables a refused request still writes by design: its stored 4xx answer for an
 * Idempotency-Key (only 5xx are not stored), and its count against the key's rate limit (the shared limits' counters
 * and WebSocket leases).
 */
const BOOKKEEPING = ['idempotency_keys', 'mikro_orm_migrations', 'rate_limits', 'websocket_leases'];

/** The tables a snapshot covers. */
export const SNAPSHOT_TABLES_SQL = `select table_name from information_schema.tables
  where table_schema = 'public' and table_type = 'BASE TABLE'
    and table_name not in (${BOOKKEEPING.map((t) => `'${t}'`).join(', ')}) order by table_name`;

/** One statement answering `{ t: table, v: 'rows:newest xmin' }` per table. */
export const snapshotSql = (tables: { table_name: string }[]) =>
  tables
    .map(
      (r) =>
        `select '${r.table_name}' as t, count(*) || ':' || coalesce(max(xmin::text::bigint), 0) as v from "${r.table_name}"`,
    )
    .join(' union all ');

import type { Client } from 'pg';
import { repeatWithoutOverlap } from '../../src/core/periodic';

/**
 * What autovacuum would do for a bench database on a server that runs without it (this machine's CI configuration
 * sets `autovacuum = off`; production servers keep PostgreSQL's default, on). Every naptime it vacuums the tables past
 * the server's own vacuum thresholds (dead rows, or rows inserted since the last vacuum) and analyses those past the
 * analyse threshold, one table at a time, as autovacuum's worker would. Without it a long run measures a server no
 * one runs: dead row versions pile up in every index the renewals update, the visibility map stays unset, and the
 * planner keeps the statistics of the seed (bench/README.md, "Month-start with autovacuum").
 */
export interface AutovacuumStand {
  /** Tables vacuumed and analysed so far (a table counts once per round it was due). */
  readonly counts: { vacuumed: number; analysed: number };
  stop(): Promise<void>;
}

interface Due {
  table: string;
  vacuum: boolean;
  analyse: boolean;
}

/** The tables of the current database due a vacuum or an analyse by the server's autovacuum settings. */
async function dueTables(db: Client): Promise<Due[]> {
  const { rows } = await db.query<{ table: string; vacuum: boolean; analyse: boolean }>(
    `with s as (select name, setting::float8 as v from pg_settings where name like 'autovacuum_%')
     select quote_ident(t.schemaname) || '.' || quote_ident(t.relname) as table,
       t.n_dead_tup > (select v from s where name = 'autovacuum_vacuum_threshold')
           + (select v from s where name = 'autovacuum_vacuum_scale_factor') * c.reltuples
         or t.n_ins_since_vacuum > (select v from s where name = 'autovacuum_vacuum_insert_threshold')
           + (select v from s where name = 'autovacuum_vacuum_insert_scale_factor') * c.reltuples as vacuum,
       t.n_mod_since_analyze > (select v from s where name = 'autovacuum_analyze_threshold')
           + (select v from s where name = 'autovacuum_analyze_scale_factor') * c.reltuples as analyse
     from pg_stat_user_tables t join pg_class c on c.oid = t.relid`,
  );
  return rows.filter((r) => r.vacuum || r.analyse);
}

/**
 * Starts the stand-in on `db` (a connection of its own: VACUUM cannot run inside another statement's transaction)
 * when the server's autovacuum is off; null when it is on (the server does it).
 */
export async function standInForAutovacuum(db: Client): Promise<AutovacuumStand | null> {
  const setting = (await db.query<{ autovacuum: string }>('show autovacuum')).rows[0].autovacuum;
  if (setting !== 'off') return null;
  const naptime = await db.query<{ v: string }>(
    `select setting as v from pg_settings where name = 'autovacuum_naptime'`,
  );
  const counts = { vacuumed: 0, analysed: 0 };
  let stopped = false;
  // One table at a time, one round at a time: a round still running at the next naptime is not started again, as
  // autovacuum's launcher would not.
  const rounds = repeatWithoutOverlap(
    Number(naptime.rows[0].v) * 1000,
    async () => {
      for (const t of await dueTables(db)) {
        if (stopped) return;
        // VACUUM (ANALYZE) both cleans and analyses; a table only past the analyse threshold is just analysed.
        await db.query(t.vacuum ? `vacuum (analyze) ${t.table}` : `analyze ${t.table}`);
        if (t.vacuum) counts.vacuumed++;
        if (t.analyse) counts.analysed++;
      }
    },
    () => undefined,
  );
  return {
    counts,
    async stop() {
      stopped = true;
      await rounds.stop();
    },
  };
}

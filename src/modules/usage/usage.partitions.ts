import type { ServicePool } from '../../core/orm-pool';
import { logger } from '../../core/logger';
import { createPartition, partitionAttached } from './usage.store';

/**
 * Monthly partitions of usage_events, made when an insert needs one. There is no default partition: a row for a
 * month without its partition fails its statement (nothing written), and the month is then made and the statement
 * run again. So a partition is only ever made for an event that passed every other check (its subscription exists,
 * is billable, and the timestamp lies in one of its periods and at most 5 minutes ahead): input cannot make the
 * service create tables for arbitrary months.
 */

export interface MonthPartition {
  /** `usage_events_2026_11` */
  name: string;
  /** Inclusive start, ISO (the 1st, 00:00 UTC). */
  from: string;
  /** Exclusive end, ISO. */
  to: string;
}

/** The partition holding instant `t` (months in UTC). */
export function monthOf(t: Date): MonthPartition {
  const start = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), 1));
  const end = new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth() + 1, 1));
  const name = `usage_events_${String(start.getUTCFullYear()).padStart(4, '0')}_${String(start.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name, from: start.toISOString(), to: end.toISOString() };
}

/** PostgreSQL's answer to a row no partition takes: `no partition of relation "usage_events" found for row`. */
export function isMissingPartition(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23514' && /no partition of relation/.test(e.message ?? '');
}

/**
 * The months this process knows exist (partitions are never dropped while it runs), so a batch only asks the database
 * about a month the first time. A failed insert still makes a month another process was thought to have made.
 */
export class UsagePartitions {
  private readonly known = new Set<string>();
  /** One creation per month at a time in this process (the advisory lock orders processes). */
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly pool: ServicePool) {}

  /** Makes sure the partitions of these instants exist. */
  async ensure(instants: Date[]): Promise<void> {
    // One month per distinct (year, month), found without building names for every instant.
    const seen = new Set<number>();
    const months: MonthPartition[] = [];
    for (const t of instants) {
      const key = t.getUTCFullYear() * 12 + t.getUTCMonth();
      if (seen.has(key)) continue;
      seen.add(key);
      const m = monthOf(t);
      if (!this.known.has(m.name)) months.push(m);
    }
    for (const m of months) await this.ensureMonth(m, false);
  }

  /** After an insert failed for want of a partition: the month is made (or found) whatever the cache says. */
  async repair(t: Date): Promise<void> {
    await this.ensureMonth(monthOf(t), true);
  }

  private ensureMonth(m: MonthPartition, force: boolean): Promise<void> {
    if (!force && this.known.has(m.name)) return Promise.resolve();
    let p = this.pending.get(m.name);
    if (!p) {
      p = (async () => {
        try {
          if (force || !(await partitionAttached(this.pool, m.name))) {
            if (await createPartition(this.pool, m))
              logger.info({ partition: m.name }, 'usage events partition created');
          }
          this.known.add(m.name);
        } finally {
          this.pending.delete(m.name);
        }
      })();
      this.pending.set(m.name, p);
    }
    return p;
  }
}

import type { ServicePool } from '../../core/orm-pool';
import { type Connections, withClient } from '../../core/pool';
import { systemQuery } from '../../core/sql';

/** Advisory lock class for test-clock advances (one advance per merchant at a time, across processes). */
const CLOCK_LOCK = 727_002;

/** A merchant's test-clock row as the clock reads it (test-clock.service.ts ClockRecord). */
export interface ClockRow {
  offsetMs: number;
  /** The target of an advance not finished (running, or stopped early); null when none. */
  advanceTarget: Date | null;
  /** Where that advance stopped cleanly (all work due up to it done); null while it runs or when none is unfinished. */
  advanceInterruptedAt: Date | null;
}

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string | Date));

/**
 * Every statement on test_clocks. A row holds a merchant's test-mode offset in ms, and the record of its unfinished
 * advance (advance_target, advance_interrupted_at); no row: offset 0, no advance. The table is keyed by merchant and
 * has no mode column (the clock is test mode's only), so its statements name the merchant by primary key and run as
 * system statements: the tenant is the key itself.
 */
export class TestClockStore {
  /**
   * `locks`: where the advance lock's connection comes from: a session pool (DATABASE_SESSION_URL,
   * src/core/session-locks.ts), else the service pool.
   */
  constructor(
    private readonly db: ServicePool,
    private readonly locks: Connections = db,
  ) {}

  async offsetMs(merchantId: string): Promise<number> {
    const rows = await systemQuery<{ offset_ms: string }>(
      this.db,
      'select offset_ms from test_clocks where merchant_id = $1',
      [merchantId],
    );
    return rows.length ? Number(rows[0].offset_ms) : 0;
  }

  /** The merchant's row: offset and unfinished advance. */
  async row(merchantId: string): Promise<ClockRow> {
    const rows = await systemQuery<{ offset_ms: string; advance_target: unknown; advance_interrupted_at: unknown }>(
      this.db,
      'select offset_ms, advance_target, advance_interrupted_at from test_clocks where merchant_id = $1',
      [merchantId],
    );
    if (!rows.length) return { offsetMs: 0, advanceTarget: null, advanceInterruptedAt: null };
    const r = rows[0];
    return {
      offsetMs: Number(r.offset_ms),
      advanceTarget: date(r.advance_target),
      advanceInterruptedAt: date(r.advance_interrupted_at),
    };
  }

  /**
   * Records an advance towards `target` as begun (under the advance lock): until endAdvance, the row shows it
   * unfinished, so a process that dies meanwhile leaves its target for the next advance to resume.
   */
  async beginAdvance(merchantId: string, target: Date): Promise<void> {
    await systemQuery(
      this.db,
      `insert into test_clocks (merchant_id, offset_ms, advance_target, advance_interrupted_at, updated_at) values ($1, 0, $2, null, now())
       on conflict (merchant_id) do update set advance_target = excluded.advance_target, advance_interrupted_at = null, updated_at = now()`,
      [merchantId, target],
    );
  }

  /**
   * Ends an advance begun by beginAdvance: raises the offset to `offsetMs` and clears the record, or, when it stopped
   * early (`interruptedAt`), keeps its target and notes where it stopped.
   */
  async endAdvance(merchantId: string, offsetMs: number, interruptedAt: Date | null): Promise<void> {
    await systemQuery(
      this.db,
      `update test_clocks set offset_ms = greatest(offset_ms, $2),
              advance_target = case when $3::timestamptz is null then null else advance_target end,
              advance_interrupted_at = $3::timestamptz, updated_at = now()
        where merchant_id = $1`,
      [merchantId, offsetMs, interruptedAt],
    );
  }

  /** Raises the merchant's offset to `offsetMs`; it never shrinks, so the clock never runs backwards. */
  async raiseOffset(merchantId: string, offsetMs: number): Promise<void> {
    await systemQuery(
      this.db,
      `insert into test_clocks (merchant_id, offset_ms, updated_at) values ($1, $2, now())
       on conflict (merchant_id) do update set offset_ms = greatest(test_clocks.offset_ms, excluded.offset_ms), updated_at = now()`,
      [merchantId, offsetMs],
    );
  }

  /**
   * Runs `fn` holding the merchant's advance lock (one advance per merchant at a time, across processes). The
   * lock's connection is held through all of `fn` (a session lock: never through a transaction-mode pooler):
   * withClient keeps a loss of it from crashing us.
   */
  whileAdvancing<T>(merchantId: string, fn: () => Promise<T>): Promise<T> {
    return withClient(this.locks, async (client) => {
      await systemQuery(client, 'select pg_advisory_lock($1, hashtext($2))', [CLOCK_LOCK, merchantId]);
      try {
        return await fn();
      } finally {
        await systemQuery(client, 'select pg_advisory_unlock($1, hashtext($2))', [CLOCK_LOCK, merchantId]).catch(
          () => undefined,
        );
      }
    });
  }
}

/**
 * SQL fragments for statements of other modules that need merchant time in the same round trip (the delivery
 * claim computes "due" per row). Merchant time is `now() + <offset> * interval '1 millisecond'`.
 */
export const testClockSql = {
  /** The offset (ms) of the merchant in column `merchantCol`, when `modeCol` is test; 0 in live mode. */
  offsetMs: (merchantCol: string, modeCol: string): string =>
    `(case when ${modeCol} = 'test' then coalesce((select tc.offset_ms from test_clocks tc where tc.merchant_id = ${merchantCol}), 0) else 0 end)`,
  /** The largest offset of any merchant: a bound that lets an index on a time column cut a scan over all tenants. */
  maxOffsetMs: '(select coalesce(max(offset_ms), 0) from test_clocks)',
};

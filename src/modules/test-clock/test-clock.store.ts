import type { ServicePool } from '../../core/orm-pool';
import { withClient } from '../../core/pool';
import { systemQuery } from '../../core/sql';

/** Advisory lock class for test-clock advances (one advance per merchant at a time, across processes). */
const CLOCK_LOCK = 727_002;

/**
 * Every statement on test_clocks. A row holds a merchant's test-mode offset in ms; no row: offset 0. The table is
 * keyed by merchant and has no mode column (the clock is test mode's only), so its statements name the merchant by
 * primary key and run as system statements: the tenant is the key itself.
 */
export class TestClockStore {
  constructor(private readonly db: ServicePool) {}

  async offsetMs(merchantId: string): Promise<number> {
    const rows = await systemQuery<{ offset_ms: string }>(this.db, 'select offset_ms from test_clocks where merchant_id = $1', [
      merchantId,
    ]);
    return rows.length ? Number(rows[0].offset_ms) : 0;
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
   * lock's connection is held through all of `fn`: withClient keeps a loss of it from crashing us.
   */
  whileAdvancing<T>(merchantId: string, fn: () => Promise<T>): Promise<T> {
    return withClient(this.db, async (client) => {
      await systemQuery(client, 'select pg_advisory_lock($1, hashtext($2))', [CLOCK_LOCK, merchantId]);
      try {
        return await fn();
      } finally {
        await systemQuery(client, 'select pg_advisory_unlock($1, hashtext($2))', [CLOCK_LOCK, merchantId]).catch(() => undefined);
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

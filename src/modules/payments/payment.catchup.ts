import type { Pool } from 'pg';
import type { Mode } from '../../core/entity';
import type { ChangeSource } from '../../core/events';
import { logger } from '../../core/logger';

/** At most this many payments (the most recently updated) are republished by one catch-up. */
const CATCH_UP_LIMIT = 10_000;

/**
 * The payments changed since a moment, as live-update notices: after the LISTEN connection comes back, GraphQL
 * subscribers re-read every payment whose NOTIFY may have been lost meanwhile. One query for the whole process.
 */
export function paymentChanges(pool: Pool): ChangeSource {
  return async (since) => {
    const { rows } = await pool.query<{ id: string; merchant_id: string; mode: Mode }>(
      'select id, merchant_id, mode from payments where updated_at >= $1 order by updated_at desc limit $2',
      [since, CATCH_UP_LIMIT],
    );
    if (rows.length === CATCH_UP_LIMIT) logger.warn({ since, limit: CATCH_UP_LIMIT }, 'payment catch-up truncated to the most recent changes');
    return rows.reverse().map((r) => ({ topic: 'payment' as const, merchantId: r.merchant_id, mode: r.mode, id: r.id }));
  };
}

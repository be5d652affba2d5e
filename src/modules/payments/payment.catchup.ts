import type { ServicePool } from '../../core/orm-pool';
import type { ChangeSource } from '../../core/events';
import { logger } from '../../core/logger';
import { paymentsChangedSince } from './payment.store';

/** At most this many payments (the most recently updated) are republished by one catch-up. */
const CATCH_UP_LIMIT = 10_000;

/**
 * The payments changed since a moment, as live-update notices: after the LISTEN connection comes back, GraphQL
 * subscribers re-read every payment whose NOTIFY may have been lost meanwhile. One query for the whole process.
 */
export function paymentChanges(pool: ServicePool): ChangeSource {
  return async (since) => {
    const rows = await paymentsChangedSince(pool, since, CATCH_UP_LIMIT);
    if (rows.length === CATCH_UP_LIMIT) logger.warn({ since, limit: CATCH_UP_LIMIT }, 'payment catch-up truncated to the most recent changes');
    return rows.reverse().map((r) => ({ topic: 'payment' as const, merchantId: r.merchant_id, mode: r.mode, id: r.id }));
  };
}

import type { ServicePool } from '../../core/orm-pool';
import type { ChangeSource } from '../../core/events';
import { keysExpiringSince } from './merchant.store';

/**
 * The keys retired by rolls whose `api_key` NOTIFY a lost LISTEN connection may have missed: every key that stops
 * working after the moment (a roll sets `expires_at` to its own time plus the grace). Re-announcing one already seen
 * is harmless: the earliest expiry wins. One query (api_keys is small) per reconnection.
 */
export function retiredKeyChanges(pool: ServicePool): ChangeSource {
  return async (since) => {
    const rows = await keysExpiringSince(pool, since);
    return rows.map((r) => ({
      topic: 'api_key' as const,
      merchantId: r.merchant_id,
      mode: r.mode,
      id: r.id,
      keyIds: [r.id],
      expiresAt: r.expires_at.toISOString(),
    }));
  };
}

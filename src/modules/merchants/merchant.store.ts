import type { Mode } from '../../core/entity';
import { Db, systemQuery } from '../../core/sql';

/** Statements on merchants and api_keys beyond the ORM's. */

/** Keys of every merchant that stop working at or after `since` (rolled keys; api_keys is small): the key catch-up. */
export function keysExpiringSince(
  db: Db,
  since: Date,
): Promise<{ id: string; merchant_id: string; mode: Mode; expires_at: Date }[]> {
  return systemQuery(db, 'select id, merchant_id, mode, expires_at from api_keys where expires_at >= ?', [since]);
}

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

/**
 * SQL pieces for statements of other modules that read a merchant together with their own rows (one round trip: an
 * invoice's parties, a gateway event's subscription, an MRR movement's reporting currency).
 */
export const merchantSql = {
  /**
   * The merchants table as the from-item `<alias>`: one row per merchant, with every column of the Merchant entity
   * (read them with `aliasedColumns(em, Merchant, alias)`) and `reporting_currency`. The statement picks its merchant
   * with `<alias>.id = ...` (the primary key).
   */
  from: (alias: string): string => `merchants ${alias}`,
};

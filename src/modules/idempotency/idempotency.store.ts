import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Mode } from '../../core/entity';
import { DomainError } from '../../core/errors';
import { systemQuery, tenantQueryAs } from '../../core/sql';
import { testClockSql } from '../test-clock';

export const IDEMPOTENCY_TTL_HOURS = 24;
const IN_FLIGHT_LEASE_SECONDS = 60;

export type Claim =
  | { kind: 'claimed'; id: string; resourceId: string; fresh: boolean }
  | { kind: 'replay'; status: number; body: string };

/**
 * Every statement on idempotency_keys. Claims, completes and releases keys with single atomic statements, so
 * concurrent identical requests resolve to one owner: the others replay its answer, or get 409 while it runs.
 * Prepared statements on the service pool: a payment claims and completes a key, so these are on its hot path.
 */
export class IdempotencyStore {
  constructor(private readonly em: EntityManager) {}

  /**
   * Expiry follows the merchant's clock for the mode (the test clock in test mode: docs/sandbox.md), read in the
   * same statement; the in-flight lease stays on real time, since it guards against crashed processes.
   */
  async claim(merchantId: string, mode: Mode, key: string, print: string): Promise<Claim> {
    const tenant = { merchantId, mode };
    for (let attempt = 0; attempt < 3; attempt++) {
      const id = uuidv7();
      const resourceId = uuidv7();
      // Take the key when it is new, expired, released by a 5xx, or abandoned in flight by a crashed process.
      // The same request keeps its resource id; a different request after expiry or release starts afresh.
      // The merchant's "now": the wall clock plus, in test mode, the test clock's offset (one statement, not two).
      const clock = `(now() + ${testClockSql.offsetMs('?::uuid', '?::text')} * interval '1 millisecond')`;
      const claimed = await tenantQueryAs<{ id: string; resource_id: string }>(
        this.em,
        tenant,
        `insert into idempotency_keys (id, created_at, merchant_id, mode, key, fingerprint, state, resource_id, locked_until, expires_at)
         values (?, now(), {tenant_values}, ?, ?, 'in_flight', ?, now() + make_interval(secs => ?), ${clock} + make_interval(hours => ?))
         on conflict (merchant_id, mode, key) do update
           set id = excluded.id, created_at = now(), state = 'in_flight',
               resource_id = case when idempotency_keys.fingerprint = excluded.fingerprint
                               and idempotency_keys.expires_at >= excluded.expires_at - make_interval(hours => ?)
                             then idempotency_keys.resource_id else excluded.resource_id end,
               fingerprint = excluded.fingerprint, locked_until = excluded.locked_until, expires_at = excluded.expires_at,
               response_status = null, response_body = null
           where idempotency_keys.expires_at < excluded.expires_at - make_interval(hours => ?)
              or idempotency_keys.state = 'released'
              or (idempotency_keys.state = 'in_flight' and idempotency_keys.locked_until < now()
                  and idempotency_keys.fingerprint = excluded.fingerprint)
         returning id, resource_id`,
        [
          id,
          key,
          print,
          resourceId,
          IN_FLIGHT_LEASE_SECONDS,
          mode,
          merchantId,
          IDEMPOTENCY_TTL_HOURS,
          IDEMPOTENCY_TTL_HOURS,
          IDEMPOTENCY_TTL_HOURS,
        ],
      );
      if (claimed.length) {
        const kept = claimed[0].resource_id;
        return { kind: 'claimed', id: claimed[0].id, resourceId: kept, fresh: kept === resourceId };
      }
      const [row] = await tenantQueryAs<{
        fingerprint: string;
        state: string;
        response_status: number;
        response_body: string;
      }>(
        this.em,
        tenant,
        'select fingerprint, state, response_status, response_body from idempotency_keys where {tenant} and key = ?',
        [key],
      );
      if (!row || row.state === 'released') continue; // released by a failed first request meanwhile: claim again
      if (row.fingerprint !== print) {
        throw new DomainError(
          'idempotency_key_reused',
          'This Idempotency-Key was already used with a different request.',
          'Idempotency-Key',
        );
      }
      if (row.state === 'in_flight') {
        throw new DomainError(
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still being processed. Retry later.',
          'Idempotency-Key',
        );
      }
      return { kind: 'replay', status: row.response_status, body: row.response_body };
    }
    throw new DomainError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still being processed. Retry later.',
      'Idempotency-Key',
    );
  }

  /** By the claim's id (a fresh UUID only its claimer knows): no tenant condition needed. */
  async complete(id: string, status: number, body: string): Promise<void> {
    await systemQuery(
      this.em,
      `update idempotency_keys set state = 'completed', response_status = ?, response_body = ? where id = ?`,
      [status, body, id],
    );
  }

  /** 5xx answers are not stored: the client retries with the same key (and gets the same resource id). */
  async release(id: string): Promise<void> {
    await systemQuery(this.em, `update idempotency_keys set state = 'released' where id = ?`, [id]);
  }

  /** Periodic cleanup of expired keys of every tenant (claim already treats them as absent). */
  async purgeExpired(): Promise<number> {
    const [row] = await systemQuery<{ n: number }>(
      this.em,
      'with gone as (delete from idempotency_keys where expires_at < now() returning 1) select count(*)::int as n from gone',
    );
    return row?.n ?? 0;
  }
}

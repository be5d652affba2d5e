import crypto from 'node:crypto';
import { Entity, Enum, Index, Property, Unique } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { BaseEntity, Mode } from './entity';
import { DomainError } from './errors';
import { MAX_JSON_DEPTH } from './input-limits';
import { plainQuery } from './rows';

/** A claimed `Idempotency-Key`: in flight while the first request runs, then its stored answer (contract section 5). */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ properties: ['merchantId', 'mode', 'key'] })
@Index({ properties: ['expiresAt'] })
export class IdempotencyKey extends BaseEntity {
  @Property({ type: 'uuid' }) merchantId!: string;
  @Enum({ items: () => Mode }) mode!: Mode;
  @Property({ length: 255 }) key!: string;
  /** SHA-256 of method, path and canonical body: the "same request" test. */
  @Property({ length: 64 }) fingerprint!: string;
  /** `released`: the first attempt failed with a 5xx; a retry takes the key over and reuses `resourceId`. */
  @Property({ length: 16 }) state!: 'in_flight' | 'completed' | 'released';
  /**
   * The id the request creates (payment, subscription, refund). Kept across a 5xx and its retry, so the retry
   * creates the same record and sends the gateway the same request and key: never a duplicate there.
   */
  @Property({ type: 'uuid' }) resourceId!: string;
  /** An in-flight claim older than this was abandoned by a crashed process and may be taken over. */
  @Property({ type: 'timestamptz' }) lockedUntil!: Date;
  @Property({ type: 'timestamptz' }) expiresAt!: Date;
  @Property({ type: 'integer', nullable: true }) responseStatus?: number | null;
  @Property({ type: 'text', nullable: true }) responseBody?: string | null;
}

export const IDEMPOTENCY_TTL_HOURS = 24;
const IN_FLIGHT_LEASE_SECONDS = 60;

export type Claim =
  | { kind: 'claimed'; id: string; resourceId: string; fresh: boolean }
  | { kind: 'replay'; status: number; body: string };

/**
 * Stable JSON: object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request.
 * Bodies are depth-checked when parsed (src/http/body-limits.ts); the guard here keeps the recursion bounded for
 * any other caller too.
 */
export function canonicalJson(value: unknown, depth = 1): string {
  if (value !== null && typeof value === 'object' && depth > MAX_JSON_DEPTH) {
    throw new DomainError('parameter_invalid', `JSON may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep.`);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprint(method: string, path: string, body: unknown): string {
  return crypto.createHash('sha256').update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`).digest('hex');
}

export function validateIdempotencyKey(key: string): void {
  if (key.length < 1 || key.length > 255 || /[^\x20-\x7e]/.test(key)) {
    throw new DomainError('parameter_invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', 'Idempotency-Key');
  }
}

/** A key derived from the client's Idempotency-Key for one gateway call, so a retried request never duplicates there. */
export function gatewayIdempotencyKey(merchantId: string, mode: Mode, key: string, purpose: string): string {
  return crypto.createHash('sha256').update(`${merchantId}:${mode}:${key}:${purpose}`).digest('hex').slice(0, 48);
}

/**
 * Claims, completes and releases keys with single atomic statements, so concurrent identical requests
 * resolve to one owner: the others replay its answer, or get 409 while it runs.
 */
export class IdempotencyStore {
  constructor(private readonly em: EntityManager) {}

  /**
   * Expiry follows the merchant's clock for the mode (the test clock in test mode: contract section 14), read in the
   * same statement; the in-flight lease stays on real time, since it guards against crashed processes.
   */
  async claim(merchantId: string, mode: Mode, key: string, print: string): Promise<Claim> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const id = uuidv7();
      const resourceId = uuidv7();
      // Take the key when it is new, expired, released by a 5xx, or abandoned in flight by a crashed process.
      // The same request keeps its resource id; a different request after expiry or release starts afresh.
      // The merchant's "now": the wall clock plus, in test mode, the test clock's offset.
      const clock = `(now() + coalesce((select offset_ms from test_clocks where merchant_id = ? and 'test' = ?), 0) * interval '1 millisecond')`;
      const claimed = await plainQuery<{ id: string; resource_id: string }>(
        this.em,
        `insert into idempotency_keys (id, created_at, merchant_id, mode, key, fingerprint, state, resource_id, locked_until, expires_at)
         values (?, now(), ?, ?, ?, ?, 'in_flight', ?, now() + make_interval(secs => ?), ${clock} + make_interval(hours => ?))
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
        [id, merchantId, mode, key, print, resourceId, IN_FLIGHT_LEASE_SECONDS, merchantId, mode, IDEMPOTENCY_TTL_HOURS, IDEMPOTENCY_TTL_HOURS, IDEMPOTENCY_TTL_HOURS],
      );
      if (claimed.length) {
        const kept = claimed[0].resource_id;
        return { kind: 'claimed', id: claimed[0].id, resourceId: kept, fresh: kept === resourceId };
      }
      const [row] = await plainQuery<{ fingerprint: string; state: string; response_status: number; response_body: string }>(
        this.em,
        'select fingerprint, state, response_status, response_body from idempotency_keys where merchant_id = ? and mode = ? and key = ?',
        [merchantId, mode, key],
      );
      if (!row || row.state === 'released') continue; // released by a failed first request meanwhile: claim again
      if (row.fingerprint !== print) {
        throw new DomainError('idempotency_key_reused', 'This Idempotency-Key was already used with a different request.', 'Idempotency-Key');
      }
      if (row.state === 'in_flight') {
        throw new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed. Retry later.', 'Idempotency-Key');
      }
      return { kind: 'replay', status: row.response_status, body: row.response_body };
    }
    throw new DomainError('idempotency_key_in_use', 'A request with this Idempotency-Key is still being processed. Retry later.', 'Idempotency-Key');
  }

  async complete(id: string, status: number, body: string): Promise<void> {
    await plainQuery(
      this.em,
      `update idempotency_keys set state = 'completed', response_status = ?, response_body = ? where id = ?`,
      [status, body, id],
    );
  }

  /** 5xx answers are not stored: the client retries with the same key (and gets the same resource id). */
  async release(id: string): Promise<void> {
    await plainQuery(this.em, `update idempotency_keys set state = 'released' where id = ?`, [id]);
  }

  /** Periodic cleanup of expired keys (claim already treats them as absent). */
  async purgeExpired(): Promise<number> {
    const res = await this.em.getConnection().execute<{ affectedRows?: number }>('delete from idempotency_keys where expires_at < now()', [], 'run');
    return (res as { affectedRows?: number }).affectedRows ?? 0;
  }
}

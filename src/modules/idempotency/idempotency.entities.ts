import { Entity, Enum, Index, Property, Unique } from '@mikro-orm/core';
import { BaseEntity, Mode } from '../../core/entity';

/** A claimed `Idempotency-Key`: in flight while the first request runs, then its stored answer (docs/api.md). */
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

import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { Mode, TenantEntity } from '../../core/entity';
import { DateTime } from '../../core/scalars';

export enum WebhookDeliveryStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
}
registerEnumType(WebhookDeliveryStatus, { name: 'WebhookDeliveryStatus' });

/**
 * A merchant's receiver of outbound events in one mode. The signing secret is stored sealed (AES-256-GCM) and shown
 * once: in the create and roll-secret answers. After a roll, the previous secret also signs until
 * `previousSecretExpiresAt`. Deleted endpoints are kept (soft delete) so their delivery log stays readable.
 */
@Entity({ tableName: 'webhook_endpoints' })
@ObjectType()
export class WebhookEndpoint extends TenantEntity {
  @Field()
  get object(): string {
    return 'webhook_endpoint';
  }

  @Field() @Property({ type: 'text' }) url!: string;

  @Field(() => Mode, { name: 'mode' })
  get endpointMode(): Mode {
    return this.mode;
  }

  @Field(() => String, { nullable: true }) @Property({ type: 'text', nullable: true }) description?: string | null;
  @Field() @Property() enabled: boolean = true;

  @Field(() => [String], {
    description: 'Event types delivered here: "*" (all), a type, or a prefix such as "payment.*".',
  })
  @Property({ type: 'jsonb' })
  enabledEvents: string[] = ['*'];

  @Field(() => String, {
    nullable: true,
    description: '"failing" when the service disabled the endpoint after 5 days of failures.',
  })
  @Property({ length: 32, nullable: true })
  disabledReason?: string | null;

  @Property({ type: 'text' }) secretSealed!: string;
  @Property({ type: 'text', nullable: true }) previousSecretSealed?: string | null;

  @Field(() => DateTime, { nullable: true, description: 'Until then the previous secret signs too (after a roll).' })
  @Property({ type: 'timestamptz', nullable: true })
  previousSecretExpiresAt?: Date | null;

  /** Time (merchant clock) of the first failed attempt since the last success; null while healthy. */
  @Property({ type: 'timestamptz', nullable: true }) failingSince?: Date | null;
  @Property({ type: 'timestamptz', nullable: true }) deletedAt?: Date | null;

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** One attempt of a delivery, as recorded in `attemptLog`. */
export interface AttemptRecord {
  attempt: number;
  attemptedAt: string;
  responseStatus: number | null;
  latencyMs: number;
  error: string | null;
  responseBody: string | null;
}

@ObjectType()
export class WebhookDeliveryAttempt {
  @Field(() => Int) attempt!: number;
  @Field(() => DateTime) attemptedAt!: Date;
  @Field(() => Int, { nullable: true }) responseStatus!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => String, { nullable: true, description: 'The first 1,000 characters of the answer.' }) responseBody!:
    string | null;
}

/**
 * One event to one endpoint: a durable job. The worker claims due rows with FOR UPDATE SKIP LOCKED and a lease
 * (`lockedUntil`, `lockToken`), so several workers never send the same attempt at once, and an attempt whose
 * worker died is sent again once its lease runs out. Times are the merchant's clock (test clock in test mode).
 */
@Entity({ tableName: 'webhook_deliveries' })
@Index({ properties: ['merchantId', 'mode', 'endpointId', 'id'] })
@Index({ properties: ['eventId'] })
@Index({
  name: 'webhook_deliveries_due_index',
  expression: `create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending'`,
})
// A test-clock advance's claims and checks: one merchant's test-mode deliveries still pending, by when they are due.
@Index({
  name: 'webhook_deliveries_tenant_due_index',
  expression: `create index "webhook_deliveries_tenant_due_index" on "webhook_deliveries" ("merchant_id", "mode", "next_attempt_at") where "status" = 'pending'`,
})
@ObjectType()
export class WebhookDelivery extends TenantEntity {
  @Field()
  get object(): string {
    return 'webhook_delivery';
  }

  @Field(() => ID) @ManyToOne(() => WebhookEndpoint, { mapToPk: true, fieldName: 'endpoint_id' }) endpointId!: string;
  @Field(() => ID) @Property({ type: 'uuid' }) eventId!: string;
  @Field() @Property({ length: 64 }) eventType!: string;
  @Field(() => WebhookDeliveryStatus) @Enum({ items: () => WebhookDeliveryStatus }) status: WebhookDeliveryStatus =
    WebhookDeliveryStatus.PENDING;
  @Field(() => Int) @Property() attempts: number = 0;
  @Field(() => Int, { nullable: true, description: 'HTTP status of the last attempt.' })
  @Property({ type: 'integer', nullable: true })
  responseStatus?: number | null;
  @Field(() => String, { nullable: true, description: 'Why the last attempt failed.' })
  @Property({ type: 'text', nullable: true })
  error?: string | null;
  @Field(() => Int, { nullable: true, description: 'Duration of the last attempt.' })
  @Property({ type: 'integer', nullable: true })
  latencyMs?: number | null;
  @Field(() => String, { nullable: true, description: 'The first 1,000 characters of the last answer.' })
  @Property({ type: 'text', nullable: true })
  responseBody?: string | null;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  nextAttemptAt?: Date | null;
  @Field(() => DateTime, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  lastAttemptAt?: Date | null;
  @Property({ type: 'timestamptz', nullable: true }) lockedUntil?: Date | null;
  @Property({ type: 'uuid', nullable: true }) lockToken?: string | null;
  @Property({ type: 'jsonb' }) attemptLog: AttemptRecord[] = [];

  @Field(() => DateTime)
  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

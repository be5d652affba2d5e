import { Entity, Index, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { v7 as uuidv7 } from 'uuid';

/**
 * The gateway sandbox's own state, in the service's database so a restart loses nothing. Not tenant entities:
 * the sandbox plays the gateway, whose "tenant" is the API key (accountKey, a hash of it).
 */

export type SandboxProvider = 'stripe' | 'razorpay';

/**
 * One gateway object (checkout session, payment intent, payment link, plan, subscription, refund, ...), stored as
 * the JSON the gateway would answer, plus sandbox-private state the API never shows.
 */
@Entity({ tableName: 'sandbox_objects' })
@Index({ properties: ['accountKey', 'type'] })
// Due subscriptions per account, earliest first (migration 20261124100000; partial, so written out).
@Index({
  name: 'sandbox_objects_subscription_due_index',
  expression: `create index "sandbox_objects_subscription_due_index" on "sandbox_objects" ("account_key", "due_at", "id") where "type" = 'subscription'`,
})
export class SandboxObject {
  /** The gateway-style id (cs_test_..., pay_..., sub_...). */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @Property({ type: 'text' })
  provider!: SandboxProvider;

  @Property({ type: 'text' })
  accountKey!: string;

  @Property({ type: 'text' })
  type!: string;

  @Property({ type: 'json' })
  data!: Record<string, any>;

  @Property({ type: 'json' })
  internal: Record<string, any> = {};

  /** Subscriptions: when the next charge (renewal or trial end) falls due. */
  @Property({ type: 'timestamptz', nullable: true, index: true })
  dueAt?: Date | null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}

/** Where an account's events go, and the secret they are signed with (one per account: the latest wins). */
@Entity({ tableName: 'sandbox_webhooks' })
@Unique({ properties: ['provider', 'accountKey'] })
export class SandboxWebhook {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'text' })
  provider!: SandboxProvider;

  @Property({ type: 'text' })
  accountKey!: string;

  /** The gateway-style id answered to the registration (we_..., razorpay webhook id). */
  @Property({ type: 'text' })
  externalId!: string;

  @Property({ type: 'text' })
  url!: string;

  @Property({ type: 'text' })
  secret!: string;

  @Property({ type: 'json' })
  events: string[] = ['*'];

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

/** A create call's first answer, replayed for the same key and parameters. */
@Entity({ tableName: 'sandbox_idempotency_keys' })
@Unique({ properties: ['provider', 'accountKey', 'key'] })
export class SandboxIdempotencyKey {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Property({ type: 'text' })
  provider!: SandboxProvider;

  @Property({ type: 'text' })
  accountKey!: string;

  @Property({ type: 'text' })
  key!: string;

  /** SHA-256 of method, path and canonical parameters. */
  @Property({ type: 'text' })
  requestHash!: string;

  @Property({ type: 'integer' })
  status!: number;

  @Property({ type: 'json' })
  response!: unknown;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

/** An event the sandbox emitted, kept until its webhook was answered 2xx (redeliverable after a restart). */
@Entity({ tableName: 'sandbox_events' })
@Index({ properties: ['delivered', 'createdAt'] })
export class SandboxEvent {
  /** evt_... (Stripe) or the X-Razorpay-Event-Id value. */
  @PrimaryKey({ type: 'text' })
  id!: string;

  @Property({ type: 'text' })
  provider!: SandboxProvider;

  @Property({ type: 'text' })
  accountKey!: string;

  @Property({ type: 'text' })
  type!: string;

  /** The exact body sent (signatures cover these bytes). */
  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'boolean' })
  delivered: boolean = false;

  @Property({ type: 'integer' })
  attempts: number = 0;

  @Property({ type: 'text', nullable: true })
  lastError?: string | null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}

export const sandboxEntities = [SandboxObject, SandboxWebhook, SandboxIdempotencyKey, SandboxEvent];

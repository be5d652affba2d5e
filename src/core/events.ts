import { Entity, Index, Property } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { make, Mode, TenantEntity } from './entity';
import { backoffDelay, type PgListener } from './listener';
import { logger } from './logger';
import { notify } from './sql';
import type { PubSub } from './pubsub';

/**
 * The outbox: every event a change causes is written in the same transaction as the change, in the envelope of
 * the outbound event rules (docs/webhooks.md), and delivered to webhook endpoints later by the worker.
 */
@Entity({ tableName: 'outbox_events' })
// The worker's fan-out reads undispatched events oldest first, across tenants and per tenant (test-clock advances):
// small partial indexes keep that read constant however many dispatched events history holds.
@Index({
  name: 'outbox_events_undispatched_index',
  expression: 'create index "outbox_events_undispatched_index" on "outbox_events" ("id") where "dispatched_at" is null',
})
@Index({
  name: 'outbox_events_undispatched_tenant_index',
  expression:
    'create index "outbox_events_undispatched_tenant_index" on "outbox_events" ("merchant_id", "mode", "id") where "dispatched_at" is null',
})
export class OutboxEvent extends TenantEntity {
  @Property({ length: 64 }) type!: string;
  @Property({ type: 'jsonb' }) payload!: Record<string, unknown>;
  /** Set once the worker has fanned the event out to endpoints. */
  @Property({ type: 'timestamptz', nullable: true }) dispatchedAt?: Date | null;
}

/**
 * Writes an event into the outbox of the EntityManager's transaction (flushed with the change). `at`: when it happened,
 * if not now (merchant time: a subscription's move under a test clock).
 */
export function recordEvent(
  em: EntityManager,
  type: string,
  object: Record<string, unknown>,
  mode: Mode,
  at?: Date,
): OutboxEvent {
  const event = outboxEvent(type, object, mode, at);
  em.persist(event);
  return event;
}

/** An outbox event in its envelope, not persisted (for a store that writes it in a statement of its own). */
export function outboxEvent(type: string, object: Record<string, unknown>, mode: Mode, at?: Date): OutboxEvent {
  const event = make(OutboxEvent, { type }); // the row's own created_at stays wall time (retention reads it)
  event.payload = {
    id: event.id,
    object: 'event',
    type,
    livemode: mode === Mode.LIVE,
    created_at: (at ?? event.createdAt).toISOString(),
    data: { object },
  };
  return event;
}

export const CHANGES_CHANNEL = 'cadence_changes';

export interface Change {
  /** `event`: an outbound event was recorded (`id` is the event's; a trigger on outbox_events announces it). */
  topic: 'payment' | 'subscription' | 'api_key' | 'event';
  merchantId: string;
  mode: Mode;
  /** The changed record; for `api_key`, the key a roll issued (or, caught up after a reconnection, the retired key). */
  id: string;
  /** `api_key`: the keys retired; omitted when too many to list: every key of the merchant and mode but `id`. */
  keyIds?: string[];
  /** `api_key`: when the retired keys stop working (ISO 8601). */
  expiresAt?: string;
  /** `event`: the event's type. */
  eventType?: string;
}

/**
 * Announces a change to GraphQL subscribers in every process. NOTIFY inside a transaction is delivered only when
 * it commits, so subscribers never see a change that was rolled back.
 */
export async function announce(em: EntityManager, change: Change): Promise<void> {
  // On the transaction's own connection: a separate pool connection would notify before the commit, and wait for
  // a free connection while this transaction holds its row locks (pool starvation under concurrent writers).
  await notify(em, CHANGES_CHANNEL, JSON.stringify(change));
}

/** Reads the changes made since a moment (those a lost connection may have missed), e.g. payments updated since. */
export type ChangeSource = (since: Date) => Promise<Change[]>;

/**
 * A change's `updated_at` is taken before its transaction commits, and process clocks differ a little: catch-up reads
 * from this long before the loss. Subscribers may get a change they already had again, never miss one.
 */
export const CATCH_UP_MARGIN_MS = 5_000;

/**
 * Republishes changes NOTIFYed on CHANGES_CHANNEL (through the process's shared PgListener) to this process's
 * pub/sub. After a reconnection it republishes what the registered sources report as changed meanwhile, retrying
 * with backoff while the database is still unreachable.
 */
export class ChangeListener {
  private readonly sources: ChangeSource[] = [];
  private stopped = true;
  private unlisten: (() => Promise<void>) | null = null;
  /** Changes since here are still to be caught up on. */
  private pending: Date | null = null;
  private catching: Promise<void> | null = null;
  private again = false;
  private failures = 0;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly listener: PgListener,
    private readonly pubsub: PubSub,
  ) {}

  /** Adds a source of missed changes (registered by the modules that announce changes; see app.ts). */
  catchUp(source: ChangeSource): void {
    this.sources.push(source);
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    this.unlisten = await this.listener.listen(
      CHANGES_CHANNEL,
      (payload) => this.receive(payload),
      (since) => this.recover(since),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.();
    await this.catching;
  }

  private receive(payload: string | undefined): void {
    if (!payload) return;
    try {
      this.publish(JSON.parse(payload) as Change);
    } catch (err) {
      logger.warn({ err }, 'bad change notification');
    }
  }

  private publish(change: Change): void {
    this.pubsub.publish(change.topic, change);
  }

  private recover(since: Date): Promise<void> {
    if (!this.pending || since < this.pending) this.pending = since;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    return this.runCatchUp();
  }

  /** One catch-up at a time; a reconnection during one runs another after it. */
  private runCatchUp(): Promise<void> {
    if (this.catching) {
      this.again = true;
      return this.catching;
    }
    this.catching = this.catchUpOnce().finally(() => {
      this.catching = null;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.runCatchUp();
      }
    });
    return this.catching;
  }

  private async catchUpOnce(): Promise<void> {
    const since = this.pending;
    if (!since || this.stopped) return;
    this.again = false;
    const from = new Date(since.getTime() - CATCH_UP_MARGIN_MS);
    try {
      const changes = (await Promise.all(this.sources.map((s) => s(from)))).flat();
      if (!this.again) this.pending = null;
      this.failures = 0;
      if (this.stopped) return;
      for (const change of changes) this.publish(change);
      logger.info({ since: from, changes: changes.length }, 'live changes caught up after reconnecting');
    } catch (err) {
      if (this.stopped || this.again) return; // a reconnection meanwhile runs it again at once
      // The database may still be unreachable: try again later (a reconnection also tries again at once).
      const delay = backoffDelay(this.failures++, 100, 10_000);
      logger.warn({ err, retry_in_ms: delay }, 'catching up live changes failed; retrying');
      this.retry = setTimeout(() => void this.runCatchUp(), delay);
      this.retry.unref();
    }
  }
}

/** At most this many records (the most recently updated) are republished by one catch-up of one topic. */
const CATCH_UP_LIMIT = 10_000;

/**
 * A catch-up source for one topic from a table's `updated_at`: after the LISTEN connection comes back, GraphQL
 * subscribers re-read every record whose NOTIFY may have been lost meanwhile. One query for the whole process.
 */
export function changedSince(
  topic: Change['topic'],
  read: (since: Date, limit: number) => Promise<{ id: string; merchant_id: string; mode: Mode }[]>,
): ChangeSource {
  return async (since) => {
    const rows = await read(since, CATCH_UP_LIMIT);
    if (rows.length === CATCH_UP_LIMIT)
      logger.warn({ since, topic, limit: CATCH_UP_LIMIT }, 'catch-up truncated to the most recent changes');
    return rows.reverse().map((r) => ({ topic, merchantId: r.merchant_id, mode: r.mode, id: r.id }));
  };
}

import { Entity, Index, Property } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { make, Mode, TenantEntity } from './entity';
import { logger } from './logger';
import type { PubSub } from './pubsub';

/**
 * The outbox: every event a change causes is written in the same transaction as the change, in the envelope of
 * contract section 10, and delivered to webhook endpoints later by the worker.
 */
@Entity({ tableName: 'outbox_events' })
@Index({ properties: ['dispatchedAt', 'id'] })
export class OutboxEvent extends TenantEntity {
  @Property({ length: 64 }) type!: string;
  @Property({ type: 'jsonb' }) payload!: Record<string, unknown>;
  /** Set once the worker has fanned the event out to endpoints. */
  @Property({ type: 'timestamptz', nullable: true }) dispatchedAt?: Date | null;
}

/** Writes an event into the outbox of the EntityManager's transaction (flushed with the change). */
export function recordEvent(em: EntityManager, type: string, object: Record<string, unknown>, mode: Mode): OutboxEvent {
  const event = make(OutboxEvent, { type });
  event.payload = {
    id: event.id,
    object: 'event',
    type,
    livemode: mode === Mode.LIVE,
    created_at: event.createdAt.toISOString(),
    data: { object },
  };
  em.persist(event);
  return event;
}

export const CHANGES_CHANNEL = 'cadence_changes';

export interface Change {
  topic: 'payment' | 'subscription';
  merchantId: string;
  mode: Mode;
  id: string;
}

/**
 * Announces a change to GraphQL subscribers in every process. NOTIFY inside a transaction is delivered only when
 * it commits, so subscribers never see a change that was rolled back.
 */
export async function announce(em: EntityManager, change: Change): Promise<void> {
  // On the transaction's own connection: a separate pool connection would notify before the commit, and wait for
  // a free connection while this transaction holds its row locks (pool starvation under concurrent writers).
  await em.getConnection().execute('select pg_notify(?, ?)', [CHANGES_CHANNEL, JSON.stringify(change)], 'all', em.getTransactionContext());
}

/** LISTENs on one dedicated connection and republishes changes to this process's pub/sub. */
export class ChangeListener {
  private client?: Client;
  private stopped = false;

  constructor(private readonly url: string, private readonly pubsub: PubSub) {}

  async start(): Promise<void> {
    this.stopped = false;
    const client = new Client({ connectionString: this.url });
    client.on('notification', (msg) => {
      if (msg.channel !== CHANGES_CHANNEL || !msg.payload) return;
      try {
        const change = JSON.parse(msg.payload) as Change;
        this.pubsub.publish(change.topic, change);
      } catch (err) {
        logger.warn({ err }, 'bad change notification');
      }
    });
    client.on('error', (err) => {
      logger.warn({ err }, 'change listener connection lost; reconnecting');
      if (!this.stopped) setTimeout(() => void this.start().catch(() => undefined), 1000).unref();
    });
    await client.connect();
    await client.query(`listen ${CHANGES_CHANNEL}`);
    this.client = client;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }
}

import { Field, ID, Int, ObjectType } from 'type-graphql';
import { boundedStream, StreamItem } from '../../core/bounded-stream';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode } from '../../core/entity';
import { DomainError } from '../../core/errors';
import { Change, OutboxEvent } from '../../core/events';
import { readOncePerChange } from '../../core/fanout';
import type { PubSub } from '../../core/pubsub';
import { DateTime } from '../../core/scalars';
import { acceptsEvent } from './delivery.policy';
import { envelopeText } from './dispatcher';
import { validateEnabledEvents } from './webhook.service';

/** Events one subscriber may have waiting before the oldest are dropped (and counted in `missed`). */
export const LIVE_EVENTS_BUFFER = 1000;

@ObjectType({ description: 'An outbound event as it is recorded, streamed live by the events subscription.' })
export class LiveEvent {
  @Field(() => ID) id!: string;
  @Field() object!: string;
  @Field() type!: string;
  @Field() livemode!: boolean;
  @Field(() => DateTime) createdAt!: Date;
  @Field({ description: 'The event exactly as a webhook delivery sends it: the JSON text of its body.' })
  body!: string;
  @Field(() => Int, {
    description:
      'Events of this stream dropped just before this one because the subscriber read too slowly (0 normally).',
  })
  missed!: number;
}

/**
 * The merchant's outbound events as they are recorded, for `cadence listen` (docs/cli.md): the same events, bodies
 * and types webhook endpoints are sent. A trigger on the outbox announces each event's merchant, mode, type and id
 * on the changes channel (src/core/events.ts); each subscriber keeps only its own merchant's and mode's events of
 * the types it asked for, in a queue of at most LIVE_EVENTS_BUFFER (src/core/bounded-stream.ts), and reads the body
 * when it takes one. Live only: events recorded while nobody listens are not replayed (webhook endpoints get them).
 */
export class LiveEvents {
  constructor(private readonly pubsub: PubSub) {}

  subscribe(ctx: Ctx, types?: string[] | null): AsyncIterableIterator<StreamItem<Change>> {
    const { merchantId, mode } = tenantOf(ctx);
    const patterns = types == null ? ['*'] : validateEnabledEvents(types, 'types');
    return boundedStream<Change>(
      (push) =>
        this.pubsub.on('event', (change) => {
          if (
            change.merchantId === merchantId &&
            change.mode === mode &&
            acceptsEvent(patterns, change.eventType ?? '')
          )
            push(change);
        }),
      LIVE_EVENTS_BUFFER,
    );
  }

  /** The event of one stream item, read once per process for all of the tenant's subscribers. */
  async read(ctx: Ctx, item: StreamItem<Change>): Promise<LiveEvent> {
    const { merchantId, mode } = tenantOf(ctx);
    const event = await readOncePerChange(item.value, `${merchantId}:${mode}`, () =>
      ctx.em.fork({ clear: true }).findOne(OutboxEvent, { id: item.value.id }),
    );
    if (!event || event.merchantId !== merchantId || event.mode !== mode)
      throw new DomainError('resource_not_found', `No such event: ${item.value.id} (it was pruned).`);
    return Object.assign(new LiveEvent(), {
      id: event.id,
      object: 'event',
      type: event.type,
      livemode: event.mode === Mode.LIVE,
      createdAt: new Date(String(event.payload.created_at)),
      body: envelopeText(event.payload),
      missed: item.missed,
    });
  }
}

import { setMaxListeners } from 'node:events';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Change } from './events';

type Topics = { payment: [Change]; subscription: [Change]; api_key: [Change]; event: [Change] };

/** type-graphql's pub/sub; fed across processes by PostgreSQL LISTEN/NOTIFY (ChangeListener in events.ts). */
export const newPubSub = () => {
  // One listener per live subscription: thousands are normal, not the leak Node warns of past 10.
  const eventTarget = new EventTarget();
  setMaxListeners(0, eventTarget);
  const pubsub = createPubSub<Topics>({ eventTarget });
  return Object.assign(pubsub, {
    /**
     * Calls `fn` with every change published on `topic`, synchronously, without the queue `subscribe` keeps per
     * subscriber (a consumer that filters and bounds its own queue: src/core/bounded-stream.ts). Answers the
     * function that stops.
     */
    on(topic: keyof Topics, fn: (change: Change) => void): () => void {
      const listener = (e: Event) => fn((e as CustomEvent<Change>).detail);
      eventTarget.addEventListener(topic, listener);
      return () => eventTarget.removeEventListener(topic, listener);
    },
  });
};
export type PubSub = ReturnType<typeof newPubSub>;

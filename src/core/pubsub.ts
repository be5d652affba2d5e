import { setMaxListeners } from 'node:events';
import { createPubSub } from '@graphql-yoga/subscription';
import type { Change } from './events';

/** type-graphql's pub/sub; fed across processes by PostgreSQL LISTEN/NOTIFY (ChangeListener in events.ts). */
export const newPubSub = () => {
  // One listener per live subscription: thousands are normal, not the leak Node warns of past 10.
  const eventTarget = new EventTarget();
  setMaxListeners(0, eventTarget);
  return createPubSub<{ payment: [Change]; subscription: [Change]; api_key: [Change] }>({ eventTarget });
};
export type PubSub = ReturnType<typeof newPubSub>;

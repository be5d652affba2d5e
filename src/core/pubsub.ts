import { createPubSub } from '@graphql-yoga/subscription';
import type { Change } from './events';

/** type-graphql's pub/sub; fed across processes by PostgreSQL LISTEN/NOTIFY (ChangeListener in events.ts). */
export const newPubSub = () => createPubSub<{ payment: [Change]; subscription: [Change] }>();
export type PubSub = ReturnType<typeof newPubSub>;

import type { ServicePool } from '../../core/orm-pool';
import { changedSince, ChangeSource } from '../../core/events';
import { subscriptionsChangedSince } from './subscription.store';

/** The subscriptions changed since a moment, as live-update notices (the catch-up after a lost LISTEN connection). */
export const subscriptionChanges = (pool: ServicePool): ChangeSource =>
  changedSince('subscription', (since, limit) => subscriptionsChangedSince(pool, since, limit));

import type { ServicePool } from '../../core/orm-pool';
import { changedSince, ChangeSource } from '../../core/events';
import { paymentsChangedSince } from './payment.store';

/** The payments changed since a moment, as live-update notices (the catch-up after a lost LISTEN connection). */
export const paymentChanges = (pool: ServicePool): ChangeSource =>
  changedSince('payment', (since, limit) => paymentsChangedSince(pool, since, limit));

import type { ServicePool } from '../../core/orm-pool';
import { logger } from '../../core/logger';
import { pruneBatch } from './delivery.store';

import { uuidv7Floor } from '../../core/entity';

export { uuidv7Floor };

export interface Pruned {
  deliveries: number;
  events: number;
  gatewayEvents: number;
}

/**
 * Deletes history older than `retentionDays`: finished webhook deliveries (the delivery log), outbox events that
 * were fanned out and have no delivery left, and inbound gateway events (kept to ignore repeats; gateways stop
 * retrying after days). Pending deliveries and their events stay whatever their age. Works in batches of primary-key
 * ranges, so it never holds many locks or scans a table; several processes may run it at once.
 */
export async function pruneHistory(
  db: ServicePool,
  retentionDays: number,
  now = new Date(),
  batch = 5000,
): Promise<Pruned> {
  const floor = uuidv7Floor(new Date(now.getTime() - retentionDays * 86_400_000));
  const drain = async (which: 'deliveries' | 'events' | 'gatewayEvents'): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await pruneBatch(db, which, floor, batch);
      total += n;
      if (n < batch) return total;
    }
  };
  const deliveries = await drain('deliveries');
  const events = await drain('events');
  const gatewayEvents = await drain('gatewayEvents');
  return { deliveries, events, gatewayEvents };
}

/** Runs pruneHistory now and then every `everyMs` (0 days: keep everything); stop() ends the timer. */
export function scheduleRetention(db: ServicePool, retentionDays: number, everyMs = 3_600_000): { stop(): void } {
  if (retentionDays <= 0) return { stop: () => undefined };
  const run = () =>
    void pruneHistory(db, retentionDays)
      .then((p) => {
        if (p.deliveries || p.events || p.gatewayEvents)
          logger.info({ ...p, retention_days: retentionDays }, 'old history pruned');
      })
      .catch((err) => logger.warn({ err }, 'history pruning failed'));
  const first = setTimeout(run, 60_000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return {
    stop: () => {
      clearTimeout(first);
      clearInterval(timer);
    },
  };
}

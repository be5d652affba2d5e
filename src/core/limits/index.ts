import { logger } from '../logger';
import type { ServicePool } from '../orm-pool';
import { pruneLimits } from './limits.store';
import { RateLimits } from './rate-limits';
import { SocketLeases } from './socket-leases';
import { LimitStore, REDIS_CONNECT_MS, redisClient } from './store';

export { chunkOf, RateLimits } from './rate-limits';
export { SocketLeases } from './socket-leases';
export type { LimitStore } from './store';

/** How often a process prunes the PostgreSQL store's expired rows. */
const PRUNE_MS = 5 * 60_000;

/**
 * The per-key limits every process of a deployment shares (docs/operations.md, "Shared limits"): rate limits and
 * WebSocket caps, kept in PostgreSQL, or in Redis when `redisUrl` is set.
 */
export class SharedLimits {
  readonly store: LimitStore;
  readonly rates: RateLimits;
  readonly sockets: SocketLeases;
  private pruner?: NodeJS.Timeout;

  constructor(pool: ServicePool, redis: { url: string; keyPrefix: string } | undefined) {
    this.store = redis
      ? { kind: 'redis', redis: redisClient(redis.url), keyPrefix: redis.keyPrefix }
      : { kind: 'postgres', pool };
    this.rates = new RateLimits(this.store);
    this.sockets = new SocketLeases(this.store);
  }

  /**
   * Connects to Redis (for at most 2 s: without it the service starts, limits held per process until it comes), or
   * starts pruning the PostgreSQL tables; starts renewing WebSocket leases.
   */
  async start(): Promise<void> {
    const { store } = this;
    if (store.kind === 'redis') {
      const connected = store.redis.connect();
      const late = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), REDIS_CONNECT_MS).unref());
      const outcome = await Promise.race([connected.then(() => 'up' as const), late]).catch((err: Error) => err);
      if (outcome !== 'up') {
        connected.catch(() => undefined); // ioredis keeps trying on its own
        logger.warn(
          { err: outcome === 'late' ? undefined : outcome },
          'shared limits: Redis unreachable at start; rate limits and WebSocket caps hold per process until it answers',
        );
      }
    } else {
      this.pruner = setInterval(() => {
        pruneLimits(store.pool).catch((err) => logger.debug({ err }, 'shared limits: pruning failed'));
      }, PRUNE_MS);
      this.pruner.unref();
    }
    this.sockets.start();
  }

  async close(): Promise<void> {
    clearInterval(this.pruner);
    await this.sockets.close();
    if (this.store.kind === 'redis') this.store.redis.disconnect();
  }
}

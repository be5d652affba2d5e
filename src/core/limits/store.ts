import Redis from 'ioredis';
import { logger } from '../logger';
import type { ServicePool } from '../orm-pool';

/** Where the shared limits are kept: the service's PostgreSQL (default), or Redis when REDIS_URL is set. */
export type LimitStore =
  | { kind: 'postgres'; pool: ServicePool }
  | {
      kind: 'redis';
      redis: Redis;
      /** Every key's prefix (REDIS_KEY_PREFIX), so deployments can share a server. */ keyPrefix: string;
    };

/** How long the first connection to Redis may take at start before the service starts without it. */
export const REDIS_CONNECT_MS = 2_000;

/**
 * A Redis client that never queues commands while disconnected (`enableOfflineQueue: false`): a limit asked of a Redis
 * that is away fails at once and falls back to the process's own count, instead of waiting with the request. It
 * connects on `start`, then reconnects by itself (ioredis's backoff) whenever the connection drops.
 */
export function redisClient(url: string): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: REDIS_CONNECT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 200, 5_000),
  });
  // Without a listener ioredis prints every failed reconnection to the console.
  redis.on('error', (err) => logger.debug({ err }, 'shared limits: Redis connection error'));
  return redis;
}

import crypto from 'node:crypto';
import { logger } from '../logger';
import { acquireLease, releaseLeases, renewLeases } from './limits.store';
import type { LimitStore } from './store';

/**
 * WebSocket caps per key across processes (docs/operations.md, "Shared limits"): each open socket holds a lease in
 * the store that expires unless renewed. A process renews its sockets' leases every `renewMs` and releases a lease when
 * its socket closes; the leases of a process that died expire within `leaseMs`, freeing their key's places.
 *
 * PostgreSQL: rows of `websocket_leases`, counted and taken under an advisory lock per key. Redis: a sorted set per key
 * (members the lease ids, scores their expiry), counted and taken by one script. When Redis cannot be reached a socket
 * is let in if the process's own count allows it (the cap holds per process, as before it was shared); when PostgreSQL
 * cannot be reached the key could not be checked either, and the socket is refused as retryable.
 */
export class SocketLeases {
  /** This process's leases: id -> key. */
  private readonly held = new Map<string, string>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly store: LimitStore,
    readonly timing: { leaseMs: number; renewMs: number } = { leaseMs: 60_000, renewMs: 20_000 },
  ) {}

  /**
   * A lease for a new socket of `apiKeyId`, or null when the key holds `max` sockets already. `localCount`: the
   * key's sockets in this process, the fallback count when Redis is away.
   */
  async acquire(apiKeyId: string, max: number, localCount: number): Promise<string | null> {
    const id = crypto.randomUUID();
    const taken =
      this.store.kind === 'postgres'
        ? await acquireLease(this.store.pool, { id, apiKeyId, max, seconds: this.timing.leaseMs / 1000 })
        : await this.acquireRedis(id, apiKeyId, max).catch((err) => {
            logger.warn({ err }, 'shared limits: Redis unreachable, capping WebSocket connections per process');
            return localCount < max;
          });
    if (!taken) return null;
    this.held.set(id, apiKeyId);
    return id;
  }

  async release(id: string): Promise<void> {
    const apiKeyId = this.held.get(id);
    if (apiKeyId === undefined) return;
    this.held.delete(id);
    if (this.store.kind === 'postgres') await releaseLeases(this.store.pool, [id]);
    else await this.store.redis.zrem(this.redisKey(apiKeyId), id);
  }

  /** Starts renewing this process's leases. */
  start(): void {
    this.timer ??= setInterval(() => {
      this.renew().catch((err) => logger.warn({ err }, 'shared limits: WebSocket leases not renewed'));
    }, this.timing.renewMs);
    this.timer.unref();
  }

  /** Stops renewing and releases every lease still held (the sockets are closing with the process). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const ids = [...this.held.keys()];
    await Promise.all(ids.map((id) => this.release(id).catch(() => undefined)));
  }

  async renew(): Promise<void> {
    const leases = [...this.held].map(([id, apiKeyId]) => ({ id, apiKeyId }));
    if (!leases.length) return;
    if (this.store.kind === 'postgres') return renewLeases(this.store.pool, leases, this.timing.leaseMs / 1000);
    const expiry = Date.now() + this.timing.leaseMs;
    const batch = this.store.redis.pipeline();
    for (const l of leases) {
      batch.zadd(this.redisKey(l.apiKeyId), expiry, l.id);
      batch.pexpire(this.redisKey(l.apiKeyId), this.timing.leaseMs);
    }
    await batch.exec();
  }

  private redisKey(apiKeyId: string): string {
    return `${this.store.kind === 'redis' ? this.store.keyPrefix : ''}ws:${apiKeyId}`;
  }

  private async acquireRedis(id: string, apiKeyId: string, max: number): Promise<boolean> {
    if (this.store.kind !== 'redis') throw new Error('not a Redis store');
    const now = Date.now();
    const taken = await this.store.redis.eval(
      ACQUIRE_SCRIPT,
      1,
      this.redisKey(apiKeyId),
      now,
      max,
      now + this.timing.leaseMs,
      id,
      this.timing.leaseMs,
    );
    return taken === 1;
  }
}

/** Drops expired leases, then adds this one unless `max` are live; the set itself expires with its newest lease. */
const ACQUIRE_SCRIPT = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`;

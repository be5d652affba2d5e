import {
  BurstyRateLimiter,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRedis,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { LimitStore } from './store';

/**
 * Per-key rate limits shared by every process (docs/operations.md, "Shared limits"): `rate` requests a second
 * sustained, bursts up to twice that (a second budget of `rate` over 10 seconds), counted in rate-limiter-flexible's
 * PostgreSQL store (the `rate_limits` table) or, with REDIS_URL, its Redis store.
 *
 * A process takes points from the store in chunks of 1% of the limit (1 below 200/s, so small limits are exact) and
 * spends them locally until the window the store gave them ends: a key at 100,000/s costs the store one statement per
 * 1,000 requests instead of one each. Chunks never over-admit (they are taken before they are spent); what a process
 * holds unspent when its window ends is forgone, at most 1% of the limit per process.
 *
 * When the store cannot be reached each store limiter falls back to an in-memory one of the same size (its insurance
 * limiter): the limit then holds per process, as it did before it was shared, and requests are still answered.
 */
export class RateLimits {
  private readonly budgets = new Map<number, KeyBudgets>();

  constructor(private readonly store: LimitStore) {}

  /** Counts one request of `key` at `rate`/s: null when it may go on, else the rejection (its `msBeforeNext`). */
  consume(key: string, rate: number): Promise<RateLimiterRes | null> {
    let budgets = this.budgets.get(rate);
    if (!budgets) this.budgets.set(rate, (budgets = new KeyBudgets(limiterFor(this.store, rate), chunkOf(rate))));
    return budgets.consume(key);
  }
}

/** Points taken from the store at a time: 1% of the limit, at least 1. */
export const chunkOf = (rate: number) => Math.max(1, Math.floor(rate / 100));

/** Keys whose unspent chunks a process keeps, at most (beyond it the oldest are forgone: the limit only tightens). */
const MAX_HELD_KEYS = 10_000;

function limiterFor(store: LimitStore, rate: number): BurstyRateLimiter {
  const limiter = (keyPrefix: string, duration: number) => {
    const opts = {
      keyPrefix,
      points: rate,
      duration,
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: rate, duration }),
    };
    if (store.kind === 'redis') {
      return new RateLimiterRedis({
        ...opts,
        keyPrefix: `${store.keyPrefix}rl:${keyPrefix}`,
        storeClient: store.redis,
        // ioredis queues nothing while disconnected (src/core/limits/store.ts): a lost Redis answers at once.
        rejectIfRedisNotReady: true,
      });
    }
    // The table comes from a migration; expired rows are pruned by the store's one pruner (store.ts), not per limiter.
    return new RateLimiterPostgres({
      ...opts,
      storeClient: store.pool,
      storeType: 'pool',
      tableName: 'rate_limits',
      tableCreated: true,
      clearExpiredByTimeout: false,
    });
  };
  return new BurstyRateLimiter(limiter(`r${rate}`, 1), limiter(`b${rate}`, 10));
}

/** A chunk's points not yet spent, until its window ends (ms since epoch). */
interface Held {
  left: number;
  until: number;
}

type Taken = RateLimiterRes | null;

class KeyBudgets {
  private readonly held = new Map<string, Held>();
  /** A take from the store in flight per key: requests arriving meanwhile wait for its chunk instead of taking more. */
  private readonly taking = new Map<string, Promise<Taken>>();

  constructor(
    private readonly limiter: BurstyRateLimiter,
    private readonly chunk: number,
  ) {}

  async consume(key: string): Promise<Taken> {
    if (this.chunk === 1) return this.take(key); // nothing to share: each request takes its own point at once
    for (;;) {
      const held = this.held.get(key);
      if (held && held.left > 0 && held.until > Date.now()) {
        held.left--;
        return null;
      }
      const inFlight = this.taking.get(key);
      if (!inFlight) return this.take(key);
      const rejected = await inFlight;
      if (rejected) return rejected;
    }
  }

  private async take(key: string): Promise<Taken> {
    const taking = this.limiter.consume(key, this.chunk).then(
      (res: RateLimiterRes) => {
        if (this.chunk > 1 && res.msBeforeNext > 0) this.hold(key, this.chunk - 1, Date.now() + res.msBeforeNext);
        return null;
      },
      (rejected: unknown) => {
        if (rejected instanceof RateLimiterRes) return rejected;
        throw rejected;
      },
    );
    if (this.chunk === 1) return taking;
    this.taking.set(key, taking);
    try {
      return await taking;
    } finally {
      this.taking.delete(key);
    }
  }

  private hold(key: string, left: number, until: number) {
    this.held.delete(key); // re-inserted last: the Map's order is then the order chunks were taken
    this.held.set(key, { left, until });
    if (this.held.size <= MAX_HELD_KEYS) return;
    const now = Date.now();
    for (const [k, h] of this.held) if (h.until <= now || h.left === 0) this.held.delete(k);
    for (const k of this.held.keys()) {
      if (this.held.size <= MAX_HELD_KEYS) break;
      this.held.delete(k);
    }
  }
}

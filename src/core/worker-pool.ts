import fs from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';
import { DomainError } from './errors';

/**
 * CPU-heavy work (PDF rendering) runs here, on worker threads, never on the event loop that answers every merchant's
 * requests. The pool is bounded three ways (docs/operations.md, "Fair sharing"):
 * - `threads` workers at most (started on demand, ended after a minute idle);
 * - `maxQueue` tasks waiting for a worker, over all tenants;
 * - `perTenant` tasks waiting or running for one tenant (merchant and mode), so one merchant cannot fill the queue.
 * Past either bound the caller gets 429 `rate_limited` with Retry-After: the work is refused, never queued unbounded.
 */
export interface WorkerPoolOptions {
  /** The worker module's file (its default export is the task function): `.js` when built, `.ts` from the sources. */
  filename: string;
  threads: number;
  maxQueue: number;
  perTenant: number;
  /** For messages: "document rendering". */
  name: string;
}

export class WorkerPool<In, Out> {
  private readonly pool: Piscina;
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly options: WorkerPoolOptions) {
    this.pool = new Piscina({
      filename: options.filename,
      minThreads: 0,
      maxThreads: Math.max(1, options.threads),
      maxQueue: Math.max(0, options.maxQueue),
      idleTimeout: 60_000,
      // From the TypeScript sources the worker compiles them with the repository's swc hook, as test processes do.
      execArgv: options.filename.endsWith('.ts') ? ['--require', sourceHook()] : [],
    });
  }

  /** Runs one task for `tenant`; 429 when that tenant, or the pool as a whole, already has all it may have. */
  async run(tenant: string, input: In): Promise<Out> {
    const mine = this.inFlight.get(tenant) ?? 0;
    if (mine >= this.options.perTenant)
      throw this.busy(`${mine} ${this.options.name} tasks of this account are already running`);
    if (this.pool.queueSize >= this.options.maxQueue) throw this.busy(`the ${this.options.name} queue is full`);
    this.inFlight.set(tenant, mine + 1);
    try {
      // Called in the same tick as the check above, so piscina's own maxQueue refusal is never reached.
      return (await this.pool.run(input)) as Out;
    } finally {
      const left = (this.inFlight.get(tenant) ?? 1) - 1;
      if (left > 0) this.inFlight.set(tenant, left);
      else this.inFlight.delete(tenant); // the map holds only tenants with work in flight
    }
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }

  private busy(why: string): DomainError {
    return new DomainError(
      'rate_limited',
      `Too many requests for ${this.options.name}: ${why}. Retry after the time in Retry-After.`,
      null,
      {
        'Retry-After': '1',
      },
    );
  }
}

/** test/harness/swc-register.js, found from this file upwards (only used when running from the sources). */
function sourceHook(): string {
  for (let dir = __dirname; path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const hook = path.join(dir, 'test', 'harness', 'swc-register.js');
    if (fs.existsSync(hook)) return hook;
  }
  throw new Error(`worker pool: test/harness/swc-register.js not found above ${__dirname}`);
}

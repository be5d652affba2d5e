import type { ServicePool } from '../../core/orm-pool';
import type { Config } from '../../config';
import type { PgListener } from '../../core/listener';
import { WebhookWorker } from './delivery.worker';
import type { WebhookDispatcher } from './dispatcher';
import { scheduleRetention } from './retention';

/**
 * Outbound delivery of one process: the dispatcher's worker loop, when this process runs it, and the history
 * retention beside it. Built by the composition root (src/container.ts), which also makes the dispatcher, the
 * test clock and the webhook service on the process's service pool.
 */
export class DeliveryRuntime {
  private worker: WebhookWorker | null = null;
  private retention: { stop(): void } | null = null;

  constructor(
    private readonly config: Config,
    readonly dispatcher: WebhookDispatcher,
    /** The process's one pool (src/core/orm-pool.ts, the ORM's connections): closed with the ORM, not here. */
    readonly db: ServicePool,
  ) {}

  /**
   * Starts the delivery loop in this process (npm start unless WORKER=off; npm run worker), woken through the
   * process's shared LISTEN connection (null: polling only).
   */
  async startWorker(listener: PgListener | null): Promise<WebhookWorker> {
    if (!this.worker) {
      this.worker = new WebhookWorker(this.dispatcher, listener, {
        concurrency: this.config.workerConcurrency,
        pollMs: this.config.workerPollMs,
      });
      await this.worker.start();
      // Worker processes also keep history bounded (several may: the pruning skips rows another holds).
      this.retention = scheduleRetention(this.db, this.config.historyRetentionDays);
    }
    return this.worker;
  }

  get workerRunning(): boolean {
    return this.worker !== null;
  }

  async stopWorker(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.retention?.stop();
    this.retention = null;
    await w?.stop();
  }

  /** Graceful: attempts in flight finish and are recorded before the pool closes. */
  async close(): Promise<void> {
    await this.stopWorker();
    this.dispatcher.close();
  }
}

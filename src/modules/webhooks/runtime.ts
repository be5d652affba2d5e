import type { ServicePool } from '../../core/orm-pool';
import type { Config } from '../../config';
import type { PgListener } from '../../core/listener';
import { ClaimLoop } from '../../core/claim-loop';
import { WEBHOOK_CHANNEL, type DeliveryJob } from './delivery.store';
import type { WebhookDispatcher } from './dispatcher';
import { scheduleRetention } from './retention';

/** Outbox events turned into deliveries per pass. */
const FAN_OUT_BATCH = 500;

/**
 * Outbound delivery of one process: the dispatcher's worker loop, when this process runs it, and the history
 * retention beside it. Built by the composition root (src/container.ts), which also makes the dispatcher, the
 * test clock and the webhook service on the process's service pool.
 */
export class DeliveryRuntime {
  private worker: ClaimLoop<DeliveryJob> | null = null;
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
  async startWorker(listener: PgListener | null): Promise<ClaimLoop<DeliveryJob>> {
    if (!this.worker) {
      const dispatcher = this.dispatcher;
      // Each pass fans new outbox events out into deliveries first, then claims due attempts.
      const source = {
        name: 'webhook worker',
        prepare: async () => (await dispatcher.fanOut(FAN_OUT_BATCH)) >= FAN_OUT_BATCH,
        claim: (limit: number) => dispatcher.claim(limit),
        run: (job: DeliveryJob) => dispatcher.attempt(job),
      };
      this.worker = new ClaimLoop(source, listener, WEBHOOK_CHANNEL, {
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

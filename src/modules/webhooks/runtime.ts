import type { MikroORM } from '@mikro-orm/postgresql';
import { Pool } from 'pg';
import type { Config } from '../../config';
import { Clock } from '../../core/clock';
import type { PgListener } from '../../core/listener';
import { watchPool } from '../../core/pool';
import { SecretBox } from '../../core/secrets';
import type { Serializer } from '../../core/serialize';
import type { LookupAll } from './address';
import { WebhookDispatcher, WebhookWorker } from './dispatcher';
import { scheduleRetention } from './retention';
import { WebhookService } from './webhook.service';

/**
 * Outbound delivery of one process: its own small pg pool (so background work never competes with requests for
 * ORM connections), the dispatcher, and the worker loop when this process runs it. The test clock shares the pool.
 */
export class DeliveryRuntime {
  readonly db: Pool;
  readonly clock: Clock;
  readonly dispatcher: WebhookDispatcher;
  readonly webhooks: WebhookService;
  private worker: WebhookWorker | null = null;
  private retention: { stop(): void } | null = null;

  constructor(private readonly config: Config, orm: MikroORM, serializer: () => Serializer, lookupAll?: LookupAll) {
    this.db = watchPool(new Pool({ connectionString: orm.config.get('clientUrl'), max: Math.max(4, config.dbPoolMax) }), 'delivery');
    this.clock = new Clock(this.db);
    const secrets = SecretBox.fromEnv(config.dataDir);
    const timeoutMs = config.webhookTimeoutMs;
    this.dispatcher = new WebhookDispatcher(this.db, orm, secrets, serializer, {
      schedule: config.webhookRetrySchedule,
      timeoutMs,
      // An attempt is abandoned after timeoutMs, so a lease this long is never held by two live senders.
      leaseMs: timeoutMs + Math.max(1000, Math.round(timeoutMs / 2)),
      lookupAll,
    });
    this.clock.register(this.dispatcher.dueWork);
    this.webhooks = new WebhookService(secrets, this.clock, serializer, lookupAll);
  }

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
    await this.db.end().catch(() => undefined);
  }
}

import type { PgListener } from '../../core/listener';
import { logger } from '../../core/logger';
import type { WebhookDispatcher } from './dispatcher';
import { DeliveryJob, WEBHOOK_CHANNEL } from './delivery.store';

/**
 * The delivery loop of one process: woken by NOTIFY on WEBHOOK_CHANNEL (new outbox events, retries asked for) through
 * the process's shared PgListener, and after each of its reconnections (a sweep: NOTIFYs sent while it was down are
 * lost); otherwise every `pollMs` for retries coming due. Sends up to `concurrency` attempts at once.
 */
export class WebhookWorker {
  private running = false;
  private loopDone: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private full = false;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    /** null: polling only. */
    private readonly listener: PgListener | null,
    private readonly options: { concurrency: number; pollMs: number },
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.listener) {
      // Woken by each NOTIFY, and after each reconnection (a sweep: NOTIFYs sent meanwhile are lost).
      this.unlisten = await this.listener.listen(WEBHOOK_CHANNEL, () => this.wake(), () => this.wake());
    }
    this.loopDone = this.loop();
    logger.info({ concurrency: this.options.concurrency }, 'webhook worker started');
  }

  /** Stops taking work, lets attempts in flight finish and record their outcome. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.();
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight]);
  }

  wake(): void {
    this.woken = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private pause(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.woken = false;
      try {
        const fanned = await this.dispatcher.fanOut(500);
        const room = this.options.concurrency - this.inFlight.size;
        let claimed = 0;
        if (room > 0) {
          const jobs = await this.dispatcher.claim(room);
          claimed = jobs.length;
          for (const job of jobs) this.track(job);
        }
        this.full = this.inFlight.size >= this.options.concurrency;
        // More may be waiting when a batch came back full; otherwise sleep until woken or the next poll.
        failures = 0;
        if (this.full || (fanned < 500 && claimed < room)) await this.pause(this.options.pollMs);
      } catch (err) {
        if (!this.running) break;
        // The database may be down: back off to 10 s between passes; the listener's reconnection wakes us sooner.
        const delay = Math.min(10_000, 1000 * 2 ** Math.min(failures++, 4));
        logger.error({ err, retry_in_ms: delay }, 'webhook worker pass failed');
        await this.pause(delay);
      }
    }
  }

  private track(job: DeliveryJob): void {
    const p: Promise<void> = this.dispatcher
      .attempt(job)
      .catch((err) => logger.error({ err, delivery_id: job.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        this.inFlight.delete(p);
        // Claim again once half the slots are free: fewer, larger claims.
        if (this.full && this.inFlight.size <= this.options.concurrency / 2) {
          this.full = false;
          this.wake();
        }
      });
    this.inFlight.add(p);
  }
}

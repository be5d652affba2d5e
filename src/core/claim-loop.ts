import type { PgListener } from './listener';
import { logger } from './logger';

/**
 * Durable background work, one way: every job is a row in PostgreSQL written in the transaction of the change that
 * caused it (an outbox event's deliveries, a gateway command), claimed with FOR UPDATE SKIP LOCKED and a lease (so any
 * number of processes share the rows, and a process killed mid-job leaves a row the next claim takes again), and run
 * by this loop. One loop per kind of job and process: woken by NOTIFY on its channel through the process's shared
 * PgListener, and after each of its reconnections (a sweep: NOTIFYs sent while it was down are lost); otherwise every
 * `pollMs`, for retries coming due. Runs up to `concurrency` jobs at once. docs/durable-work.md describes both queues.
 */
export interface ClaimSource<J> {
  /** For logs. */
  name: string;
  /** Work to do before each claim (the outbox's fan-out into deliveries): answers whether a full batch was done. */
  prepare?(): Promise<boolean>;
  /** Claims (leases) up to `limit` due jobs. */
  claim(limit: number): Promise<J[]>;
  /** Runs one claimed job and records its outcome; a throw is logged, and the lease lets the job run again later. */
  run(job: J): Promise<void>;
}

export class ClaimLoop<J> {
  private running = false;
  private loopDone: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private full = false;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly source: ClaimSource<J>,
    /** null: polling only. */
    private readonly listener: PgListener | null,
    private readonly channel: string,
    private readonly options: { concurrency: number; pollMs: number },
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.listener) {
      // Woken by each NOTIFY, and after each reconnection (a sweep: NOTIFYs sent meanwhile are lost).
      this.unlisten = await this.listener.listen(
        this.channel,
        () => this.wake(),
        () => this.wake(),
      );
    }
    this.loopDone = this.loop();
    logger.info({ concurrency: this.options.concurrency }, `${this.source.name} started`);
  }

  /** Stops taking work, lets jobs in flight finish and record their outcome. */
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
        const more = (await this.source.prepare?.()) ?? false;
        const room = this.options.concurrency - this.inFlight.size;
        let claimed = 0;
        if (room > 0) {
          const jobs = await this.source.claim(room);
          claimed = jobs.length;
          for (const job of jobs) this.track(job);
        }
        this.full = this.inFlight.size >= this.options.concurrency;
        // More may be waiting when a batch came back full; otherwise sleep until woken or the next poll.
        failures = 0;
        if (this.full || (!more && claimed < room)) await this.pause(this.options.pollMs);
      } catch (err) {
        if (!this.running) break;
        // The database may be down: back off to 10 s between passes; the listener's reconnection wakes us sooner.
        const delay = Math.min(10_000, 1000 * 2 ** Math.min(failures++, 4));
        logger.error({ err, retry_in_ms: delay }, `${this.source.name} pass failed`);
        await this.pause(delay);
      }
    }
  }

  private track(job: J): void {
    const p: Promise<void> = this.source
      .run(job)
      .catch((err) =>
        logger.error(
          { err, job: (job as { id?: unknown }).id },
          `${this.source.name}: a job's outcome could not be recorded`,
        ),
      )
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

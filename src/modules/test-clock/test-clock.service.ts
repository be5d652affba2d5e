import type { ServicePool } from '../../core/orm-pool';
import type { Connections } from '../../core/pool';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { logger } from '../../core/logger';
import { TestClockStore } from './test-clock.store';

/**
 * Work that becomes due at a point in a merchant's time (webhook retries; trial ends, renewals, dunning retries
 * and period ends when the subscriptions feature registers them). Test-clock advances run it in time order.
 */
export interface DueWork {
  /** For logs. */
  name: string;
  /** The earliest time at or before `until` at which this has work for the merchant's test mode; null: none. */
  nextDue(merchantId: string, until: Date): Promise<Date | null>;
  /** Does everything due at or before `at` for the merchant's test mode; the test clock reads `at` meanwhile. */
  runDue(merchantId: string, at: Date): Promise<void>;
}

/** A runaway due-work loop stops here instead of spinning forever. */
const MAX_STEPS = 100_000;

/** The most one advance moves the test clock (docs/sandbox.md): 366 days. Further: advance again. */
export const MAX_ADVANCE_SECONDS = 366 * 86_400;
const MAX_ADVANCE_MS = MAX_ADVANCE_SECONDS * 1000;

/**
 * A merchant's test clock as GET /v1/test-clock and advances answer it. `advanceTarget` is the target of an advance
 * not finished: one running now, or one that stopped early (its client left, the service stopped, it failed);
 * `advanceInterruptedAt` is where one that stopped early stopped cleanly (every piece of work due up to then done).
 * Both null: no advance unfinished. The next advance resumes an unfinished one (Clock.advance).
 */
export interface ClockState {
  now: Date;
  advanceTarget: Date | null;
  advanceInterruptedAt: Date | null;
}

/**
 * The service's notion of "now" (docs/sandbox.md): live mode is the wall clock; test mode is the wall clock
 * plus the merchant's test-clock offset (table test_clocks). Every time-based rule asks `now(merchantId, mode)`.
 * Modules with time-based work register it as DueWork, so that advancing a test clock runs it.
 */
export class Clock {
  private readonly work: DueWork[] = [];
  private readonly store: TestClockStore;

  /** `locks`: where advances take their session lock (src/core/session-locks.ts); default the service pool. */
  constructor(db: ServicePool, locks: Connections = db) {
    this.store = new TestClockStore(db, locks);
  }

  /** Adds a runner of due work; advances run runners in time order (registration order breaks ties). */
  register(work: DueWork): void {
    this.work.push(work);
  }

  async now(merchantId: string, mode: Mode): Promise<Date> {
    if (mode !== Mode.TEST) return new Date();
    return new Date(Date.now() + (await this.store.offsetMs(merchantId)));
  }

  /** The request's test clock (GET /v1/test-clock, `testClock`), with its unfinished advance; test mode only. */
  async read(ctx: Ctx): Promise<ClockState> {
    const row = await this.store.row(testMerchant(ctx));
    return {
      now: new Date(Date.now() + row.offsetMs),
      advanceTarget: row.advanceTarget,
      advanceInterruptedAt: row.advanceInterruptedAt,
    };
  }

  /**
   * Advances the request's test clock by `seconds` or to `to` (exactly one of them), at most 366 days; test mode
   * only. It stops early, at a consistent point, when the request's signal aborts (ctx.signal: the client left, or
   * the service is stopping); see `advance`.
   */
  advanceFor(ctx: Ctx, by: { seconds?: number | null; to?: Date | null }): Promise<ClockState> {
    const merchantId = testMerchant(ctx);
    const { seconds, to } = by;
    if (seconds == null && to == null)
      throw new DomainError('parameter_missing', 'Missing required parameter: seconds (or to).', 'seconds');
    if (seconds != null && to != null) throw invalid('to', 'Give either seconds or to, not both.');
    return this.advance(merchantId, { seconds, to }, ctx.signal);
  }

  /**
   * Moves the merchant's test clock forward to `to` (or by `seconds`, at most 366 days either way), running every
   * piece of due work up to then in time order: the clock is set to each due time before that work runs, so the work
   * (and the retries or renewals it schedules) sees the time it was due at. Answers the new state once everything is
   * done.
   *
   * An unfinished advance (advanceTarget: stopped early, or its process died) is resumed: this one goes to the later
   * of its own target and that one's.
   *
   * Once `signal` aborts, the advance stops between two steps of due work, never inside one: it finishes the work
   * due up to the clock's reading at that moment (a few steps at most), leaves the clock there and answers; the
   * record keeps the target and where it stopped (advanceInterruptedAt) for GET and the next advance.
   *
   * One advance per merchant at a time, across processes: a second one waits for the first (whileAdvancing).
   */
  async advance(
    merchantId: string,
    by: { seconds?: number | null; to?: Date | null },
    signal?: AbortSignal,
  ): Promise<ClockState> {
    checkAdvance(by);
    return this.store.whileAdvancing(merchantId, async () => {
      const row = await this.store.row(merchantId);
      const start = new Date(Date.now() + row.offsetMs);
      const own = by.to ?? new Date(start.getTime() + (by.seconds ?? 0) * 1000);
      if (own.getTime() < start.getTime()) {
        throw new DomainError(
          'parameter_invalid',
          `The test clock only moves forward: it reads ${start.toISOString()}.`,
          'to',
        );
      }
      if (own.getTime() - start.getTime() > MAX_ADVANCE_MS) {
        // Only `to` gets here (checkAdvance bounds seconds): it counts from the clock's reading.
        throw invalid(
          'to',
          `A test-clock advance moves at most 366 days per call: the test clock reads ${start.toISOString()}; advance again for more.`,
        );
      }
      // Resume an unfinished advance: its target was at most 366 days from its own start, so from this one's too.
      const resumed = row.advanceTarget && row.advanceTarget.getTime() > own.getTime() ? row.advanceTarget : null;
      let to = resumed ?? own;
      if (resumed)
        logger.info(
          { merchantId, to, interruptedAt: row.advanceInterruptedAt },
          'test clock: resuming an unfinished advance',
        );
      await this.store.beginAdvance(merchantId, to);
      const target = to;
      let stoppedAt: Date | null = null;
      for (let step = 0; ; step++) {
        if (step >= MAX_STEPS) throw new Error(`test clock advance: due work did not settle after ${MAX_STEPS} steps`);
        if (signal?.aborted && !stoppedAt) {
          // Between steps: from here on, only what is due up to the clock's reading now, then stop there.
          const now = await this.now(merchantId, Mode.TEST);
          if (now.getTime() < to.getTime()) {
            stoppedAt = now;
            to = now;
            logger.info(
              { merchantId, at: now, target, reason: String(signal.reason?.message ?? signal.reason) },
              'test clock: advance stopping early',
            );
          }
        }
        let next: { at: Date; work: DueWork } | null = null;
        for (const w of this.work) {
          const at = await w.nextDue(merchantId, to);
          if (at && at.getTime() <= to.getTime() && (!next || at.getTime() < next.at.getTime())) next = { at, work: w };
        }
        if (!next) break;
        const now = await this.now(merchantId, Mode.TEST);
        const at = next.at.getTime() < now.getTime() ? now : next.at;
        await this.set(merchantId, at);
        logger.debug({ merchantId, work: next.work.name, at }, 'test clock: running due work');
        await next.work.runDue(merchantId, at);
      }
      await this.store.endAdvance(merchantId, this.offsetFor(to), stoppedAt);
      return { now: to, advanceTarget: stoppedAt ? target : null, advanceInterruptedAt: stoppedAt };
    });
  }

  /** Sets the test clock to `at` from now on; the offset never shrinks, so the clock never runs backwards. */
  private set(merchantId: string, at: Date): Promise<void> {
    return this.store.raiseOffset(merchantId, this.offsetFor(at));
  }

  private offsetFor(at: Date): number {
    return Math.round(at.getTime() - Date.now());
  }
}

/** What can be refused before the clock is read: seconds not a whole number in 0..366 days, `to` not a time. */
function checkAdvance(by: { seconds?: number | null; to?: Date | null }): void {
  const { seconds, to } = by;
  if (seconds != null) {
    if (!Number.isSafeInteger(seconds)) throw invalid('seconds', 'seconds must be a whole number of seconds.');
    if (seconds < 0) throw invalid('seconds', 'seconds must be at least 0: the test clock only moves forward.');
    if (seconds > MAX_ADVANCE_SECONDS) {
      throw invalid(
        'seconds',
        `A test-clock advance moves at most 366 days (${MAX_ADVANCE_SECONDS} seconds) per call; advance again for more.`,
      );
    }
  }
  if (to != null && !(to instanceof Date && Number.isFinite(to.getTime())))
    throw invalid('to', 'to must be an ISO 8601 date-time.');
}

/** The test clock is a test-mode thing: the request's merchant, refused with a live key. */
function testMerchant(ctx: Ctx): string {
  const { merchantId, mode } = tenantOf(ctx);
  if (mode !== Mode.TEST)
    throw new DomainError(
      'test_mode_only',
      'The test clock exists in test mode only: use your test secret key (sk_test_...).',
    );
  return merchantId;
}

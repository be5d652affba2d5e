import type { ServicePool } from '../../core/orm-pool';
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

/**
 * The service's notion of "now" (contract 8 and 14): live mode is the wall clock; test mode is the wall clock
 * plus the merchant's test-clock offset (table test_clocks). Every time-based rule asks `now(merchantId, mode)`.
 * Modules with time-based work register it as DueWork, so that advancing a test clock runs it.
 */
export class Clock {
  private readonly work: DueWork[] = [];
  private readonly store: TestClockStore;

  constructor(db: ServicePool) {
    this.store = new TestClockStore(db);
  }

  /** Adds a runner of due work; advances run runners in time order (registration order breaks ties). */
  register(work: DueWork): void {
    this.work.push(work);
  }

  async now(merchantId: string, mode: Mode): Promise<Date> {
    if (mode !== Mode.TEST) return new Date();
    return new Date(Date.now() + (await this.store.offsetMs(merchantId)));
  }

  /** The request's test clock (GET /v1/test-clock, `testClock`); test mode only. */
  read(ctx: Ctx): Promise<Date> {
    return this.now(testMerchant(ctx), Mode.TEST);
  }

  /** Advances the request's test clock by `seconds` or to `to` (exactly one of them); test mode only. */
  advanceFor(ctx: Ctx, by: { seconds?: number | null; to?: Date | null }): Promise<Date> {
    const merchantId = testMerchant(ctx);
    const { seconds, to } = by;
    if (seconds == null && to == null)
      throw new DomainError('parameter_missing', 'Missing required parameter: seconds (or to).', 'seconds');
    if (seconds != null && to != null) throw invalid('to', 'Give either seconds or to, not both.');
    if (seconds != null && seconds < 0) throw invalid('seconds', 'seconds must be at least 0: the test clock only moves forward.');
    return this.advance(merchantId, { seconds, to });
  }

  /**
   * Moves the merchant's test clock forward to `to` (or by `seconds`), running every piece of due work up to then
   * in time order: the clock is set to each due time before that work runs, so the work (and the retries or
   * renewals it schedules) sees the time it was due at. Answers the new time once everything is done.
   */
  async advance(merchantId: string, by: { seconds?: number | null; to?: Date | null }): Promise<Date> {
    return this.store.whileAdvancing(merchantId, async () => {
      const start = await this.now(merchantId, Mode.TEST);
      const to = by.to ?? new Date(start.getTime() + (by.seconds ?? 0) * 1000);
      if (to.getTime() < start.getTime()) {
        throw new DomainError('parameter_invalid', `The test clock only moves forward: it reads ${start.toISOString()}.`, 'to');
      }
      for (let step = 0; ; step++) {
        if (step >= MAX_STEPS) throw new Error(`test clock advance: due work did not settle after ${MAX_STEPS} steps`);
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
      await this.set(merchantId, to);
      return to;
    });
  }

  /** Sets the test clock to `at` from now on; the offset never shrinks, so the clock never runs backwards. */
  private set(merchantId: string, at: Date): Promise<void> {
    return this.store.raiseOffset(merchantId, Math.round(at.getTime() - Date.now()));
  }
}

/** The test clock is a test-mode thing: the request's merchant, refused with a live key. */
function testMerchant(ctx: Ctx): string {
  const { merchantId, mode } = tenantOf(ctx);
  if (mode !== Mode.TEST)
    throw new DomainError('test_mode_only', 'The test clock exists in test mode only: use your test secret key (sk_test_...).');
  return merchantId;
}

import type { Pool } from 'pg';
import { Mode } from './entity';
import { DomainError } from './errors';
import { logger } from './logger';
import { withClient } from './pool';

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

/** Advisory lock class for test-clock advances (one advance per merchant at a time, across processes). */
const CLOCK_LOCK = 727_002;
/** A runaway due-work loop stops here instead of spinning forever. */
const MAX_STEPS = 100_000;

/**
 * The service's notion of "now" (contract 8 and 14): live mode is the wall clock; test mode is the wall clock
 * plus the merchant's test-clock offset (table test_clocks). Every time-based rule asks `now(merchantId, mode)`.
 */
export class Clock {
  private readonly work: DueWork[] = [];

  constructor(private readonly db: Pool) {}

  /** Adds a runner of due work; advances run runners in time order (registration order breaks ties). */
  register(work: DueWork): void {
    this.work.push(work);
  }

  async offsetMs(merchantId: string): Promise<number> {
    const r = await this.db.query<{ offset_ms: string }>('select offset_ms from test_clocks where merchant_id = $1', [merchantId]);
    return r.rows.length ? Number(r.rows[0].offset_ms) : 0;
  }

  async now(merchantId: string, mode: Mode): Promise<Date> {
    if (mode !== Mode.TEST) return new Date();
    return new Date(Date.now() + (await this.offsetMs(merchantId)));
  }

  /**
   * Moves the merchant's test clock forward to `to` (or by `seconds`), running every piece of due work up to then
   * in time order: the clock is set to each due time before that work runs, so the work (and the retries or
   * renewals it schedules) sees the time it was due at. Answers the new time once everything is done.
   */
  async advance(merchantId: string, by: { seconds?: number | null; to?: Date | null }): Promise<Date> {
    // The lock's connection is held through all the due work: withClient keeps a loss of it from crashing us.
    return withClient(this.db, async (client) => {
      await client.query('select pg_advisory_lock($1, hashtext($2))', [CLOCK_LOCK, merchantId]);
      try {
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
      } finally {
        await client.query('select pg_advisory_unlock($1, hashtext($2))', [CLOCK_LOCK, merchantId]).catch(() => undefined);
      }
    });
  }

  /** Sets the test clock to `at` from now on; the offset never shrinks, so the clock never runs backwards. */
  private async set(merchantId: string, at: Date): Promise<void> {
    await this.db.query(
      `insert into test_clocks (merchant_id, offset_ms, updated_at) values ($1, $2, now())
       on conflict (merchant_id) do update set offset_ms = greatest(test_clocks.offset_ms, excluded.offset_ms), updated_at = now()`,
      [merchantId, Math.round(at.getTime() - Date.now())],
    );
  }
}

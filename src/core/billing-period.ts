import { UTCDate } from '@date-fns/utc';
import { addDays, addMonths, addWeeks, addYears } from 'date-fns';
import { invalid } from './errors';

/**
 * The billing calendar (docs/subscriptions.md), as pure functions: the periods subscriptions bill and usage is counted
 * in.
 */

export type Frequency = 'daily' | 'weekly' | 'monthly' | 'yearly';

/**
 * The start of billing period `cycle` (0: the anchor itself), counted from the anchor every time so a month-end anchor
 * keeps its day: Jan 31 monthly -> Feb 28/29 -> Mar 31 (calendar arithmetic in UTC, never from the previous end).
 */
export function periodStart(anchor: Date, frequency: Frequency, interval: number, cycle: number): Date {
  if (!Number.isInteger(interval) || interval < 1)
    throw invalid('billing_interval', 'billing_interval must be an integer >= 1.');
  if (!Number.isInteger(cycle) || cycle < 0)
    throw new Error(`period cycle must be a non-negative integer, got ${cycle}`);
  const at = new UTCDate(anchor.getTime());
  const n = interval * cycle;
  const moved =
    frequency === 'daily'
      ? addDays(at, n)
      : frequency === 'weekly'
        ? addWeeks(at, n)
        : frequency === 'monthly'
          ? addMonths(at, n)
          : addYears(at, n);
  return new Date(moved.getTime());
}

/** `[start, end)` of billing period `cycle`. */
export function period(
  anchor: Date,
  frequency: Frequency,
  interval: number,
  cycle: number,
): { start: Date; end: Date } {
  return {
    start: periodStart(anchor, frequency, interval, cycle),
    end: periodStart(anchor, frequency, interval, cycle + 1),
  };
}

/** Billing periods: calendar arithmetic in UTC that keeps the anchor's day (Jan 31 -> Feb 28/29 -> Mar 31). */
export type PeriodUnit = 'day' | 'week' | 'month' | 'year';

/** The instant `n` units after `anchor`, clamping the day of month when the target month is shorter. */
export function addUnits(anchor: Date, unit: PeriodUnit, n: number): Date {
  if (unit === 'day') return new Date(anchor.getTime() + n * 86_400_000);
  if (unit === 'week') return new Date(anchor.getTime() + n * 7 * 86_400_000);
  const months = unit === 'year' ? 12 * n : n;
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + months;
  const targetYear = y + Math.floor(m / 12);
  const targetMonth = ((m % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(targetYear, targetMonth + 1, 0)).getUTCDate();
  const day = Math.min(anchor.getUTCDate(), lastDay);
  return new Date(
    Date.UTC(
      targetYear,
      targetMonth,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

export const RAZORPAY_PERIOD_UNIT: Record<string, PeriodUnit> = {
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  yearly: 'year',
};

import { divRound } from './rounding';

/**
 * `amount` per billing period normalised to a month (docs/analytics.md), rounded half away from zero to the subunit:
 * monthly amount / interval; yearly amount / (12 x interval); weekly amount x 52 / (12 x interval); daily
 * amount x 365 / (12 x interval). Exact (BigInt), so 120000 yearly is 10000 and 1000 weekly is 4333.
 */
export function monthlyAmount(amount: number, frequency: string, interval: number): number {
  if (!Number.isSafeInteger(amount)) throw new Error(`monthlyAmount: amount must be an integer, got ${amount}`);
  if (!Number.isInteger(interval) || interval < 1)
    throw new Error(`monthlyAmount: interval must be an integer >= 1, got ${interval}`);
  const a = BigInt(amount);
  const n = BigInt(interval);
  switch (frequency) {
    case 'monthly':
      return Number(divRound(a, n));
    case 'yearly':
      return Number(divRound(a, 12n * n));
    case 'weekly':
      return Number(divRound(a * 52n, 12n * n));
    case 'daily':
      return Number(divRound(a * 365n, 12n * n));
    default:
      throw new Error(`monthlyAmount: unknown billing frequency '${frequency}'`);
  }
}

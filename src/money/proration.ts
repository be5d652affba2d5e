import { share } from './rounding';

export interface Proration {
  credit: number;
  debit: number;
  /** debit - credit: > 0 an adjustment invoice, < 0 a credit note. */
  net: number;
  /** Different cadence: a new period starts at the change. */
  restartsPeriod: boolean;
}

/**
 * The formulas (docs/subscriptions.md), change-plan with `create_prorations`: T = the period's length, r = the time
 * left, in whole seconds. Same frequency and interval: credit = round(old x r / T), debit = round(new x r / T), the
 * period is kept. Different cadence: credit = round(old x r / T), debit = the new amount in full, and a new period
 * starts now.
 */
export function prorate(args: {
  oldAmount: number;
  newAmount: number;
  periodStart: Date;
  periodEnd: Date;
  at: Date;
  sameCadence: boolean;
}): Proration {
  for (const [name, v] of [
    ['oldAmount', args.oldAmount],
    ['newAmount', args.newAmount],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`prorate: ${name} must be a non-negative integer, got ${v}`);
  }
  const T = Math.floor((args.periodEnd.getTime() - args.periodStart.getTime()) / 1000);
  if (T <= 0) throw new Error('prorate: the period must be at least one second long');
  const r = Math.min(T, Math.max(0, Math.floor((args.periodEnd.getTime() - args.at.getTime()) / 1000)));
  const credit = share(args.oldAmount, r, T);
  const debit = args.sameCadence ? share(args.newAmount, r, T) : args.newAmount;
  return { credit, debit, net: debit - credit, restartsPeriod: !args.sameCadence };
}

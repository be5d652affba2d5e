import { UTCDate } from '@date-fns/utc';
import { addDays, addMonths, addWeeks, addYears } from 'date-fns';
import { invalid } from '../../core/errors';

/**
 * The money and time arithmetic of subscriptions (docs/subscriptions.md), as pure functions: billing periods, proration
 * and GST. Integer subunits only; products of amounts and seconds are taken in BigInt, so no float touches money.
 */

export type Frequency = 'daily' | 'weekly' | 'monthly' | 'yearly';

/**
 * The start of billing period `cycle` (0: the anchor itself), counted from the anchor every time so a month-end anchor
 * keeps its day: Jan 31 monthly -> Feb 28/29 -> Mar 31 (calendar arithmetic in UTC, never from the previous end).
 */
export function periodStart(anchor: Date, frequency: Frequency, interval: number, cycle: number): Date {
  if (!Number.isInteger(interval) || interval < 1) throw invalid('billing_interval', 'billing_interval must be an integer >= 1.');
  if (!Number.isInteger(cycle) || cycle < 0) throw new Error(`period cycle must be a non-negative integer, got ${cycle}`);
  const at = new UTCDate(anchor.getTime());
  const n = interval * cycle;
  const moved =
    frequency === 'daily' ? addDays(at, n) : frequency === 'weekly' ? addWeeks(at, n) : frequency === 'monthly' ? addMonths(at, n) : addYears(at, n);
  return new Date(moved.getTime());
}

/** `[start, end)` of billing period `cycle`. */
export function period(anchor: Date, frequency: Frequency, interval: number, cycle: number): { start: Date; end: Date } {
  return { start: periodStart(anchor, frequency, interval, cycle), end: periodStart(anchor, frequency, interval, cycle + 1) };
}

/** round(numerator / denominator), half away from zero, exactly (BigInt); the denominator is positive. */
export function divRound(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new Error('divRound: the denominator must be positive');
  const sign = numerator < 0n ? -1n : 1n;
  const n = numerator * sign;
  return sign * ((2n * n + denominator) / (2n * denominator));
}

/** round(amount x part / whole) for integer subunits and whole seconds. */
function share(amount: number, part: number, whole: number): number {
  return Number(divRound(BigInt(amount) * BigInt(part), BigInt(whole)));
}

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
  for (const [name, v] of [['oldAmount', args.oldAmount], ['newAmount', args.newAmount]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`prorate: ${name} must be a non-negative integer, got ${v}`);
  }
  const T = Math.floor((args.periodEnd.getTime() - args.periodStart.getTime()) / 1000);
  if (T <= 0) throw new Error('prorate: the period must be at least one second long');
  const r = Math.min(T, Math.max(0, Math.floor((args.periodEnd.getTime() - args.at.getTime()) / 1000)));
  const credit = share(args.oldAmount, r, T);
  const debit = args.sameCadence ? share(args.newAmount, r, T) : args.newAmount;
  return { credit, debit, net: debit - credit, restartsPeriod: !args.sameCadence };
}

export interface Gst {
  cgst: number;
  sgst: number;
  igst: number;
  tax: number;
  total: number;
}

/**
 * How GST applies to a supply (docs/invoices-and-gst.md): `none` (non-INR: a zero-rated export; or a merchant without a
 * GSTIN), `intra` (CGST + SGST: the customer is in the merchant's state, or its state is unknown) or `inter` (IGST).
 */
export type TaxTreatment = 'none' | 'intra' | 'inter';

/** Whether GST can apply at all: INR, and a merchant with a GSTIN (docs/invoices-and-gst.md). */
export function gstApplies(currency: string, merchantGstin: string | null | undefined): boolean {
  return currency.toUpperCase() === 'INR' && !!merchantGstin;
}

/** The treatment of an invoice in `currency` between these parties (docs/invoices-and-gst.md). */
export function taxTreatment(args: {
  currency: string;
  merchantGstin: string | null;
  merchantState: string | null;
  customerState: string | null;
}): TaxTreatment {
  if (!gstApplies(args.currency, args.merchantGstin)) return 'none';
  return !args.customerState || args.customerState === args.merchantState ? 'intra' : 'inter';
}

/**
 * GST on a tax-exclusive subtotal under a treatment: `intra` CGST = SGST = round(subtotal x rate / 2), `inter`
 * IGST = round(subtotal x rate), `none` nothing. Rates in basis points (1800 = 18%).
 */
export function gstOn(subtotal: number, treatment: TaxTreatment, rateBps: number): Gst {
  if (!Number.isSafeInteger(subtotal) || subtotal < 0) throw new Error(`gst: subtotal must be a non-negative integer, got ${subtotal}`);
  if (!Number.isInteger(rateBps) || rateBps < 0) throw new Error(`gst: rateBps must be a non-negative integer, got ${rateBps}`);
  if (treatment === 'intra') {
    const half = share(subtotal, rateBps, 20_000);
    return { cgst: half, sgst: half, igst: 0, tax: 2 * half, total: subtotal + 2 * half };
  }
  if (treatment === 'inter') {
    const igst = share(subtotal, rateBps, 10_000);
    return { cgst: 0, sgst: 0, igst, tax: igst, total: subtotal + igst };
  }
  return { cgst: 0, sgst: 0, igst: 0, tax: 0, total: subtotal };
}

/**
 * The formulas (docs/invoices-and-gst.md), GST on a tax-exclusive subtotal: only INR invoices of a merchant with a
 * GSTIN are taxed (anything else is a zero-rated export or untaxed). Customer in the merchant's state, or state
 * unknown: CGST = SGST = round(subtotal x rate / 2); another state: IGST = round(subtotal x rate). Rates in basis
 * points (1800 = 18%).
 */
export function gst(args: {
  subtotal: number;
  currency: string;
  rateBps: number;
  merchantGstin: string | null;
  merchantState: string | null;
  customerState: string | null;
}): Gst {
  return gstOn(args.subtotal, taxTreatment(args), args.rateBps);
}

/**
 * A subscription's tax, fixed when it is created (its invoices and the amounts its gateway charges both follow it, so
 * a later change of the merchant's settings cannot make them disagree).
 */
export interface TaxSnapshot {
  treatment: TaxTreatment;
  /** 0 when the treatment is `none`. */
  rateBps: number;
}

/**
 * What the gateway charges for a subscription (docs/invoices-and-gst.md: prices are tax-exclusive, the invoice's total
 * is subtotal + GST): each period, the period invoice's total; on the first charge, also the setup fee, taken as the
 * difference so that the first charge equals the first invoice's total (GST is rounded once, on the whole subtotal).
 */
export function gatewayAmounts(amount: number, setupFee: number, tax: TaxSnapshot): { recurring: number; setupFee: number } {
  const recurring = gstOn(amount, tax.treatment, tax.rateBps).total;
  return { recurring, setupFee: setupFee > 0 ? gstOn(amount + setupFee, tax.treatment, tax.rateBps).total - recurring : 0 };
}

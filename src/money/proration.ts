import { Gst, gstIncluded, gstOn, TaxBehavior, TaxTreatment } from './gst';
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

/** One side of a plan change's proration: its prorated amount, as its price states it. */
export interface ProratedSide {
  amount: number;
  behavior: TaxBehavior;
  /** The amount with its GST: the amount itself when tax-inclusive, amount + gstOn(amount) when tax-exclusive. */
  gross: number;
}

/**
 * The document a plan change issues for a proration (docs/invoices-and-gst.md, "Tax-inclusive prices"), each side
 * taken with its own price's tax behaviour. Both tax-exclusive: one line of |debit - credit|, GST on top of it (gstOn,
 * rounded once on the net). Otherwise the sides are netted with their GST: a tax-inclusive side counts its prorated
 * amount as it is (it contains its GST), a tax-exclusive one its amount + gstOn(amount); the document is one line of
 * the net, which contains its GST (gstIncluded), so its total is that net exactly. Signed figures: > 0 an adjustment
 * invoice, < 0 a credit note, 0 nothing; `heads` and `lineAmount` are the document's own (never negative).
 */
export interface ProrationDocument {
  credit: ProratedSide;
  debit: ProratedSide;
  /** How the line's amount relates to GST: `exclusive` only when both prices are. */
  behavior: TaxBehavior;
  /** The document's single line: |debit - credit| (exclusive) or |total| (inclusive). */
  lineAmount: number;
  heads: Gst;
  subtotal: number;
  tax: number;
  total: number;
}

/** The document of a plan change's proration (ProrationDocument), from each side's prorated amount and tax behaviour. */
export function prorationDocument(args: {
  credit: number;
  creditBehavior: TaxBehavior;
  debit: number;
  debitBehavior: TaxBehavior;
  treatment: TaxTreatment;
  rateBps: number;
}): ProrationDocument {
  const side = (amount: number, behavior: TaxBehavior): ProratedSide => ({
    amount,
    behavior,
    gross: behavior === 'inclusive' ? amount : gstOn(amount, args.treatment, args.rateBps).total,
  });
  const credit = side(args.credit, args.creditBehavior);
  const debit = side(args.debit, args.debitBehavior);
  const exclusive = credit.behavior === 'exclusive' && debit.behavior === 'exclusive';
  const net = exclusive ? debit.amount - credit.amount : debit.gross - credit.gross;
  const lineAmount = Math.abs(net);
  const heads = exclusive
    ? gstOn(lineAmount, args.treatment, args.rateBps)
    : gstIncluded(lineAmount, args.treatment, args.rateBps);
  // A credit as negative figures (0 - x: never -0).
  const signed = (x: number) => (net < 0 ? 0 - x : x);
  return {
    credit,
    debit,
    behavior: exclusive ? 'exclusive' : 'inclusive',
    lineAmount,
    heads,
    subtotal: signed(heads.total - heads.tax),
    tax: signed(heads.tax),
    total: signed(heads.total),
  };
}

import { Gst, gstIncluded, gstOn, TaxTreatment, taxTreatment } from './gst';

/**
 * GST of one invoice, per head and per line (docs/invoices-and-gst.md), as pure integer arithmetic.
 *
 * The heads are computed once, on the invoice's subtotal, with gst.ts `gst()` (the guide's formula, rounding
 * half away from zero). Each head is then allocated to the lines in proportion to their amounts by the largest-remainder
 * rule, so the lines' heads sum to the invoice's heads exactly and each line's share is within one subunit of its exact
 * proportional share. (Rounding per line and summing would make the invoice heads drift from that formula by
 * up to one subunit per line.) CGST and SGST are equal on the invoice and so are allocated identically on every line.
 */

export interface TaxParties {
  currency: string;
  rateBps: number;
  merchantGstin: string | null;
  merchantState: string | null;
  customerState: string | null;
}

export interface LineTax {
  cgst: number;
  sgst: number;
  igst: number;
}

export interface InvoiceTax {
  heads: Gst;
  lines: LineTax[];
  /** Whether GST applies at all (an INR invoice of a merchant with a GSTIN). */
  taxable: boolean;
}

/** floor(a / b) for a positive b (BigInt division truncates toward zero). */
function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n ? q - 1n : q;
}

/**
 * Splits `total` over `weights` in proportion (largest remainder): shares are floor(total x w / sum) and the subunits
 * left over go one each to the largest remainders, the earlier line first on a tie. The shares sum to `total` exactly.
 * Weights may be negative (a credit line on an invoice); their sum must be positive unless `total` is 0.
 */
export function allocate(total: number, weights: readonly number[]): number[] {
  if (total === 0 || weights.length === 0) return weights.map(() => 0);
  const sum = weights.reduce((s, w) => s + BigInt(w), 0n);
  if (sum <= 0n) throw new Error(`allocate: the weights must sum to a positive amount to share ${total}`);
  const t = BigInt(total);
  const shares = weights.map((w, i) => {
    const exact = t * BigInt(w);
    const floor = floorDiv(exact, sum);
    return { i, floor, remainder: exact - floor * sum };
  });
  let left = t - shares.reduce((s, x) => s + x.floor, 0n);
  const order = [...shares].sort((a, b) =>
    a.remainder === b.remainder ? a.i - b.i : a.remainder > b.remainder ? -1 : 1,
  );
  for (const s of order) {
    if (left <= 0n) break;
    s.floor += 1n;
    left -= 1n;
  }
  return shares.map((s) => Number(s.floor));
}

/** The heads on the subtotal (gst.ts `gst()`), and each line's share of every head. */
export function invoiceTax(lineAmounts: readonly number[], parties: TaxParties): InvoiceTax {
  return invoiceTaxFor(lineAmounts, taxTreatment(parties), parties.rateBps);
}

/**
 * The same under a fixed treatment and rate (a subscription's snapshot, taken when it was created): the heads on the
 * subtotal (gst.ts `gstOn()`), and each line's share of every head.
 */
export function invoiceTaxFor(lineAmounts: readonly number[], treatment: TaxTreatment, rateBps: number): InvoiceTax {
  const subtotal = lineAmounts.reduce((s, a) => s + a, 0);
  const heads = gstOn(subtotal, treatment, rateBps);
  return { heads, lines: spread(heads, lineAmounts), taxable: treatment !== 'none' };
}

/** Each head allocated to the lines in proportion to `weights` (largest remainder): the lines' heads. */
function spread(heads: LineTax, weights: readonly number[]): LineTax[] {
  const cgst = allocate(heads.cgst, weights);
  const sgst = allocate(heads.sgst, weights);
  const igst = allocate(heads.igst, weights);
  return weights.map((_, i) => ({ cgst: cgst[i], sgst: sgst[i], igst: igst[i] }));
}

/**
 * The same for tax-inclusive line amounts (docs/invoices-and-gst.md, "Tax-inclusive prices"): the heads are those
 * contained in the lines' sum (gst.ts `gstIncluded()`), so the invoice's total is that sum exactly; each head is
 * allocated to the lines as above, and each line's taxable value (`taxableAmounts`) is its amount less its heads, so
 * the taxable values sum to the subtotal (total - tax) exactly.
 */
export function invoiceTaxIncludedFor(
  lineAmounts: readonly number[],
  treatment: TaxTreatment,
  rateBps: number,
): InvoiceTax & { taxableAmounts: number[] } {
  const total = lineAmounts.reduce((s, a) => s + a, 0);
  const heads = gstIncluded(total, treatment, rateBps);
  const lines = spread(heads, lineAmounts);
  return {
    heads,
    lines,
    taxableAmounts: lineAmounts.map((a, i) => a - lines[i].cgst - lines[i].sgst - lines[i].igst),
    taxable: treatment !== 'none',
  };
}

/**
 * The tax of a document whose heads are given rather than computed on its subtotal (a refund's credit note carries
 * its share of the original invoice's heads: credit-note.ts), each head allocated to the lines as above. `taxable`:
 * the original was taxed (its rate is not 0).
 */
export function invoiceTaxWithHeads(lineAmounts: readonly number[], given: LineTax, rateBps: number): InvoiceTax {
  const subtotal = lineAmounts.reduce((s, a) => s + a, 0);
  const tax = given.cgst + given.sgst + given.igst;
  // A taxable value of 0 (a credit of tax alone) leaves the heads on the first line.
  const weights = subtotal > 0 ? lineAmounts : lineAmounts.map((_, i) => (i === 0 ? 1 : 0));
  return {
    heads: { cgst: given.cgst, sgst: given.sgst, igst: given.igst, tax, total: subtotal + tax },
    lines: spread(given, weights),
    taxable: rateBps > 0,
  };
}

import { divRound } from './rounding';

/**
 * A coupon's discount on one amount, as pure integer arithmetic: a percentage (basis points) is round(amount x bps /
 * 10000), half away from zero, in BigInt; a fixed amount is min(amount_off, amount), so a discount never exceeds what
 * it is taken from.
 */
export interface DiscountTerms {
  percentOffBps?: number | null;
  amountOff?: number | null;
}

export function discountOn(amount: number, terms: DiscountTerms): number {
  if (!Number.isSafeInteger(amount) || amount < 0)
    throw new Error(`discountOn: amount must be a non-negative integer, got ${amount}`);
  if (terms.percentOffBps != null) return Number(divRound(BigInt(amount) * BigInt(terms.percentOffBps), 10_000n));
  if (terms.amountOff != null) return Math.min(terms.amountOff, amount);
  return 0;
}

/**
 * `percent_off` as given (a JSON number, 0 < p <= 100, at most two decimals) in basis points, exactly: read from the
 * number's shortest decimal form (12.35 -> "12.35" -> 1235), so no float multiplication can turn it into 1234.9999.
 * Null when the number is not such a value.
 */
export function percentToBps(p: number): number | null {
  if (typeof p !== 'number' || !Number.isFinite(p)) return null;
  const m = /^(\d{1,3})(?:\.(\d{1,2}))?$/.exec(String(p));
  if (!m) return null;
  const bps = Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
  return bps > 0 && bps <= 10_000 ? bps : null;
}

/** How a coupon is shown on an invoice line: "Coupon SPRING25 (25% off)" / "Coupon FLAT100 (100.00 INR off)". */
export function discountLabel(code: string, terms: DiscountTerms, currency: string, exponent: number): string {
  if (terms.percentOffBps != null) return `Coupon ${code} (${terms.percentOffBps / 100}% off)`;
  const amount = terms.amountOff ?? 0;
  const digits = String(amount).padStart(exponent + 1, '0');
  const major = exponent ? `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}` : digits;
  return `Coupon ${code} (${major} ${currency} off)`;
}

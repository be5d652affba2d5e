import { exponentOf } from './money';

/**
 * A typed amount in major units ("1,234.50") as integer subunits of `currency` (123450 for INR), by string arithmetic:
 * no float ever holds it. Null when it is not a plain non-negative number or has more decimals than the currency.
 */
export function parseMoney(text: string, currency: string): number | null {
  const t = text.replace(/[,\s]/g, '');
  const m = /^(\d+)(?:\.(\d*))?$/.exec(t);
  if (!m) return null;
  const exp = exponentOf(currency.toUpperCase());
  const frac = m[2] ?? '';
  if (frac.length > exp) return null;
  const n = Number(m[1] + frac.padEnd(exp, '0'));
  return Number.isSafeInteger(n) ? n : null;
}

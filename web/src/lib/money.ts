/**
 * Amounts arrive in integer subunits (paise for INR). Display only: the string handed to Intl is exact, so no
 * float ever touches the figure. INR groups in lakhs and crores (₹1,23,456.78); other currencies use the
 * international grouping of their symbol.
 */
const exponents = new Map<string, number>();

/** Digits after the decimal point of a currency (ISO 4217 minor unit, as the browser's Intl knows it). */
export function exponentOf(currency: string): number {
  let e = exponents.get(currency);
  if (e === undefined) {
    e = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    exponents.set(currency, e);
  }
  return e;
}

/** The decimal text of an amount in subunits: 12345678 INR -> "123456.78". */
export function toDecimal(subunits: number, currency: string): string {
  const exp = exponentOf(currency);
  const negative = subunits < 0;
  const digits = Math.abs(Math.trunc(subunits))
    .toString()
    .padStart(exp + 1, '0');
  const whole = digits.slice(0, digits.length - exp);
  const frac = exp > 0 ? `.${digits.slice(digits.length - exp)}` : '';
  return `${negative ? '-' : ''}${whole}${frac}`;
}

const formatters = new Map<string, Intl.NumberFormat>();

/** 12345678, "INR" -> "₹1,23,456.78". */
export function formatMoney(subunits: number, currency: string): string {
  const code = currency.toUpperCase();
  let f = formatters.get(code);
  if (!f) {
    const exp = exponentOf(code);
    f = new Intl.NumberFormat(code === 'INR' ? 'en-IN' : 'en-US', {
      style: 'currency',
      currency: code,
      minimumFractionDigits: exp,
      maximumFractionDigits: exp,
    });
    formatters.set(code, f);
  }
  // Intl formats a decimal string exactly (no binary rounding on the way).
  return f.format(toDecimal(subunits, code) as unknown as number);
}

/** A plain count with the locale's grouping (Indian for INR merchants). */
export function formatCount(n: number, currency = 'INR'): string {
  return new Intl.NumberFormat(currency === 'INR' ? 'en-IN' : 'en-US').format(n);
}

/** A ratio 0..1 as a percentage with one decimal. */
export function formatPercent(ratio: number | null | undefined): string {
  return ratio === null || ratio === undefined ? '—' : `${(ratio * 100).toFixed(1)}%`;
}

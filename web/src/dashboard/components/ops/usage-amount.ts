import { exponentOf } from '../../../lib/money';

/**
 * What a usage aggregation costs at a plan's rate, as the usage close computes it (docs/usage.md): quantity x rate
 * (subunits per unit) in exact decimal arithmetic, rounded half away from zero to a whole subunit once. Both
 * arrive as decimal strings; BigInt keeps every digit, so no float touches the amount.
 */
function parseDecimal(text: string): { digits: bigint; scale: number } {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) throw new Error(`not a decimal: ${text}`);
  const frac = m[3] ?? '';
  const digits = BigInt(`${m[2]}${frac}`);
  return { digits: m[1] ? -digits : digits, scale: frac.length };
}

export function usageAmount(quantityDecimal: string, unitAmountDecimal: string): number {
  const q = parseDecimal(quantityDecimal);
  const r = parseDecimal(unitAmountDecimal);
  const product = q.digits * r.digits;
  const divisor = 10n ** BigInt(q.scale + r.scale);
  const negative = product < 0n;
  const abs = negative ? -product : product;
  let whole = abs / divisor;
  if ((abs % divisor) * 2n >= divisor) whole += 1n;
  return Number(negative ? -whole : whole);
}

/** A rate in subunits per unit shown in major units with every decimal it has: "0.25", INR -> "₹0.0025". */
export function rateInMajorUnits(unitAmountDecimal: string, currency: string): string {
  const { digits, scale } = parseDecimal(unitAmountDecimal);
  const exp = exponentOf(currency);
  const text = (digits < 0n ? -digits : digits).toString().padStart(scale + exp + 1, '0');
  const cut = text.length - (scale + exp);
  const frac = text.slice(cut).replace(/0+$/, '');
  const symbol =
    new Intl.NumberFormat('en', { style: 'currency', currency }).formatToParts(0).find((p) => p.type === 'currency')
      ?.value ?? currency;
  return `${digits < 0n ? '-' : ''}${symbol}${text.slice(0, cut)}${frac ? `.${frac}` : ''}`;
}

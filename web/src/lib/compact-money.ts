import { exponentOf, formatMoney } from './money';

/**
 * Short money labels for chart axes, where a full amount would not fit: INR in thousands, lakhs and crores
 * (₹12.3K, ₹1.2L, ₹3.4Cr), other currencies with the browser's compact notation ($1.2K, $3.4M). Display only: the
 * one rounding (to a tenth of the unit, half away from zero) is done on integers.
 */
const INR_STEPS: [bigint, string][] = [
  [10_000_000n, 'Cr'],
  [100_000n, 'L'],
  [1_000n, 'K'],
];

function roundDiv(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  return r * 2n >= d ? q + 1n : q;
}

function inrCompact(subunits: number): string {
  const sign = subunits < 0 ? '-' : '';
  const paise = BigInt(Math.abs(Math.trunc(subunits)));
  for (const [rupees, suffix] of INR_STEPS) {
    const unit = rupees * 100n;
    if (paise >= unit) {
      const tenths = roundDiv(paise * 10n, unit);
      const whole = tenths / 10n;
      const frac = tenths % 10n;
      return `${sign}₹${whole}${frac ? `.${frac}` : ''}${suffix}`;
    }
  }
  return `${sign}₹${roundDiv(paise, 100n)}`;
}

const compact = new Map<string, Intl.NumberFormat>();

/** 12_000_000 INR (paise) -> "₹1.2L"; 1_234_567_890 INR -> "₹12.3Cr"; 123456 USD (cents) -> "$1.2K". */
export function formatCompactMoney(subunits: number, currency: string): string {
  const code = currency.toUpperCase();
  if (code === 'INR') return inrCompact(subunits);
  if (Math.abs(subunits) < 100_000) return formatMoney(subunits, code).replace(/\.0+$/, '');
  let f = compact.get(code);
  if (!f) {
    f = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: code,
      notation: 'compact',
      maximumFractionDigits: 1,
    });
    compact.set(code, f);
  }
  const exp = BigInt(10 ** exponentOf(code));
  return f.format(Number(roundDiv(BigInt(Math.trunc(subunits)), exp)));
}

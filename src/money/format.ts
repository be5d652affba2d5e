import { currencyExponent } from './currency';

/**
 * Money as printed on tax invoices: integer subunits to major units by the currency's ISO 4217 exponent, in string
 * arithmetic (no float ever touches an amount), Indian digit grouping for INR (1,23,45,678.90), thousands otherwise.
 */

/** Symbols only where they are unambiguous; any other currency is printed with its code. */
const SYMBOLS: Record<string, string> = { INR: '₹', EUR: '€', GBP: '£', JPY: '¥', USD: '$' };

/** "1234567" -> "12,34,567" (Indian: the last three digits, then pairs) or "1,234,567". */
export function groupDigits(digits: string, indian: boolean): string {
  if (digits.length <= 3) return digits;
  const last = digits.slice(-3);
  const rest = digits.slice(0, -3);
  const size = indian ? 2 : 3;
  const groups: string[] = [];
  for (let end = rest.length; end > 0; end -= size) groups.unshift(rest.slice(Math.max(0, end - size), end));
  return `${groups.join(',')},${last}`;
}

/** 12345678 subunits of INR -> "1,23,456.78"; JPY 500 -> "500"; KWD 1500 -> "1.500". */
export function formatAmount(subunits: number, currency: string): string {
  const { sign, major, minor } = majorAndMinor(subunits, currency, 'formatAmount');
  return `${sign}${groupDigits(major, currency.toUpperCase() === 'INR')}${minor ? `.${minor}` : ''}`;
}

/** The same without grouping, for documents machines read (an e-invoice's amounts): "123456.78", "-12.50". */
export function decimalAmount(subunits: number, currency: string): string {
  const { sign, major, minor } = majorAndMinor(subunits, currency, 'decimalAmount');
  return `${sign}${major}${minor ? `.${minor}` : ''}`;
}

/** An amount's sign and its major and minor digits by the currency's exponent, from the integer alone. */
function majorAndMinor(subunits: number, currency: string, caller: string) {
  if (!Number.isSafeInteger(subunits)) throw new Error(`${caller}: not an integer amount: ${subunits}`);
  const exponent = currencyExponent(currency);
  const digits = String(Math.abs(subunits)).padStart(exponent + 1, '0');
  return {
    sign: subunits < 0 ? '-' : '',
    major: digits.slice(0, digits.length - exponent),
    minor: digits.slice(digits.length - exponent),
  };
}

/** With the currency: "₹1,23,456.78", "-€5.00", "KWD 1.500". */
export function formatMoney(subunits: number, currency: string): string {
  const code = currency.toUpperCase();
  const amount = formatAmount(subunits, code);
  const symbol = SYMBOLS[code];
  if (!symbol) return `${code} ${amount}`;
  return amount.startsWith('-') ? `-${symbol}${amount.slice(1)}` : `${symbol}${amount}`;
}

/**
 * A price per unit that may hold fractions of a subunit (a usage rate: `unit_amount_decimal`, exact decimal text in
 * subunits), in major units with the currency: the decimal point moved left by the ISO 4217 exponent in string
 * arithmetic, as many decimals as it needs and at least the currency's own, digits grouped as formatAmount groups
 * them. INR "0.25" (a quarter paisa) -> "₹0.0025"; "250.5" -> "₹2.505"; "150000" -> "₹1,500.00"; JPY "0.5" -> "¥0.5";
 * KWD "1.5" -> "KWD 0.0015".
 */
export function formatUnitPrice(decimalSubunits: string, currency: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimalSubunits.trim());
  if (!m) throw new Error(`formatUnitPrice: not a decimal amount: ${decimalSubunits}`);
  const [, sign, whole, fraction = ''] = m;
  const code = currency.toUpperCase();
  const exponent = currencyExponent(code);
  // All the digits (at least one before the point once it has moved), and where the point goes: `exponent` places left.
  const padded = (whole + fraction).padStart(fraction.length + exponent + 1, '0');
  const point = padded.length - fraction.length - exponent;
  const major = padded.slice(0, point).replace(/^0+(?=\d)/, '');
  const minor = padded.slice(point).replace(/0+$/, '').padEnd(exponent, '0');
  const amount = `${groupDigits(major, code === 'INR')}${minor ? `.${minor}` : ''}`;
  const negative = sign === '-' && /[1-9]/.test(padded);
  const symbol = SYMBOLS[code];
  return `${negative ? '-' : ''}${symbol ?? `${code} `}${amount}`;
}

const ONES = [
  '',
  'One',
  'Two',
  'Three',
  'Four',
  'Five',
  'Six',
  'Seven',
  'Eight',
  'Nine',
  'Ten',
  'Eleven',
  'Twelve',
  'Thirteen',
  'Fourteen',
  'Fifteen',
  'Sixteen',
  'Seventeen',
  'Eighteen',
  'Nineteen',
];
const TENS = ['', '', 'Twenty', 'Thirty', 'Forty', 'Fifty', 'Sixty', 'Seventy', 'Eighty', 'Ninety'];

function belowHundred(n: number): string {
  if (n < 20) return ONES[n];
  return [TENS[Math.floor(n / 10)], ONES[n % 10]].filter(Boolean).join(' ');
}

/** A whole number in Indian words: 11800000 -> "One Crore Eighteen Lakh"; crores above 99 read on ("One Hundred Crore"). */
export function indianNumberInWords(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`indianNumberInWords: not a whole number: ${n}`);
  if (n === 0) return 'Zero';
  const parts: string[] = [];
  const crore = Math.floor(n / 10_000_000);
  if (crore) parts.push(`${indianNumberInWords(crore)} Crore`);
  let rest = n % 10_000_000;
  const scales: [number, string][] = [
    [100_000, 'Lakh'],
    [1_000, 'Thousand'],
    [100, 'Hundred'],
  ];
  for (const [size, name] of scales) {
    const count = Math.floor(rest / size);
    if (count) parts.push(`${belowHundred(count)} ${name}`);
    rest %= size;
  }
  if (rest) parts.push(belowHundred(rest));
  return parts.join(' ');
}

/** An INR amount in words as invoices print it: 11800050 paise -> "Rupees One Lakh Eighteen Thousand and Fifty Paise Only". */
export function rupeesInWords(paise: number): string {
  if (!Number.isSafeInteger(paise)) throw new Error(`rupeesInWords: not an integer amount: ${paise}`);
  const abs = Math.abs(paise);
  const rupees = Math.floor(abs / 100);
  const p = abs % 100;
  const sign = paise < 0 ? 'Minus ' : '';
  const words = p
    ? `Rupees ${indianNumberInWords(rupees)} and ${belowHundred(p)} Paise`
    : `Rupees ${indianNumberInWords(rupees)}`;
  return `${sign}${words} Only`;
}

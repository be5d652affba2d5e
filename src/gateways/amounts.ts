import { currencyExponent } from '../core/currency';
import { GatewayError, ProviderName, PROVIDERS } from './port';

/**
 * The one place where ISO 4217 subunits (Cadence's money everywhere) become a gateway's own amount and back.
 * Integers only: every factor is a power of ten and a division is only done when it is exact.
 */

/** Stripe's zero-decimal currencies (https://docs.stripe.com/currencies#zero-decimal), all ISO exponent 0. */
const STRIPE_ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);

/**
 * Stripe's special cases: ISK and UGX are ISO exponent 0 but stay two-decimal in Stripe's API for backwards
 * compatibility (5 ISK is `500`, always a multiple of 100). HUF and TWD are two-decimal at Stripe as in ISO
 * (only payouts must be whole units), so they need no entry.
 */
const STRIPE_EXPONENT: Record<string, number> = { ISK: 2, UGX: 2 };

/** Stripe takes three-decimal currencies as such, but the last digit must be 0 (its acquirers round to tens). */
const THREE_DECIMAL_LAST_DIGIT_ZERO = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/**
 * Razorpay takes ISO subunits (zero-decimal JPY as is, three-decimal KWD/BHD/OMR in fils); for three-decimal
 * currencies the last digit must be 0 as well. The override table stays empty until Razorpay departs from ISO.
 */
const RAZORPAY_EXPONENT: Record<string, number> = {};

/** The gateway's exponent for `currency` (how many decimals its integer amounts carry). */
export function gatewayExponent(provider: ProviderName, currency: string): number {
  const code = currency.toUpperCase();
  const iso = currencyExponent(code);
  if (provider === 'stripe') {
    if (code in STRIPE_EXPONENT) return STRIPE_EXPONENT[code];
    if (STRIPE_ZERO_DECIMAL.has(code)) return 0;
    return iso;
  }
  return RAZORPAY_EXPONENT[code] ?? iso;
}

function assertInteger(amount: number, what: string) {
  if (!Number.isSafeInteger(amount)) throw new RangeError(`${what} must be an integer, got ${amount}`);
}

/** ISO subunits -> the gateway's integer amount. Throws GatewayError('gateway_rejected') for amounts it cannot take. */
export function toGatewayAmount(provider: ProviderName, amount: number, currency: string): number {
  assertInteger(amount, 'amount');
  const code = currency.toUpperCase();
  const iso = currencyExponent(code);
  const gw = gatewayExponent(provider, code);
  let out: number;
  if (gw >= iso) {
    out = amount * 10 ** (gw - iso);
  } else {
    const f = 10 ** (iso - gw);
    if (amount % f !== 0) {
      throw new GatewayError(
        'gateway_rejected',
        `${code} amounts must be whole multiples of ${f} subunits at ${provider} (got ${amount}).`,
      );
    }
    out = amount / f;
  }
  if (THREE_DECIMAL_LAST_DIGIT_ZERO.has(code) && gw === 3 && out % 10 !== 0) {
    throw new GatewayError(
      'gateway_rejected',
      `${code} is a three-decimal currency: ${provider} requires the amount to end in 0 (got ${amount}); round it to the nearest 10.`,
    );
  }
  if (!Number.isSafeInteger(out)) throw new RangeError(`amount ${amount} ${code} is too large`);
  return out;
}

/** The gateway's integer amount -> ISO subunits (exact; a fraction of an ISO subunit is an error). */
export function fromGatewayAmount(provider: ProviderName, amount: number, currency: string): number {
  assertInteger(amount, 'gateway amount');
  const code = currency.toUpperCase();
  const iso = currencyExponent(code);
  const gw = gatewayExponent(provider, code);
  if (iso >= gw) return amount * 10 ** (iso - gw);
  const f = 10 ** (gw - iso);
  if (amount % f !== 0) throw new RangeError(`${provider} amount ${amount} ${code} is not a whole ISO subunit`);
  return amount / f;
}

/**
 * Why some gateway Cadence supports (PROVIDERS: Stripe and Razorpay) could not charge `amount` subunits of `currency`
 * (e.g. a three-decimal amount not ending in 0), as that gateway's rule above words it; null when every one can. A
 * price is not tied to one gateway (a subscription picks its gateway when it is created), so a price must be
 * chargeable at all of them: the catalog refuses one that is not, rather than every subscription to it failing later.
 */
export function unchargeableAmount(amount: number, currency: string): string | null {
  for (const provider of PROVIDERS) {
    try {
      toGatewayAmount(provider, amount, currency);
    } catch (err) {
      if (err instanceof GatewayError || err instanceof RangeError) return err.message;
      throw err;
    }
  }
  return null;
}

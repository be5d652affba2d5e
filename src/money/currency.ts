import currencyCodes from 'currency-codes';

/**
 * ISO 4217 minor-unit exponent (JPY 0, INR 2, KWD 3). Callers pass currencies already validated at the edge
 * (src/core/currency.ts answers a 400 for an unknown code); here an unknown one is a programming error.
 */
export function currencyExponent(code: string): number {
  const c = currencyCodes.code(code.toUpperCase());
  if (!c) throw new Error(`Invalid currency: '${code}'.`);
  return c.digits;
}

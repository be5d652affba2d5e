import currencyCodes from 'currency-codes';
import { currencyExponent as exponentOf } from '../money';
import { invalid } from './errors';

/** Accepts a 3-letter ISO 4217 code in any case and returns it upper case; anything else is a 400 on `param`. */
export function normaliseCurrency(value: string, param = 'currency'): string {
  const code = String(value ?? '')
    .trim()
    .toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !currencyCodes.code(code)) {
    throw invalid(param, `Invalid currency: '${value}'. Use a 3-letter ISO 4217 code.`);
  }
  return code;
}

/** ISO 4217 minor-unit exponent (JPY 0, INR 2, KWD 3); an unknown code is a 400 on `currency`. */
export function currencyExponent(code: string): number {
  if (!currencyCodes.code(code.toUpperCase())) throw invalid('currency', `Invalid currency: '${code}'.`);
  return exponentOf(code);
}

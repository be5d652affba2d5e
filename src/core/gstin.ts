import { invalid } from './errors';
import { GST_STATES } from './gst-states';

/**
 * GSTINs and GST state codes as the GST portal issues them (docs/invoices-and-gst.md): a state code is one of the
 * portal's codes (01 to 38, 97 other territory, 99 centre jurisdiction); a GSTIN is 15 characters, its first two a
 * state code and its last the check character of the other fourteen. Accepted in any case, kept upper case.
 */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export const isGstStateCode = (code: unknown): code is string =>
  typeof code === 'string' && /^\d{2}$/.test(code) && code in GST_STATES;

/**
 * The check character of a GSTIN's first 14 characters: each character's value (0-9, A-Z as 0..35) times 1, 2, 1, 2,
 * ...; the quotient and remainder of each product by 36 added up; check = (36 - sum mod 36) mod 36.
 */
export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    const product = ALPHABET.indexOf(first14[i]) * (i % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return ALPHABET[(36 - (sum % 36)) % 36];
}

/** The GSTIN upper case, or 400 `parameter_invalid` on `param` saying what is wrong with it. */
export function normaliseGstin(value: unknown, param: string): string {
  const gstin = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (!/^\d{2}[0-9A-Z]{13}$/.test(gstin)) {
    throw invalid(param, `${param} must be a 15-character GSTIN: a 2-digit state code, then 13 letters or digits.`);
  }
  if (!isGstStateCode(gstin.slice(0, 2)))
    throw invalid(param, `${param} starts with ${gstin.slice(0, 2)}, which is not a GST state code.`);
  const check = gstinCheckCharacter(gstin.slice(0, 14));
  if (gstin[14] !== check)
    throw invalid(param, `${param} ${gstin} fails the GSTIN checksum (its check character would be ${check}).`);
  return gstin;
}

/** A GST state code as given, or 400 `parameter_invalid` on `param`. */
export function checkGstStateCode(value: unknown, param: string): string {
  if (!isGstStateCode(value)) throw invalid(param, `${param} must be a 2-digit GST state code (01 to 38, 97 or 99).`);
  return value;
}

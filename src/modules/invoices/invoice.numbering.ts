import { Mode } from '../../core/entity';
import { InvoiceType } from './invoice.entities';

/**
 * Invoice numbers (GST rule 46: at most 16 characters, consecutive, unique per financial year). The sequence itself is
 * taken in the database when the issuing transaction commits (invoice.service.ts `numberInvoicesAtCommit`,
 * invoice.store.ts `numberInvoices`); this file names the year and formats the number.
 */

/** India Standard Time is UTC+05:30 all year (no daylight saving), so a fixed offset is exact. */
const IST_OFFSET_MS = (5 * 60 + 30) * 60_000;

/** The Indian financial year (April to March, in IST) of an instant, named by the year it starts: 2026 for FY 2026-27. */
export function financialYear(at: Date): number {
  const ist = new Date(at.getTime() + IST_OFFSET_MS);
  const year = ist.getUTCFullYear();
  return ist.getUTCMonth() >= 3 ? year : year - 1;
}

export const MAX_NUMBER_LENGTH = 16;

/**
 * `INV-2627-000001` (invoices) or `CN-2627-000001` (credit notes) for the n-th of FY 2026-27; test mode prefixes `T`
 * (`TINV-2627-000001`, 16 characters). Past 999,999 the sequence simply grows; when that would pass 16 characters
 * the dashes are dropped, first the one after the prefix (`TINV2627-1000000`), then the other.
 */
export function formatInvoiceNumber(type: InvoiceType, mode: Mode, fy: number, n: number): string {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`invoice number: sequence must be a positive integer, got ${n}`);
  const { prefix, year } = numberParts(type, mode, fy);
  const seq = String(n).padStart(6, '0');
  for (const candidate of [`${prefix}-${year}-${seq}`, `${prefix}${year}-${seq}`, `${prefix}${year}${seq}`]) {
    if (candidate.length <= MAX_NUMBER_LENGTH) return candidate;
  }
  throw new Error(`invoice number ${n} of FY ${fy} does not fit ${MAX_NUMBER_LENGTH} characters`);
}

/**
 * The parts of a number before the sequence: `TINV` and `2627` for a test-mode invoice of FY 2026-27. The commit
 * numbers invoices in SQL from these (invoice.store.ts numberInvoices, the same format as formatInvoiceNumber).
 */
export function numberParts(type: InvoiceType, mode: Mode, fy: number): { prefix: string; year: string } {
  return {
    prefix: `${mode === Mode.TEST ? 'T' : ''}${type === InvoiceType.CREDIT_NOTE ? 'CN' : 'INV'}`,
    year: `${String(fy % 100).padStart(2, '0')}${String((fy + 1) % 100).padStart(2, '0')}`,
  };
}

import { createHash } from 'node:crypto';

/**
 * The invoice reference number of a GST e-invoice (docs/india.md, "E-invoicing"): SHA-256, in 64 lower-case hex
 * digits, of `<supplier GSTIN>/<financial year as 2026-27>/<document type>/<document number>`. The registration portal
 * computes it; Cadence checks the portal's answer against it, and the gateway sandbox's portal makes it so.
 */
export type EInvoiceDocType = 'INV' | 'CRN';

/** `2026-27` for the financial year that starts in April 2026. */
export function financialYearLabel(startYear: number): string {
  return `${startYear}-${String((startYear + 1) % 100).padStart(2, '0')}`;
}

export function irnOf(supplierGstin: string, financialYear: number, docType: EInvoiceDocType, number: string): string {
  return createHash('sha256')
    .update(`${supplierGstin}/${financialYearLabel(financialYear)}/${docType}/${number}`)
    .digest('hex');
}

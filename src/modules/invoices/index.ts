/**
 * Invoices, credit notes and their tax documents.
 * The module's public surface: other modules import it only through this file.
 */
export { InvoiceDocuments } from './invoice.documents';
export {
  BillingReason,
  EInvoiceStatus,
  Invoice,
  InvoiceSequence,
  InvoiceStatus,
  InvoiceType,
} from './invoice.entities';
export { IrpClient } from './e-invoice.irp';
export { invoiceResolvers } from './invoice.resolver';
export { InvoiceDocument, invoicePdf } from './invoice.pdf.resolver';
export { InvoiceService, taxPartiesOf, treatmentOf } from './invoice.service';
export type { InvoiceLineDraft, SnapshotTaxParties } from './invoice.service';
export { invoiceSql, recentRenewalInvoices } from './invoice.store';

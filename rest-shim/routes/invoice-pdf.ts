import type { Route } from '../routes';

/** The tax invoice or credit note as a PDF file (src/modules/invoices/invoice.pdf.ts). */
export const INVOICE_PDF_ROUTES: Route[] = [
  {
    method: 'get',
    path: '/invoices/{id}/pdf',
    tag: 'Invoices',
    binary: 'application/pdf',
    summary: 'The GST tax invoice or credit note as an A4 PDF (the fields of GST rule 46), shown inline.',
    document: 'query($id: ID!) { invoice(id: $id) { pdf { filename contentType base64 } } }',
  },
];

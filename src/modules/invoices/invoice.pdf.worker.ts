import { InvoicePdfInput, renderInvoicePdf } from './invoice.pdf';

/** The document worker thread's task (src/core/worker-pool.ts): one PDF from plain data, its bytes back. */
export default function render(input: InvoicePdfInput): Promise<Buffer> {
  return renderInvoicePdf(input);
}

import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { WorkerPool } from '../../core/worker-pool';
import { Invoice } from './invoice.entities';
import type { InvoicePdfInput } from './invoice.pdf';
import { storedPdf, storePdf } from './invoice.store';

/** Waiting renders over all merchants, and renders one merchant (in one mode) may have waiting or running. */
export const RENDER_QUEUE = 64;
export const RENDER_PER_MERCHANT = 4;

/**
 * The PDFs of issued invoices and credit notes. An issued document never changes, so each is rendered once and its
 * bytes kept (table invoice_documents); what moves after issue (amount paid, amount due, credit applied, credited by
 * later credit notes, an e-invoice's registration and its cancellation) makes its "printed state", and a document
 * whose state moved is rendered once more in the new one. Rendering runs on a bounded pool of worker threads
 * (src/core/worker-pool.ts), never on the event loop.
 */
export class InvoiceDocuments {
  private readonly renderer: WorkerPool<InvoicePdfInput, Uint8Array>;
  /** Renders in flight in this process by document and state: concurrent downloads of one document share one. */
  private readonly rendering = new Map<string, Promise<Buffer>>();

  constructor(threads: number) {
    this.renderer = new WorkerPool({
      filename: require.resolve('./invoice.pdf.worker'),
      threads,
      maxQueue: RENDER_QUEUE,
      perTenant: RENDER_PER_MERCHANT,
      name: 'document rendering',
    });
  }

  async pdf(ctx: Ctx, invoice: Invoice): Promise<Buffer> {
    const tenant = tenantOf(ctx);
    const state = printedState(invoice);
    const stored = await storedPdf(ctx.em, invoice.id, state);
    if (stored) return stored;
    const key = `${invoice.id}:${state}`;
    let render = this.rendering.get(key);
    if (!render) {
      render = (async () => {
        const input = await pdfInput(ctx, invoice);
        const bytes = Buffer.from(await this.renderer.run(`${tenant.merchantId}:${tenant.mode}`, input));
        await storePdf(ctx.em, tenant, invoice.id, state, bytes);
        return bytes;
      })().finally(() => this.rendering.delete(key));
      this.rendering.set(key, render);
    }
    return render;
  }

  close(): Promise<void> {
    return this.renderer.close();
  }
}

/** The figures a PDF prints that may move after issue; everything else on it is fixed at issue. */
function printedState(invoice: Invoice): string {
  // An e-invoice's registration (IRN and QR) and its cancellation are printed once the portal has given them.
  const eInvoice = invoice.irn
    ? `;irn=${invoice.irn};cancelled=${invoice.eInvoiceCancelledAt?.toISOString() ?? ''}`
    : '';
  return `paid=${invoice.amountPaid};due=${invoice.amountDue};credit=${invoice.creditApplied};credited=${invoice.amountCredited}${eInvoice}`;
}

/**
 * The renderer's input as plain data (it is copied to a worker thread), read from issued records alone
 * (docs/invoices-and-gst.md): the document with the parties and SAC codes it stores, and a credit note's original
 * invoice (its number and date). Nothing from the merchant's or customer's current settings, so a later change of them
 * changes no document.
 */
async function pdfInput(ctx: Ctx, invoice: Invoice): Promise<InvoicePdfInput> {
  const related = invoice.relatedInvoiceId ? await ctx.em.findOne(Invoice, { id: invoice.relatedInvoiceId }) : null;
  const i = invoice;
  return {
    invoice: {
      type: i.type,
      number: i.number,
      status: i.status,
      currency: i.currency,
      subtotal: i.subtotal,
      cgstAmount: i.cgstAmount,
      sgstAmount: i.sgstAmount,
      igstAmount: i.igstAmount,
      taxAmount: i.taxAmount,
      total: i.total,
      creditApplied: i.creditApplied,
      amountCredited: i.amountCredited,
      amountPaid: i.amountPaid,
      amountDue: i.amountDue,
      taxRateBps: i.taxRateBps,
      placeOfSupply: i.placeOfSupply ?? null,
      supplierGstin: i.supplierGstin ?? null,
      customerGstin: i.customerGstin ?? null,
      lineItems: i.lineItems.map((l) => ({ ...l })),
      periodStart: i.periodStart ?? null,
      periodEnd: i.periodEnd ?? null,
      issuedAt: i.issuedAt,
    },
    supplier: {
      name: i.supplier.name,
      gstin: i.supplier.gstin ?? null,
      stateCode: i.supplier.stateCode ?? null,
      address: i.supplier.address ?? null,
    },
    recipient: {
      name: i.recipient.name ?? null,
      email: i.recipient.email ?? null,
      gstin: i.recipient.gstin ?? null,
      stateCode: i.recipient.stateCode ?? null,
      address: i.recipient.address ?? null,
    },
    relatedInvoice: related && { number: related.number, issuedAt: related.issuedAt },
    eInvoice:
      i.irn && i.ackNo && i.ackDate && i.signedQr
        ? {
            irn: i.irn,
            ackNo: i.ackNo,
            ackDate: i.ackDate,
            signedQr: i.signedQr,
            cancelledAt: i.eInvoiceCancelledAt ?? null,
          }
        : null,
  };
}

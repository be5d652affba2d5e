import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { divRound } from '../../money';
import { BillingReason, Invoice, InvoiceStatus, InvoiceType } from './invoice.entities';
import type { InvoiceDraft, SnapshotTaxParties } from './invoice.service';

/**
 * Credit notes against an invoice (docs/invoices-and-gst.md "Credit notes"): a refund's share of the invoice it
 * credits, and the sums of the credit notes already issued against an invoice. Pure integer arithmetic (BigInt where a
 * product can pass 2^53).
 */

/** The taxable value and tax heads of an invoice or credit note. */
export interface CreditParts {
  subtotal: number;
  cgst: number;
  sgst: number;
  igst: number;
}

export const partsTotal = (p: CreditParts): number => p.subtotal + p.cgst + p.sgst + p.igst;

const HEADS = ['cgst', 'sgst', 'igst'] as const;

/**
 * The parts of a refund's credit note: the refund's share (refund / the invoice's total) of the invoice's taxable
 * value and of each tax head, so that
 * - the credit note's total is the refund (the money returned), unless less than that is left to credit;
 * - each head is its share rounded half away from zero; the taxable value is the refund less the heads (within one
 *   subunit of its own rounded share: rounding every part on its own could make the total differ from the refund);
 * - no part ever takes more than is left of it after the credit notes already issued (`credited`), so credit notes
 *   never sum past the invoice, in total or in any head;
 * - `last` (the refund that completes the refund of everything collected) or a refund at least what is left takes
 *   exactly what is left of every part: the credit notes of a fully refunded invoice sum to it exactly.
 */
export function refundCreditParts(
  invoice: CreditParts,
  credited: CreditParts,
  refund: number,
  last: boolean,
): CreditParts {
  if (!Number.isSafeInteger(refund) || refund < 0)
    throw new Error(`refundCreditParts: refund must be a non-negative integer, got ${refund}`);
  const left: CreditParts = {
    subtotal: Math.max(0, invoice.subtotal - credited.subtotal),
    cgst: Math.max(0, invoice.cgst - credited.cgst),
    sgst: Math.max(0, invoice.sgst - credited.sgst),
    igst: Math.max(0, invoice.igst - credited.igst),
  };
  const total = partsTotal(invoice);
  if (last || refund >= partsTotal(left)) return left;
  if (total <= 0 || refund === 0) return { subtotal: 0, cgst: 0, sgst: 0, igst: 0 };
  const share = (x: number) => Number(divRound(BigInt(x) * BigInt(refund), BigInt(total)));
  const parts: CreditParts = { subtotal: 0, cgst: 0, sgst: 0, igst: 0 };
  for (const h of HEADS) parts[h] = Math.min(share(invoice[h]), left[h]);
  parts.subtotal = refund - (parts.cgst + parts.sgst + parts.igst);
  // The heads rounded up past the refund (only for a refund of a subunit or two): take from the largest head.
  while (parts.subtotal < 0) {
    const h = HEADS.reduce((a, b) => (parts[b] > parts[a] ? b : a));
    parts[h] -= 1;
    parts.subtotal += 1;
  }
  // The taxable value would pass what is left of it (earlier notes took less tax than their share): the heads take
  // the rest, one subunit at a time to the head with the most left. There is room: refund < what is left in total.
  while (parts.subtotal > left.subtotal) {
    const h = HEADS.reduce((a, b) => (left[b] - parts[b] > left[a] - parts[a] ? b : a));
    parts[h] += 1;
    parts.subtotal -= 1;
  }
  return parts;
}

/** The invoice that records a payment (it paid it), locked to the end of the transaction; null: none records it. */
export function invoiceOfPayment(em: EntityManager, paymentId: string): Promise<Invoice | null> {
  return em.findOne(
    Invoice,
    { paymentId, type: InvoiceType.INVOICE },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { id: 'asc' } },
  );
}

/**
 * The draft of a refund's credit note against `original`: one line naming the original, the parts given (its
 * heads as given, not recomputed), and the original's tax parties (rate, supplier, place of supply, GSTINs) and
 * parties, so the credit note shows the supply as the invoice did whatever the settings are now. Null when nothing is
 * left to credit.
 */
export function refundCreditNoteDraft(
  original: Invoice,
  refund: { id: string; reason?: string | null },
  parts: CreditParts,
  issuedAt: Date,
): InvoiceDraft | null {
  if (partsTotal(parts) <= 0) return null;
  const taxParties: SnapshotTaxParties = {
    rateBps: original.taxRateBps,
    merchantGstin: original.supplierGstin ?? null,
    merchantState: original.supplierGstin?.slice(0, 2) ?? null,
    customer: { state: original.placeOfSupply ?? null, gstin: original.customerGstin ?? null },
  };
  const what = original.lineItems.length === 1 ? original.lineItems[0].description : `invoice ${original.number}`;
  return {
    type: InvoiceType.CREDIT_NOTE,
    billingReason: BillingReason.REFUND,
    status: InvoiceStatus.ISSUED,
    customerId: original.customerId,
    subscriptionId: original.subscriptionId ?? null,
    relatedInvoiceId: original.id,
    refundId: refund.id,
    currency: original.currency,
    lines: [
      {
        description: `Refund: ${what}`.slice(0, 255),
        quantity: 1,
        unitAmount: parts.subtotal,
        amount: parts.subtotal,
        periodStart: original.periodStart ?? null,
        periodEnd: original.periodEnd ?? null,
        hsnSac: original.lineItems[0]?.hsnSac ?? null,
      },
    ],
    periodStart: original.periodStart ?? null,
    periodEnd: original.periodEnd ?? null,
    issuedAt,
    taxParties,
    heads: { cgst: parts.cgst, sgst: parts.sgst, igst: parts.igst },
    // The parties as the original states them (null on a document issued before they were kept: as at issue now).
    supplier: original.supplier ?? null,
    recipient: original.recipient ?? null,
  };
}

import type { EInvoiceDocType } from '../../core/irn';
import { decimalAmount } from '../../money';
import { Invoice, InvoiceType } from './invoice.entities';
import { istDate, ratePercent } from './invoice.pdf';

/**
 * An issued invoice or credit note in the registration portal's schema (NIC e-invoice schema 1.1: document, seller,
 * buyer, items, values), from the issued record alone: the parties as the document states them, its lines and heads.
 * Amounts go as rupees with exactly two decimals, written as strings from the integer paise, so no float ever holds
 * money on the way.
 */

export const docTypeOf = (invoice: Pick<Invoice, 'type'>): EInvoiceDocType =>
  invoice.type === InvoiceType.CREDIT_NOTE ? 'CRN' : 'INV';

/** 49900 -> "499.00"; -1250 -> "-12.50". */
const rupees = (paise: number) => decimalAmount(paise, 'INR');

/** DD/MM/YYYY in IST, the portal's document date (the PDF prints it as DD-MM-YYYY). */
export const portalDate = (at: Date): string => istDate(at).replaceAll('-', '/');

export function eInvoicePayload(invoice: Invoice): Record<string, unknown> {
  const { supplier, recipient } = invoice;
  return {
    Version: '1.1',
    TranDtls: { TaxSch: 'GST', SupTyp: 'B2B', RegRev: 'N' },
    DocDtls: { Typ: docTypeOf(invoice), No: invoice.number, Dt: portalDate(invoice.issuedAt) },
    SellerDtls: {
      Gstin: supplier.gstin,
      LglNm: supplier.name,
      Addr1: supplier.address ?? null,
      Stcd: supplier.stateCode,
    },
    BuyerDtls: {
      Gstin: recipient.gstin,
      LglNm: recipient.name ?? recipient.email ?? recipient.gstin,
      Pos: invoice.placeOfSupply ?? recipient.stateCode,
      Addr1: recipient.address ?? null,
      Stcd: recipient.stateCode,
    },
    ItemList: invoice.lineItems.map((line, i) => {
      const tax = line.cgstAmount + line.sgstAmount + line.igstAmount;
      return {
        SlNo: String(i + 1),
        PrdDesc: line.description,
        IsServc: 'Y',
        HsnCd: line.hsnSac,
        Qty: line.quantity,
        UnitPrice: rupees(line.unitAmount),
        TotAmt: rupees(line.amount),
        AssAmt: rupees(line.amount),
        GstRt: ratePercent(invoice.taxRateBps),
        CgstAmt: rupees(line.cgstAmount),
        SgstAmt: rupees(line.sgstAmount),
        IgstAmt: rupees(line.igstAmount),
        TotItemVal: rupees(line.amount + tax),
      };
    }),
    ValDtls: {
      AssVal: rupees(invoice.subtotal),
      CgstVal: rupees(invoice.cgstAmount),
      SgstVal: rupees(invoice.sgstAmount),
      IgstVal: rupees(invoice.igstAmount),
      TotInvVal: rupees(invoice.total),
    },
  };
}

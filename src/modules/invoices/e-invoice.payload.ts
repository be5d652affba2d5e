import type { EInvoiceDocType } from '../../core/irn';
import { Invoice, InvoiceType } from './invoice.entities';

/**
 * An issued invoice or credit note in the registration portal's schema (NIC e-invoice schema 1.1: document, seller,
 * buyer, items, values), from the issued record alone: the parties as the document states them, its lines and heads.
 * Amounts go as rupees with exactly two decimals, written as strings from the integer paise, so no float ever holds
 * money on the way.
 */

export const docTypeOf = (invoice: Pick<Invoice, 'type'>): EInvoiceDocType =>
  invoice.type === InvoiceType.CREDIT_NOTE ? 'CRN' : 'INV';

/** 49900 -> "499.00"; -1250 -> "-12.50". */
export function rupees(paise: number): string {
  if (!Number.isSafeInteger(paise)) throw new Error(`e-invoice: ${paise} is not a whole number of paise`);
  const abs = Math.abs(paise);
  return `${paise < 0 ? '-' : ''}${Math.trunc(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

const IST_OFFSET_MS = (5 * 60 + 30) * 60_000;

/** DD/MM/YYYY in IST, the portal's document date. */
export function portalDate(at: Date): string {
  const d = new Date(at.getTime() + IST_OFFSET_MS);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getUTCDate())}/${pad(d.getUTCMonth() + 1)}/${d.getUTCFullYear()}`;
}

/** The percentage of a rate in basis points, as the portal writes it: 1800 -> "18", 1250 -> "12.5". */
const percent = (bps: number) => rupees(bps).replace(/\.?0+$/, '') || '0';

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
        GstRt: percent(invoice.taxRateBps),
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

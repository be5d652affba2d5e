/**
 * GST tax invoice and credit note PDFs (src/modules/invoices/invoice.pdf.ts): the money and date formatting they
 * print, the rendered text as poppler's pdftotext reads it back (rule 46 fields, the rupee sign from the shipped
 * font), and GET /v1/invoices/{id}/pdf end to end, which must answer the same bytes as the GraphQL field.
 */
import crypto from 'node:crypto';
import {
  Invoice,
  InvoiceLineItem,
  InvoiceStatus,
  InvoiceType,
  BillingReason,
} from '../../src/modules/invoices/invoice.entities';
import { GST_STATES, gstStateLabel } from '../../src/core/gst-states';
import {
  InvoicePdfInput,
  istDate,
  pdfFilename,
  ratePercent,
  renderInvoicePdf,
} from '../../src/modules/invoices/invoice.pdf';
import {
  decimalAmount,
  formatAmount,
  formatMoney,
  groupDigits,
  indianNumberInWords,
  rupeesInWords,
} from '../../src/money';
import { TestMerchant, useHarness } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';
import { HAS_PDFTOTEXT, pdfText } from './pdf-text';

describe('money and dates as invoices print them', () => {
  it('groups digits the Indian way for INR and by thousands otherwise', () => {
    expect(groupDigits('1', true)).toBe('1');
    expect(groupDigits('123', true)).toBe('123');
    expect(groupDigits('1234', true)).toBe('1,234');
    expect(groupDigits('123456', true)).toBe('1,23,456');
    expect(groupDigits('1234567', true)).toBe('12,34,567');
    expect(groupDigits('123456789', true)).toBe('12,34,56,789');
    expect(groupDigits('1234567', false)).toBe('1,234,567');
    expect(groupDigits('123456789', false)).toBe('123,456,789');
  });

  it('turns integer subunits into major units by the currency exponent (0, 2, 3)', () => {
    expect(formatAmount(12345678, 'INR')).toBe('1,23,456.78');
    expect(formatAmount(5, 'INR')).toBe('0.05');
    expect(formatAmount(0, 'INR')).toBe('0.00');
    expect(formatAmount(-49900, 'INR')).toBe('-499.00');
    expect(formatAmount(123456789, 'USD')).toBe('1,234,567.89');
    expect(formatAmount(500, 'JPY')).toBe('500');
    expect(formatAmount(1234567, 'JPY')).toBe('1,234,567');
    expect(formatAmount(1500, 'KWD')).toBe('1.500');
    expect(formatAmount(7, 'KWD')).toBe('0.007');
    expect(formatAmount(1234567890, 'KWD')).toBe('1,234,567.890');
    // No float on the way: the largest safe amount keeps every digit.
    expect(formatAmount(Number.MAX_SAFE_INTEGER, 'INR')).toBe('9,00,71,99,25,47,409.91');
    expect(() => formatAmount(1.5, 'INR')).toThrow();
    // Ungrouped, for documents machines read (an e-invoice's amounts).
    expect(decimalAmount(12345678, 'INR')).toBe('123456.78');
    expect(decimalAmount(5, 'INR')).toBe('0.05');
    expect(decimalAmount(-1250, 'INR')).toBe('-12.50');
    expect(decimalAmount(1234567, 'JPY')).toBe('1234567');
    expect(decimalAmount(1500, 'KWD')).toBe('1.500');
    expect(() => decimalAmount(1.5, 'INR')).toThrow();
  });

  it('prefixes the currency symbol, or the code where a symbol would be ambiguous', () => {
    expect(formatMoney(11800000, 'INR')).toBe('₹1,18,000.00');
    expect(formatMoney(11800000, 'inr')).toBe('₹1,18,000.00');
    expect(formatMoney(-50000, 'INR')).toBe('-₹500.00');
    expect(formatMoney(500, 'JPY')).toBe('¥500');
    expect(formatMoney(1500, 'KWD')).toBe('KWD 1.500');
    expect(formatMoney(199, 'USD')).toBe('$1.99');
  });

  it('writes INR amounts in Indian words (lakh, crore)', () => {
    expect(indianNumberInWords(0)).toBe('Zero');
    expect(indianNumberInWords(15)).toBe('Fifteen');
    expect(indianNumberInWords(99)).toBe('Ninety Nine');
    expect(indianNumberInWords(101)).toBe('One Hundred One');
    expect(indianNumberInWords(118000)).toBe('One Lakh Eighteen Thousand');
    expect(indianNumberInWords(10000000)).toBe('One Crore');
    expect(indianNumberInWords(123456789)).toBe(
      'Twelve Crore Thirty Four Lakh Fifty Six Thousand Seven Hundred Eighty Nine',
    );
    expect(indianNumberInWords(1_000_000_000)).toBe('One Hundred Crore');
    expect(rupeesInWords(11800000)).toBe('Rupees One Lakh Eighteen Thousand Only');
    expect(rupeesInWords(58941)).toBe('Rupees Five Hundred Eighty Nine and Forty One Paise Only');
    expect(rupeesInWords(5)).toBe('Rupees Zero and Five Paise Only');
  });

  it('dates in IST (DD-MM-YYYY), rates from basis points, safe file names', () => {
    expect(istDate(new Date('2026-04-30T18:29:59Z'))).toBe('30-04-2026');
    expect(istDate(new Date('2026-04-30T18:30:00Z'))).toBe('01-05-2026'); // midnight in India
    expect(istDate(new Date('2026-12-31T20:00:00Z'))).toBe('01-01-2027');
    expect(ratePercent(1800)).toBe('18');
    expect(ratePercent(900)).toBe('9');
    expect(ratePercent(1250)).toBe('12.5');
    expect(ratePercent(625)).toBe('6.25');
    expect(pdfFilename('INV-2026-000042')).toBe('INV-2026-000042.pdf');
    expect(pdfFilename('INV/26-27/7')).toBe('INV-26-27-7.pdf');
  });

  it('knows every GST state code (01 to 38, 97 and 99) and nothing else', () => {
    const codes = Object.keys(GST_STATES).sort();
    expect(codes).toEqual([...Array.from({ length: 38 }, (_, i) => String(i + 1).padStart(2, '0')), '97', '99']);
    expect(gstStateLabel('27')).toBe('Maharashtra (27)');
    expect(gstStateLabel('29')).toBe('Karnataka (29)');
    expect(gstStateLabel('36')).toBe('Telangana (36)');
    expect(gstStateLabel('99')).toBe('Centre Jurisdiction (99)');
    expect(gstStateLabel('98')).toBe('98');
    expect(gstStateLabel(null)).toBeNull();
  });
});

/** The supplier as an issued document stores it (invoice.supplier); the SAC is on each line (hsnSac). */
const SUPPLIER = {
  name: 'Acme Software Pvt Ltd',
  gstin: '27AAPFU0939F1ZV',
  stateCode: '27',
  address: '4th Floor, Tower B, Baner Road\nPune 411045',
};

function line(over: Partial<InvoiceLineItem> = {}): InvoiceLineItem {
  return Object.assign(new InvoiceLineItem(), {
    description: 'Pro plan (monthly)',
    quantity: 1,
    unitAmount: 10000000,
    amount: 10000000,
    periodStart: '2026-04-01T00:00:00.000Z',
    periodEnd: '2026-05-01T00:00:00.000Z',
    proration: false,
    hsnSac: '998314',
    cgstAmount: 0,
    sgstAmount: 0,
    igstAmount: 0,
    ...over,
  });
}

function invoice(over: Partial<Invoice> = {}): Invoice {
  return Object.assign(new Invoice(), {
    id: crypto.randomUUID(),
    type: InvoiceType.INVOICE,
    number: 'INV-2026-000042',
    billingReason: BillingReason.SUBSCRIPTION_CYCLE,
    status: InvoiceStatus.PAID,
    customerId: crypto.randomUUID(),
    currency: 'INR',
    subtotal: 10000000,
    cgstAmount: 0,
    sgstAmount: 0,
    igstAmount: 0,
    taxAmount: 1800000,
    total: 11800000,
    creditApplied: 0,
    amountPaid: 11800000,
    amountDue: 0,
    taxRateBps: 1800,
    placeOfSupply: '27',
    supplierGstin: SUPPLIER.gstin,
    customerGstin: null,
    lineItems: [line()],
    periodStart: new Date('2026-04-01T00:00:00Z'),
    periodEnd: new Date('2026-05-01T00:00:00Z'),
    issuedAt: new Date('2026-04-30T20:00:00Z'), // 01-05-2026 in India
    ...over,
  });
}

/** The text must hold `label` and then `value` on one line (pdftotext -layout keeps rows). */
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const row = (label: string, value: string) => new RegExp(`${escape(label)}\\s+${escape(value)}`);

describe('rendered tax invoices and credit notes', () => {
  it('has pdftotext to read them back (apt-get install -y poppler-utils)', () => expect(HAS_PDFTOTEXT).toBe(true));

  const intraState: InvoicePdfInput = {
    invoice: invoice({
      cgstAmount: 900000,
      sgstAmount: 900000,
      customerGstin: '27AAACB1234C1ZF',
      lineItems: [line({ cgstAmount: 900000, sgstAmount: 900000 })],
    }),
    supplier: SUPPLIER,
    recipient: {
      name: 'Bharat Traders',
      email: 'accounts@bharat.example',
      stateCode: '27',
      gstin: '27AAACB1234C1ZF',
      address: null,
    },
  };

  it('is a PDF, with the same bytes each time (metadata fixed by the invoice)', async () => {
    const a = await renderInvoicePdf(intraState);
    const b = await renderInvoicePdf(intraState);
    expect(a.subarray(0, 5).toString()).toBe('%PDF-');
    expect(a.equals(b)).toBe(true);
  });

  it('intra-state INR: CGST and SGST at half the rate each, every rule 46 field, the rupee sign', async () => {
    const text = await pdfText(await renderInvoicePdf(intraState));
    expect(text).toContain('Tax Invoice');
    expect(text).toContain('Acme Software Pvt Ltd');
    expect(text).toContain('4th Floor, Tower B, Baner Road');
    expect(text).toContain('Pune 411045');
    expect(text).toMatch(row('GSTIN', '27AAPFU0939F1ZV')); // supplier
    expect(text).toMatch(row('GSTIN', '27AAACB1234C1ZF')); // recipient
    expect(text).toContain('Bharat Traders');
    expect(text).toContain('accounts@bharat.example');
    expect(text).toMatch(row('Invoice no.', 'INV-2026-000042'));
    expect(text).toMatch(row('Invoice date', '01-05-2026'));
    expect(text).toMatch(row('Place of supply', 'Maharashtra (27)'));
    expect(text).toMatch(row('Reverse charge', 'No'));
    expect(text).toMatch(/SAC/);
    expect(text).toMatch(/Pro plan \(monthly\)\s+998314\s+1\s+1,00,000\.00\s+1,00,000\.00/);
    expect(text).toMatch(row('Taxable value', '₹1,00,000.00'));
    expect(text).toMatch(row('CGST @ 9%', '₹9,000.00'));
    expect(text).toMatch(row('SGST @ 9%', '₹9,000.00'));
    expect(text).not.toContain('IGST');
    expect(text).toMatch(row('Total', '₹1,18,000.00'));
    expect(text).toMatch(row('Total in words', 'Rupees One Lakh Eighteen Thousand Only'));
    expect(text).toMatch(row('Amount paid', '₹1,18,000.00'));
    expect(text).toMatch(row('Amount due', '₹0.00'));
    expect(text).not.toContain('credit applied');
  });

  it('inter-state INR to an unregistered customer: IGST at the full rate', async () => {
    const text = await pdfText(
      await renderInvoicePdf({
        invoice: invoice({
          number: 'INV-2026-000043',
          placeOfSupply: '29',
          igstAmount: 1800000,
          lineItems: [line({ igstAmount: 1800000 })],
        }),
        supplier: SUPPLIER,
        recipient: { name: null, email: 'buyer@example.com', stateCode: '29', gstin: null, address: null },
      }),
    );
    expect(text).toMatch(row('Invoice no.', 'INV-2026-000043'));
    expect(text).toMatch(row('Place of supply', 'Karnataka (29)'));
    expect(text).toMatch(row('GSTIN', '27AAPFU0939F1ZV'));
    expect(text).toMatch(row('GSTIN', 'Unregistered'));
    expect(text).toContain('buyer@example.com');
    expect(text).toMatch(row('IGST @ 18%', '₹18,000.00'));
    expect(text).not.toMatch(/CGST|SGST/);
    expect(text).toMatch(row('Total', '₹1,18,000.00'));
    expect(text).toMatch(row('Reverse charge', 'No'));
  });

  it('a credit note names its invoice; credit applied and the amount due are printed on an invoice', async () => {
    const credit = await pdfText(
      await renderInvoicePdf({
        invoice: invoice({
          type: InvoiceType.CREDIT_NOTE,
          number: 'CN-2026-000003',
          status: InvoiceStatus.ISSUED,
          billingReason: BillingReason.SUBSCRIPTION_UPDATE,
          subtotal: 250050,
          cgstAmount: 22505,
          sgstAmount: 22505,
          taxAmount: 45010,
          total: 295060,
          amountPaid: 0,
          lineItems: [
            line({ description: 'Unused time on Pro plan', unitAmount: 250050, amount: 250050, proration: true }),
          ],
          issuedAt: new Date('2026-04-15T06:00:00Z'),
        }),
        supplier: SUPPLIER,
        recipient: intraState.recipient,
        relatedInvoice: { number: 'INV-2026-000042', issuedAt: new Date('2026-04-01T04:00:00Z') },
      }),
    );
    expect(credit).toContain('Credit Note');
    expect(credit).toMatch(row('Credit note no.', 'CN-2026-000003'));
    expect(credit).toMatch(row('Credit note date', '15-04-2026'));
    expect(credit).toMatch(row('Against invoice', 'INV-2026-000042'));
    expect(credit).toMatch(row('Invoice dated', '01-04-2026'));
    expect(credit).toMatch(row('CGST @ 9%', '₹225.05'));
    expect(credit).toMatch(row('SGST @ 9%', '₹225.05'));
    expect(credit).toMatch(row('Total credit', '₹2,950.60'));
    expect(credit).toMatch(row('Total in words', 'Rupees Two Thousand Nine Hundred Fifty and Sixty Paise Only'));
    expect(credit).toContain('Proration');

    const next = await pdfText(
      await renderInvoicePdf({
        ...intraState,
        invoice: invoice({
          ...intraState.invoice,
          number: 'INV-2026-000044',
          creditApplied: 295060,
          amountPaid: 0,
          amountDue: 11504940,
          status: InvoiceStatus.OPEN,
        }),
      }),
    );
    expect(next).toMatch(row('Less credit applied', '-₹2,950.60'));
    expect(next).toMatch(row('Amount due', '₹1,15,049.40'));
  });

  it('a non-INR invoice is a zero-rated export in that currency, without words in rupees', async () => {
    const text = await pdfText(
      await renderInvoicePdf({
        invoice: invoice({
          currency: 'USD',
          subtotal: 4900,
          taxAmount: 0,
          total: 4900,
          taxRateBps: 0,
          placeOfSupply: null,
          lineItems: [line({ unitAmount: 4900, amount: 4900 })],
        }),
        supplier: SUPPLIER,
        recipient: { name: 'Globex Inc', email: 'ap@globex.example', stateCode: null, gstin: null, address: null },
      }),
    );
    expect(text).toMatch(row('Place of supply', 'Outside India (export)'));
    expect(text).toMatch(row('Total', '$49.00'));
    expect(text).toContain('Zero-rated supply');
    expect(text).not.toContain('Rupees');
  });

  it('many lines run onto further pages, each with the table header', async () => {
    const lines = Array.from({ length: 60 }, (_, i) =>
      line({ description: `Seat ${i + 1}`, unitAmount: 100, amount: 100 }),
    );
    const text = await pdfText(
      await renderInvoicePdf({
        ...intraState,
        invoice: invoice({
          ...intraState.invoice,
          lineItems: lines,
          subtotal: 6000,
          cgstAmount: 540,
          sgstAmount: 540,
          taxAmount: 1080,
          total: 7080,
        }),
      }),
    );
    const pages = text.split('\f').filter((p) => p.trim());
    expect(pages.length).toBeGreaterThan(1);
    for (const p of pages.filter((p) => /Seat \d+/.test(p))) expect(p).toMatch(/Taxable value \(₹\)/);
    expect(text).toContain('Seat 60');
    expect(text).toMatch(row('Total', '₹70.80'));
  });

  it('prints the parties and SAC codes it is given and nothing else: a line without a SAC shows —', async () => {
    const text = await pdfText(
      await renderInvoicePdf({
        ...intraState,
        invoice: invoice({
          ...intraState.invoice,
          lineItems: [line({ hsnSac: null, cgstAmount: 900000, sgstAmount: 900000 })],
        }),
        recipient: { ...intraState.recipient, address: '12 MG Road\nBengaluru 560001' },
      }),
    );
    expect(text).not.toContain('998314');
    expect(text).toMatch(/Pro plan \(monthly\)\s+—\s+1\s+1,00,000\.00\s+1,00,000\.00/);
    expect(text).toContain('12 MG Road');
    expect(text).toContain('Bengaluru 560001');
    expect(text).toMatch(row('State', 'Maharashtra (27)'));
  });
});

describe('GET /v1/invoices/{id}/pdf', () => {
  const h = useHarness();
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '27AAPFU0939F1ZV' });
  });

  it('answers the invoice of a paid one-time payment as a PDF, the same bytes as the GraphQL field', async () => {
    const settings = await m.test.post('/merchant/tax-settings', {
      address: '4th Floor, Tower B, Baner Road, Pune 411045',
      sac_code: '998314',
    });
    expect(settings.status).toBe(200);

    await connect(m.test, 'razorpay');
    const payment = await createPayment(m.test, {
      amount: 118000,
      customer_name: 'Bharat Traders',
      customer_state_code: '29',
      customer_gstin: '29AAACB1234C1ZB',
    });
    await pay(m.test, payment);
    let inv: any;
    for (let i = 0; i < 100 && !inv; i++) {
      const list = await m.test.get('/invoices');
      inv = list.body.data.find((x: any) => x.payment_id === payment.id);
      if (!inv) await new Promise((r) => setTimeout(r, 100));
    }
    expect(inv).toMatchObject({
      object: 'invoice',
      type: 'invoice',
      place_of_supply: '29',
      customer_gstin: '29AAACB1234C1ZB',
    });

    const res = await fetch(`${h.app.url}/v1/invoices/${inv.id}/pdf`, {
      headers: { authorization: `Bearer ${m.keys.test}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe(`inline; filename="${pdfFilename(inv.number)}"`);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 5).toString()).toBe('%PDF-');

    // REST runs the GraphQL operation: the field answers the very same file.
    const gql = await m.test.gql('query($id: ID!) { invoice(id: $id) { pdf { filename contentType base64 } } }', {
      id: inv.id,
    });
    expect(gql.errors).toBeUndefined();
    expect(gql.data.invoice.pdf).toMatchObject({ filename: pdfFilename(inv.number), contentType: 'application/pdf' });
    expect(Buffer.from(gql.data.invoice.pdf.base64, 'base64').equals(bytes)).toBe(true);

    const text = await pdfText(bytes);
    expect(text).toContain('Tax Invoice');
    expect(text).toMatch(row('Invoice no.', inv.number));
    expect(text).toMatch(row('Invoice date', istDate(new Date(inv.issued_at))));
    expect(text).toMatch(row('GSTIN', '27AAPFU0939F1ZV'));
    expect(text).toMatch(row('GSTIN', '29AAACB1234C1ZB'));
    expect(text).toContain('4th Floor, Tower B, Baner Road, Pune 411045');
    expect(text).toContain('Bharat Traders');
    expect(text).toMatch(row('Place of supply', 'Karnataka (29)'));
    expect(text).toMatch(row('Reverse charge', 'No'));
    expect(text).toContain('998314');
    expect(text).toMatch(row('Taxable value', formatMoney(inv.subtotal, 'INR')));
    expect(text).toMatch(row(`IGST @ ${ratePercent(inv.tax_rate_bps)}%`, formatMoney(inv.igst_amount, 'INR')));
    expect(text).toMatch(row('Total', formatMoney(inv.total, 'INR')));
  });

  it('answers a JSON 404 for an unknown invoice, as every route does', async () => {
    const r = await m.test.get(`/invoices/${crypto.randomUUID()}/pdf`);
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.error).toMatchObject({ code: 'resource_not_found' });
  });
});

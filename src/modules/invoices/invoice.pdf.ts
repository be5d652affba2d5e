import fs from 'node:fs';
import path from 'node:path';
import type PDFKitDocument from 'pdfkit';
import QRCode from 'qrcode';
import { gstStateLabel } from '../../core/gst-states';
import type { Invoice, InvoiceLineItem, InvoiceRecipient, InvoiceSupplier } from './invoice.entities';
import { formatAmount, formatMoney, rupeesInWords } from '../../money';

/**
 * GST tax invoices and credit notes as A4 PDFs (CGST rules 46 and 53): supplier and recipient names, addresses, GSTINs
 * and states, number and date, place of supply, reverse-charge flag, SAC per line, taxable value, each tax head with its
 * rate, and the total in figures (and in words for INR). DejaVu Sans is shipped in assets/fonts and embedded, so the
 * rupee sign renders whatever fonts the machine has.
 *
 * This file is the renderer alone: it runs on the document worker threads (invoice.pdf.worker.ts), so it imports no
 * entity, ORM or GraphQL code at run time. Its input is plain data (structured-cloned to the worker), and it is the
 * issued record alone (docs/invoices-and-gst.md "Issued documents are final"): the parties and SAC codes as the
 * document stores them, never the merchant's or customer's current settings, so a document prints the same whenever it
 * is rendered.
 */

export interface InvoicePdfInput {
  invoice: Pick<
    Invoice,
    | 'type'
    | 'number'
    | 'status'
    | 'currency'
    | 'subtotal'
    | 'cgstAmount'
    | 'sgstAmount'
    | 'igstAmount'
    | 'taxAmount'
    | 'total'
    | 'creditApplied'
    | 'amountCredited'
    | 'amountPaid'
    | 'amountDue'
    | 'taxRateBps'
    | 'placeOfSupply'
    | 'supplierGstin'
    | 'customerGstin'
    | 'lineItems'
    | 'periodStart'
    | 'periodEnd'
    | 'issuedAt'
  >;
  /** The document's supplier as issued (`invoice.supplier`). */
  supplier: InvoiceSupplier;
  /** The document's recipient as issued (`invoice.recipient`). */
  recipient: InvoiceRecipient;
  /** A credit note's original invoice (rule 53 asks for its number and date), itself a final record. */
  relatedInvoice?: { number: string; issuedAt?: Date | null } | null;
  /** An e-invoice's registration (docs/india.md): printed with its signed QR code as a QR image. */
  eInvoice?: { irn: string; ackNo: string; ackDate: Date; signedQr: string; cancelledAt: Date | null } | null;
}

const REGULAR = 'DejaVuSans.ttf';
const BOLD = 'DejaVuSans-Bold.ttf';

let fontFiles: { regular: string; bold: Buffer } | null = null;

/** assets/fonts at the repository root: found from the sources (tests) and from dist/ alike, read once. */
function fonts(): { regular: string; bold: Buffer } {
  if (fontFiles) return fontFiles;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'assets', 'fonts');
    if (fs.existsSync(path.join(candidate, REGULAR))) {
      fontFiles = { regular: path.join(candidate, REGULAR), bold: fs.readFileSync(path.join(candidate, BOLD)) };
      return fontFiles;
    }
    if (path.dirname(dir) === dir) throw new Error(`invoice PDF: assets/fonts/${REGULAR} not found above ${__dirname}`);
  }
}

const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;

/** DD-MM-YYYY of the instant in India Standard Time (UTC+05:30 all year, no daylight saving). */
export function istDate(at: Date): string {
  const d = new Date(at.getTime() + IST_OFFSET_MS);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getUTCDate())}-${pad(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`;
}

/** 1800 -> "18", 900 -> "9", 1250 -> "12.5" (display only; amounts never go through floats). */
export function ratePercent(bps: number): string {
  return String(Number((bps / 100).toFixed(3)));
}

/** Safe for a Content-Disposition filename and a file system: INV/2026/7 -> INV-2026-7.pdf. */
export function pdfFilename(number: string): string {
  return `${number.replace(/[^A-Za-z0-9._-]+/g, '-') || 'invoice'}.pdf`;
}

interface TaxLine {
  label: string;
  amount: number;
}

/** The heads to print: what was charged, or (nothing charged) the heads the place of supply calls for. */
function taxLines(input: InvoicePdfInput, supplierState: string | null): { lines: TaxLine[]; note: string | null } {
  const { invoice } = input;
  const rate = invoice.taxRateBps;
  const intra = () => [
    { label: `CGST @ ${ratePercent(rate / 2)}%`, amount: invoice.cgstAmount },
    { label: `SGST @ ${ratePercent(rate / 2)}%`, amount: invoice.sgstAmount },
  ];
  const inter = () => [{ label: `IGST @ ${ratePercent(rate)}%`, amount: invoice.igstAmount }];
  if (invoice.igstAmount) return { lines: inter(), note: null };
  if (invoice.cgstAmount || invoice.sgstAmount) return { lines: intra(), note: null };
  if (rate > 0) {
    // Taxable but nothing charged (a zero amount): the heads still follow the place of supply.
    const sameState = !invoice.placeOfSupply || invoice.placeOfSupply === supplierState;
    return { lines: sameState ? intra() : inter(), note: null };
  }
  if (invoice.currency.toUpperCase() !== 'INR') {
    return { lines: [], note: 'Zero-rated supply: export of services without payment of IGST.' };
  }
  return {
    lines: [],
    note: input.supplier.gstin ? 'No GST charged.' : 'Supplier not registered for GST: no GST charged.',
  };
}

const A4_WIDTH = 595.28;
const A4_HEIGHT = 841.89;
const MARGIN = 40;
const CONTENT = A4_WIDTH - 2 * MARGIN;
const GREY = '#555555';
const RULE = '#bbbbbb';

/** Table columns: [title, width, align]; widths add up to the content width. */
const COLUMNS: [string, number, 'left' | 'right'][] = [
  ['#', 20, 'left'],
  ['Description', 205, 'left'],
  ['SAC', 55, 'left'],
  ['Qty', 35, 'right'],
  ['Unit price', 90, 'right'],
  ['Taxable value', 110, 'right'],
];

let pdfkit: typeof PDFKitDocument | undefined;
/**
 * pdfkit is loaded by the first PDF, not at startup: with its font code it is ~5 MB of heap (~23 MB of RSS) that
 * every major GC of an API process would otherwise mark, for a file most processes never render.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
const PDFDocumentClass = (): typeof PDFKitDocument => (pdfkit ??= require('pdfkit') as typeof PDFKitDocument);

/** Renders the invoice or credit note; answers the PDF file's bytes. */
export async function renderInvoicePdf(input: InvoicePdfInput): Promise<Buffer> {
  const { invoice, supplier, recipient, relatedInvoice, eInvoice } = input;
  // The signed QR is a long JWS: medium error correction keeps the code small enough to scan from paper.
  const qr = eInvoice
    ? await QRCode.toBuffer(eInvoice.signedQr, { type: 'png', errorCorrectionLevel: 'M', margin: 1, scale: 4 })
    : null;
  const isCredit = String(invoice.type) === 'credit_note';
  const currency = invoice.currency.toUpperCase();
  const supplierGstin = supplier.gstin ?? null;
  const supplierState = supplier.stateCode ?? null;
  const title = isCredit ? 'Credit Note' : supplierGstin ? 'Tax Invoice' : 'Invoice';
  const { regular, bold } = fonts();

  const PDFDocument = PDFDocumentClass();
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    font: regular,
    // Fixed metadata: the same invoice renders to the same bytes.
    info: {
      Title: `${title} ${invoice.number}`,
      Author: supplier.name,
      Subject: title,
      CreationDate: invoice.issuedAt,
      Creator: 'Cadence',
    },
  });
  doc.registerFont('regular', regular);
  doc.registerFont('bold', bold);
  const chunks: Uint8Array[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (chunk: Uint8Array) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const text = (
    s: string,
    x: number,
    y: number,
    opts: { width?: number; align?: 'left' | 'right' | 'center'; size?: number; bold?: boolean; color?: string } = {},
  ) => {
    doc
      .font(opts.bold ? 'bold' : 'regular')
      .fontSize(opts.size ?? 9)
      .fillColor(opts.color ?? 'black');
    doc.text(s, x, y, { width: opts.width, align: opts.align ?? 'left', lineGap: 1 });
    return doc.y; // below what was written
  };
  const rule = (y: number) =>
    doc
      .moveTo(MARGIN, y)
      .lineTo(A4_WIDTH - MARGIN, y)
      .lineWidth(0.5)
      .strokeColor(RULE)
      .stroke();
  /** Label: value rows; answers the y below the last. */
  const fields = (rows: [string, string][], x: number, y: number, width: number, labelWidth = 105) => {
    for (const [label, value] of rows) {
      text(label, x, y, { width: labelWidth, color: GREY });
      y = Math.max(doc.y, text(value, x + labelWidth, y, { width: width - labelWidth }));
      y += 2;
    }
    return y;
  };

  // Title
  text(title, MARGIN, MARGIN, { size: 18, bold: true });
  text('Original for recipient', MARGIN, MARGIN + 6, { width: CONTENT, align: 'right', size: 8, color: GREY });
  let y = MARGIN + 30;
  rule(y);
  y += 10;

  // E-invoice: the portal's registration, with its signed QR code, above everything else on the page.
  if (eInvoice && qr) {
    const size = 110;
    doc.image(qr, A4_WIDTH - MARGIN - size, y, { width: size, height: size });
    let at = text('E-invoice', MARGIN, y, { size: 8, bold: true, color: GREY }) + 2;
    const rows: [string, string][] = [
      ['IRN', eInvoice.irn],
      ['Ack. no.', eInvoice.ackNo],
      ['Ack. date', istDateTime(eInvoice.ackDate)],
    ];
    if (eInvoice.cancelledAt) rows.push(['IRN cancelled', istDateTime(eInvoice.cancelledAt)]);
    // 8 points: the 64 hex digits of the IRN fit one line beside the code.
    for (const [label, value] of rows) {
      text(label, MARGIN, at, { size: 8, color: GREY });
      at = Math.max(doc.y, text(value, MARGIN + 60, at, { size: 8, width: CONTENT - size - 80 })) + 2;
    }
    y = Math.max(at, y + size) + 6;
    rule(y);
    y += 10;
  }

  // Supplier (left) and the document's particulars (right)
  const colWidth = CONTENT / 2 - 10;
  const right = MARGIN + CONTENT / 2 + 10;
  let left = text('Supplier', MARGIN, y, { size: 8, bold: true, color: GREY });
  left = text(supplier.name, MARGIN, left + 2, { bold: true, size: 11, width: colWidth });
  if (supplier.address) left = text(supplier.address, MARGIN, left + 1, { width: colWidth });
  left = fields(
    [
      ['GSTIN', supplierGstin ?? 'Not registered'],
      ['State', gstStateLabel(supplierState) ?? '—'],
    ],
    MARGIN,
    left + 3,
    colWidth,
    45,
  );

  const particulars: [string, string][] = [
    [isCredit ? 'Credit note no.' : 'Invoice no.', invoice.number],
    [isCredit ? 'Credit note date' : 'Invoice date', istDate(invoice.issuedAt)],
  ];
  if (isCredit && relatedInvoice) {
    particulars.push(['Against invoice', relatedInvoice.number]);
    if (relatedInvoice.issuedAt) particulars.push(['Invoice dated', istDate(relatedInvoice.issuedAt)]);
  }
  particulars.push([
    'Place of supply',
    gstStateLabel(invoice.placeOfSupply) ?? (currency !== 'INR' ? 'Outside India (export)' : '—'),
  ]);
  particulars.push(['Reverse charge', 'No']);
  if (invoice.periodStart && invoice.periodEnd)
    particulars.push(['Service period', `${istDate(invoice.periodStart)} to ${istDate(invoice.periodEnd)}`]);
  particulars.push(['Currency', currency]);
  const rightEnd = fields(particulars, right, y, colWidth);
  y = Math.max(left, rightEnd) + 8;

  // Recipient
  text('Recipient (bill to)', MARGIN, y, { size: 8, bold: true, color: GREY });
  y = text(recipient.name || recipient.email || '—', MARGIN, doc.y + 2, { bold: true, size: 11, width: CONTENT });
  if (recipient.address) y = text(recipient.address, MARGIN, y + 1, { width: CONTENT });
  const recipientRows: [string, string][] = [];
  if (recipient.name && recipient.email) recipientRows.push(['E-mail', recipient.email]);
  recipientRows.push(['GSTIN', recipient.gstin ?? 'Unregistered']);
  recipientRows.push(['State', gstStateLabel(recipient.stateCode) ?? '—']);
  y = fields(recipientRows, MARGIN, y + 3, CONTENT, 45) + 8;

  // Lines
  const money = (n: number) => formatAmount(n, currency);
  const unit = formatMoney(0, currency)
    .replace(/[\d.,-]/g, '')
    .trim();
  const header = () => {
    doc.rect(MARGIN, y, CONTENT, 18).fillColor('#eeeeee').fill();
    let x = MARGIN;
    for (const [name, width, align] of COLUMNS) {
      const label = name === 'Unit price' || name === 'Taxable value' ? `${name} (${unit})` : name;
      text(label, x + 3, y + 5, { width: width - 6, align, size: 8, bold: true });
      x += width;
    }
    y += 22;
  };
  header();
  const bottom = A4_HEIGHT - MARGIN - 30;
  invoice.lineItems.forEach((line: InvoiceLineItem, i) => {
    const description = [
      line.description,
      line.periodStart && line.periodEnd
        ? `${istDate(new Date(line.periodStart))} to ${istDate(new Date(line.periodEnd))}`
        : null,
      line.proration ? 'Proration' : null,
    ]
      .filter(Boolean)
      .join('\n');
    const cells = [
      String(i + 1),
      description,
      line.hsnSac ?? '—',
      String(line.quantity),
      money(line.unitAmount),
      money(line.amount),
    ];
    doc.font('regular').fontSize(9);
    const height = Math.max(...cells.map((c, k) => doc.heightOfString(c, { width: COLUMNS[k][1] - 6, lineGap: 1 })));
    if (y + height > bottom) {
      doc.addPage();
      y = MARGIN;
      header();
    }
    let x = MARGIN;
    cells.forEach((c, k) => {
      text(c, x + 3, y, { width: COLUMNS[k][1] - 6, align: COLUMNS[k][2] });
      x += COLUMNS[k][1];
    });
    y += height + 4;
    rule(y - 2);
  });

  // Totals (right) and the amount in words (left)
  const { lines: heads, note } = taxLines(input, supplierState);
  const totals: [string, string, boolean][] = [['Taxable value', formatMoney(invoice.subtotal, currency), false]];
  for (const h of heads) totals.push([h.label, formatMoney(h.amount, currency), false]);
  if (heads.length > 1) totals.push(['Total tax', formatMoney(invoice.taxAmount, currency), false]);
  totals.push([isCredit ? 'Total credit' : 'Total', formatMoney(invoice.total, currency), true]);
  if (!isCredit && (invoice.creditApplied || invoice.amountPaid)) {
    if (invoice.creditApplied)
      totals.push(['Less credit applied', formatMoney(-invoice.creditApplied, currency), false]);
    if (invoice.amountPaid) totals.push(['Amount paid', formatMoney(invoice.amountPaid, currency), false]);
    totals.push(['Amount due', formatMoney(invoice.amountDue, currency), true]);
  }
  // Credit notes issued against this invoice since (refunds, plan-change credit): the invoice itself stays as issued.
  if (!isCredit && invoice.amountCredited)
    totals.push(['Credited by credit notes', formatMoney(-invoice.amountCredited, currency), false]);
  const needed = totals.length * 16 + 90;
  if (y + needed > bottom) {
    doc.addPage();
    y = MARGIN;
  }
  y += 6;
  const totalsTop = y;
  for (const [label, value, strong] of totals) {
    text(label, right, y, { width: 140, bold: strong, size: strong ? 10 : 9 });
    text(value, right + 140, y, { width: colWidth - 140, align: 'right', bold: strong, size: strong ? 10 : 9 });
    y += strong ? 16 : 14;
  }
  const noteEnd = note ? text(note, MARGIN, totalsTop, { width: colWidth, color: GREY }) : totalsTop;
  y = Math.max(y, noteEnd) + 6;
  if (currency === 'INR') {
    // Full width below the totals, so a long amount stays on one line.
    text('Total in words', MARGIN, y, { size: 8, bold: true, color: GREY });
    y = text(rupeesInWords(invoice.total), MARGIN + 70, y - 1, { width: CONTENT - 70 }) + 4;
  }
  y += 20;

  // Signature block and notes
  text(`For ${supplier.name}`, right, y, { width: colWidth, align: 'right', bold: true });
  text('Authorised signatory', right, y + 28, { width: colWidth, align: 'right', size: 8, color: GREY });
  text('Tax is not payable on reverse charge. This is a computer-generated document.', MARGIN, y + 28, {
    width: colWidth,
    size: 8,
    color: GREY,
  });

  doc.end();
  return done;
}

/** DD-MM-YYYY HH:mm of the instant in IST. */
function istDateTime(at: Date): string {
  const d = new Date(at.getTime() + IST_OFFSET_MS);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${istDate(at)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} IST`;
}

import fc from 'fast-check';
import { Mode } from '../../src/core/entity';
import { InvoiceType } from '../../src/modules/invoices/invoice.entities';
import { financialYear, formatInvoiceNumber } from '../../src/modules/invoices/invoice.numbering';
import { allocate, invoiceTax } from '../../src/money';
import { gst } from '../../src/money';

/** The pure parts: per-line allocation of the GST heads, the financial year in IST, number formats. */

const parties = (over: Partial<Parameters<typeof invoiceTax>[1]> = {}) => ({
  currency: 'INR',
  rateBps: 1800,
  merchantGstin: '29ABCDE1234F1ZW',
  merchantState: '29',
  customerState: '29',
  ...over,
});

describe('allocate (largest remainder)', () => {
  it('gives the leftover subunits to the largest remainders, the earlier line on a tie', () => {
    expect(allocate(90, [333, 333, 334])).toEqual([30, 30, 30]); // exact 29.97, 29.97, 30.06
    expect(allocate(10, [1, 1, 1])).toEqual([4, 3, 3]);
    expect(allocate(0, [5, 7])).toEqual([0, 0]);
    expect(allocate(7, [0, 10])).toEqual([0, 7]);
  });

  it('copes with a negative (credit) line as long as the lines sum to a positive amount', () => {
    const shares = allocate(180, [2000, -1000]);
    expect(shares).toEqual([360, -180]);
    expect(() => allocate(5, [-1, 1])).toThrow(/positive/);
  });

  it('property: shares sum to the total and each is within one subunit of its exact share', () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.integer({ min: 0, max: 50_000_000 }), { minLength: 1, maxLength: 12 })
          .filter((a) => a.some((x) => x > 0)),
        fc.integer({ min: 0, max: 20_000_000 }),
        (weights, total) => {
          const shares = allocate(total, weights);
          expect(shares.reduce((s, x) => s + x, 0)).toBe(total);
          const sum = weights.reduce((s, w) => s + w, 0);
          shares.forEach((share, i) => expect(Math.abs(share - (total * weights[i]) / sum)).toBeLessThan(1 + 1e-6));
        },
      ),
      { seed: 20261124, numRuns: 1000 },
    );
  });
});

describe('invoiceTax', () => {
  it("property: invoice heads are billing.ts gst() of the subtotal, and the lines' heads sum to them exactly", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10_000_000 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.constantFrom('29', '27', null),
        (amounts, rateBps, customerState) => {
          const p = parties({ rateBps, customerState });
          const t = invoiceTax(amounts, p);
          const subtotal = amounts.reduce((s, a) => s + a, 0);
          expect(t.heads).toEqual(gst({ subtotal, ...p }));
          for (const head of ['cgst', 'sgst', 'igst'] as const) {
            expect(t.lines.reduce((s, l) => s + l[head], 0)).toBe(t.heads[head]);
          }
          t.lines.forEach((l) => expect(l.cgst).toBe(l.sgst));
        },
      ),
      { seed: 7, numRuns: 1000 },
    );
  });

  it('no tax for a non-INR invoice or a merchant without a GSTIN', () => {
    expect(invoiceTax([1000], parties({ currency: 'USD' }))).toMatchObject({
      taxable: false,
      heads: { tax: 0, total: 1000 },
    });
    expect(invoiceTax([1000], parties({ merchantGstin: null }))).toMatchObject({
      taxable: false,
      heads: { tax: 0, total: 1000 },
    });
  });
});

describe('financial year (April to March, IST)', () => {
  it('turns at April 1 00:00 IST (March 31 18:30 UTC)', () => {
    expect(financialYear(new Date('2027-03-31T18:29:59.999Z'))).toBe(2026); // March 31 23:59:59.999 IST
    expect(financialYear(new Date('2027-03-31T18:30:00.000Z'))).toBe(2027); // April 1 00:00 IST
    expect(financialYear(new Date('2027-01-01T00:00:00Z'))).toBe(2026);
    expect(financialYear(new Date('2026-12-31T18:30:00Z'))).toBe(2026); // Jan 1 2027 IST: still FY 2026-27
    expect(financialYear(new Date('2026-04-01T00:00:00Z'))).toBe(2026);
  });
});

describe('invoice numbers', () => {
  it('formats per type and mode within 16 characters', () => {
    expect(formatInvoiceNumber(InvoiceType.INVOICE, Mode.LIVE, 2026, 1)).toBe('INV-2627-000001');
    expect(formatInvoiceNumber(InvoiceType.INVOICE, Mode.TEST, 2026, 1)).toBe('TINV-2627-000001');
    expect(formatInvoiceNumber(InvoiceType.CREDIT_NOTE, Mode.LIVE, 2026, 42)).toBe('CN-2627-000042');
    expect(formatInvoiceNumber(InvoiceType.CREDIT_NOTE, Mode.TEST, 2099, 7)).toBe('TCN-9900-000007');
    expect(formatInvoiceNumber(InvoiceType.INVOICE, Mode.TEST, 2026, 1_000_000)).toBe('TINV2627-1000000');
    expect(formatInvoiceNumber(InvoiceType.INVOICE, Mode.LIVE, 2026, 9_999_999)).toBe('INV-2627-9999999');
  });

  it('property: distinct sequence numbers give distinct numbers of at most 16 characters', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 99_999_999 }),
        fc.integer({ min: 1, max: 99_999_999 }),
        fc.constantFrom(Mode.TEST, Mode.LIVE),
        (a, b, mode) => {
          const x = formatInvoiceNumber(InvoiceType.INVOICE, mode, 2026, a);
          const y = formatInvoiceNumber(InvoiceType.INVOICE, mode, 2026, b);
          expect(x.length).toBeLessThanOrEqual(16);
          expect(x === y).toBe(a === b);
        },
      ),
      { seed: 3, numRuns: 2000 },
    );
  });
});

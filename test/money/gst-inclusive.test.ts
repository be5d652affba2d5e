import fc from 'fast-check';
import { gstFor, gstIncluded, gstOn, invoiceTaxIncludedFor, TaxTreatment } from '../../src/money';

/** GST contained in a tax-inclusive amount (docs/invoices-and-gst.md, "Tax-inclusive prices"): pure arithmetic. */

const RATES = [0, 500, 1200, 1800, 2800];
const rate = fc.constantFrom(...RATES);
const treatment = fc.constantFrom<TaxTreatment>('intra', 'inter');

describe('gstIncluded', () => {
  it('splits ₹499.00 at 18% exactly: intra-state CGST = SGST, inter-state IGST', () => {
    // 49900 x 1800 / 11800 = 7611.86...; each half 3805.93... rounds to 3806, so the tax is 7612.
    expect(gstIncluded(49900, 'intra', 1800)).toEqual({ cgst: 3806, sgst: 3806, igst: 0, tax: 7612, total: 49900 });
    expect(gstIncluded(49900, 'inter', 1800)).toEqual({ cgst: 0, sgst: 0, igst: 7612, tax: 7612, total: 49900 });
    expect(gstIncluded(49900, 'none', 1800)).toEqual({ cgst: 0, sgst: 0, igst: 0, tax: 0, total: 49900 });
  });

  it('leaves an odd subunit of tax in the taxable value, intra-state', () => {
    // 118 at 18%: IGST 18 (118 - 100); halves 9 each. 119: IGST = 119 - round(100.847) = 18; halves 9.07 -> 9 each.
    expect(gstIncluded(118, 'intra', 1800).tax).toBe(18);
    const odd = gstIncluded(13, 'intra', 1800); // IGST would be 13 - round(11.017) = 2; each half 0.99 -> 1
    expect(odd.cgst).toBe(odd.sgst);
    expect(odd.cgst + odd.sgst).toBe(odd.tax);
  });

  it('rejects what is not a non-negative integer', () => {
    expect(() => gstIncluded(-1, 'intra', 1800)).toThrow(/total/);
    expect(() => gstIncluded(1.5, 'inter', 1800)).toThrow(/total/);
    expect(() => gstIncluded(100, 'inter', 18.5)).toThrow(/rateBps/);
  });

  it('gstFor: exclusive is gstOn unchanged, inclusive is gstIncluded', () => {
    expect(gstFor(49900, 'exclusive', 'intra', 1800)).toEqual(gstOn(49900, 'intra', 1800));
    expect(gstFor(49900, 'inclusive', 'inter', 1800)).toEqual(gstIncluded(49900, 'inter', 1800));
  });

  it('property: the total is the inclusive amount, subtotal + heads = total, heads >= 0, CGST = SGST intra-state', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 9_000_000_000_000 }), rate, treatment, (amount, bps, t) => {
        const g = gstIncluded(amount, t, bps);
        const subtotal = g.total - g.tax;
        expect(g.total).toBe(amount);
        expect(subtotal + g.cgst + g.sgst + g.igst).toBe(amount);
        expect(g.tax).toBe(g.cgst + g.sgst + g.igst);
        expect(Math.min(g.cgst, g.sgst, g.igst, subtotal)).toBeGreaterThanOrEqual(0);
        if (t === 'intra') {
          expect(g.cgst).toBe(g.sgst);
          expect(g.igst).toBe(0);
        } else {
          expect(g.cgst + g.sgst).toBe(0);
          expect(g.igst).toBe(
            amount - Number((BigInt(amount) * 10000n * 2n + BigInt(10000 + bps)) / (2n * BigInt(10000 + bps))),
          );
        }
        if (bps === 0) expect(g.tax).toBe(0);
        // The tax is within a subunit of the exact tax in the amount (inter: within half of one), in exact integers.
        const off = BigInt(g.tax) * BigInt(10_000 + bps) - BigInt(amount) * BigInt(bps);
        const abs = off < 0n ? -off : off;
        expect(2n * abs <= BigInt(t === 'intra' ? 2 : 1) * BigInt(10_000 + bps)).toBe(true);
      }),
    );
  });

  it('property: lines of an inclusive invoice carry heads that sum to the invoice heads and taxable values to the subtotal', () => {
    fc.assert(
      fc.property(
        fc
          .array(fc.integer({ min: 0, max: 50_000_000 }), { minLength: 1, maxLength: 8 })
          .filter((a) => a.some((x) => x > 0)),
        rate,
        treatment,
        (lines, bps, t) => {
          const tax = invoiceTaxIncludedFor(lines, t, bps);
          const total = lines.reduce((s, a) => s + a, 0);
          expect(tax.heads).toEqual(gstIncluded(total, t, bps));
          const sum = (f: (i: number) => number) => lines.reduce((s, _, i) => s + f(i), 0);
          expect(sum((i) => tax.lines[i].cgst)).toBe(tax.heads.cgst);
          expect(sum((i) => tax.lines[i].sgst)).toBe(tax.heads.sgst);
          expect(sum((i) => tax.lines[i].igst)).toBe(tax.heads.igst);
          expect(sum((i) => tax.taxableAmounts[i])).toBe(total - tax.heads.tax);
          tax.lines.forEach((l) => expect(l.cgst).toBe(l.sgst));
        },
      ),
    );
  });
});

import fc from 'fast-check';
import {
  gstFor,
  gstIncluded,
  gstOn,
  invoiceTaxFor,
  invoiceTaxIncludedFor,
  prorate,
  prorationDocument,
  TaxBehavior,
  TaxTreatment,
} from '../../src/money';

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

describe('prorationDocument: a plan change to or from a tax-inclusive price', () => {
  const behavior = fc.constantFrom<TaxBehavior>('exclusive', 'inclusive');
  const anyTreatment = fc.constantFrom<TaxTreatment>('intra', 'inter', 'none');

  it('₹499.00 inclusive -> ₹999.00 inclusive half-way: an invoice of exactly ₹250.00, GST contained', () => {
    const p = prorate({
      oldAmount: 49900,
      newAmount: 99900,
      periodStart: new Date('2026-11-01T00:00:00Z'),
      periodEnd: new Date('2026-12-01T00:00:00Z'),
      at: new Date('2026-11-16T00:00:00Z'),
      sameCadence: true,
    });
    expect(p).toMatchObject({ credit: 24950, debit: 49950 });
    const args = { credit: p.credit, creditBehavior: 'inclusive', debit: p.debit, debitBehavior: 'inclusive' } as const;
    // 25000 x 1800 / 23600 = 1906.78 -> 1907 each half; inter 25000 - round(21186.44) = 3814.
    expect(prorationDocument({ ...args, treatment: 'intra', rateBps: 1800 })).toMatchObject({
      behavior: 'inclusive',
      lineAmount: 25000,
      heads: { cgst: 1907, sgst: 1907, igst: 0, tax: 3814, total: 25000 },
      subtotal: 21186,
      tax: 3814,
      total: 25000,
    });
    expect(prorationDocument({ ...args, treatment: 'inter', rateBps: 1800 }).heads).toMatchObject({ igst: 3814 });
    // Exclusive -> inclusive: the exclusive side adds its GST (24950 + 4491 = 29441), the net is a credit.
    expect(
      prorationDocument({ ...args, creditBehavior: 'exclusive', debit: 24950, treatment: 'inter', rateBps: 1800 }),
    ).toMatchObject({ credit: { amount: 24950, gross: 29441 }, debit: { amount: 24950, gross: 24950 }, total: -4491 });
  });

  it('property: total = subtotal + tax, heads sum to the tax, an inclusive side counts exactly its prorated amount', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5_000_000_000 }),
        fc.integer({ min: 0, max: 5_000_000_000 }),
        behavior,
        behavior,
        fc.integer({ min: 1, max: 31_622_400 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        rate,
        anyTreatment,
        (oldAmount, newAmount, oldB, newB, T, left, sameCadence, bps, t) => {
          const start = new Date('2026-01-01T00:00:00Z');
          const end = new Date(start.getTime() + T * 1000);
          const at = new Date(end.getTime() - Math.floor(left * T) * 1000);
          const p = prorate({ oldAmount, newAmount, periodStart: start, periodEnd: end, at, sameCadence });
          const d = prorationDocument({
            credit: p.credit,
            creditBehavior: oldB,
            debit: p.debit,
            debitBehavior: newB,
            treatment: t,
            rateBps: bps,
          });
          for (const x of [d.total, d.tax, d.subtotal, d.lineAmount, ...Object.values(d.heads)])
            expect(Number.isSafeInteger(x)).toBe(true);
          expect(d.subtotal + d.tax).toBe(d.total);
          expect(d.heads.cgst + d.heads.sgst + d.heads.igst).toBe(d.heads.tax);
          expect(
            Math.min(d.heads.cgst, d.heads.sgst, d.heads.igst, d.heads.total - d.heads.tax),
          ).toBeGreaterThanOrEqual(0);
          expect(Math.abs(d.total)).toBe(d.heads.total);
          expect(Math.abs(d.tax)).toBe(d.heads.tax);
          // The sides as their prices state them: an inclusive side is exactly its prorated amount.
          expect(d.credit.amount).toBe(p.credit);
          expect(d.debit.amount).toBe(p.debit);
          if (oldB === 'inclusive') expect(d.credit.gross).toBe(p.credit);
          if (newB === 'inclusive') expect(d.debit.gross).toBe(p.debit);
          if (oldB === 'exclusive') expect(d.credit.gross).toBe(gstOn(p.credit, t, bps).total);
          if (newB === 'exclusive') expect(d.debit.gross).toBe(gstOn(p.debit, t, bps).total);
          if (oldB === 'exclusive' && newB === 'exclusive') {
            // Unchanged: GST on top of the net, rounded once.
            expect(d.subtotal).toBe(p.net);
            expect(d.heads).toEqual(gstOn(Math.abs(p.net), t, bps));
          } else {
            // The net of the sides with their GST, exactly; its GST contained.
            expect(d.total).toBe(d.debit.gross - d.credit.gross);
            expect(d.heads).toEqual(gstIncluded(Math.abs(d.total), t, bps));
            if (oldB === 'inclusive' && newB === 'inclusive') expect(d.total).toBe(p.debit - p.credit);
          }
          // The document an invoice issues from its one line has these figures.
          const issued =
            d.behavior === 'inclusive'
              ? invoiceTaxIncludedFor([d.lineAmount], t, bps)
              : invoiceTaxFor([d.lineAmount], t, bps);
          expect(issued.heads).toEqual(d.heads);
          expect(issued.lines[0]).toEqual({ cgst: d.heads.cgst, sgst: d.heads.sgst, igst: d.heads.igst });
          if (t === 'intra') expect(d.heads.cgst).toBe(d.heads.sgst);
          if (t !== 'intra') expect(d.heads.cgst + d.heads.sgst).toBe(0);
          if (t === 'none' || bps === 0) expect(d.tax).toBe(0);
          // The sign of every figure agrees: a credit note has no positive part, an invoice no negative one.
          if (d.total > 0) expect(d.subtotal).toBeGreaterThan(0);
          if (d.total < 0) expect(d.subtotal).toBeLessThan(0);
          if (d.total === 0) expect(d.tax).toBe(0);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

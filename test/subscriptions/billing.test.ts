import fc from 'fast-check';
import { period, periodStart } from '../../src/core/billing-period';
import { divRound, gatewayAmounts, gst, gstOn, prorate, taxTreatment } from '../../src/money';
import { addonsCharged } from '../../src/modules/subscriptions/subscription.gateway-events';

const d = (iso: string) => new Date(iso);

describe('billing periods (calendar arithmetic in UTC keeping the anchor day)', () => {
  it('Jan 31 monthly -> Feb 29 (leap) -> Mar 31 -> Apr 30, counted from the anchor', () => {
    const anchor = d('2024-01-31T10:30:00Z');
    expect([0, 1, 2, 3].map((n) => periodStart(anchor, 'monthly', 1, n).toISOString())).toEqual([
      '2024-01-31T10:30:00.000Z',
      '2024-02-29T10:30:00.000Z',
      '2024-03-31T10:30:00.000Z',
      '2024-04-30T10:30:00.000Z',
    ]);
    expect(periodStart(d('2025-01-31T00:00:00Z'), 'monthly', 1, 1).toISOString()).toBe('2025-02-28T00:00:00.000Z');
  });

  it('intervals, weeks, days and years; leap day yearly -> Feb 28', () => {
    expect(period(d('2024-01-15T00:00:00Z'), 'monthly', 3, 1)).toEqual({
      start: d('2024-04-15T00:00:00Z'),
      end: d('2024-07-15T00:00:00Z'),
    });
    expect(periodStart(d('2024-12-30T00:00:00Z'), 'weekly', 2, 1).toISOString()).toBe('2025-01-13T00:00:00.000Z');
    expect(periodStart(d('2024-02-28T23:00:00Z'), 'daily', 1, 2).toISOString()).toBe('2024-03-01T23:00:00.000Z');
    expect(periodStart(d('2024-02-29T00:00:00Z'), 'yearly', 1, 1).toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(periodStart(d('2024-02-29T00:00:00Z'), 'yearly', 1, 4).toISOString()).toBe('2028-02-29T00:00:00.000Z');
  });

  it('periods tile time: each ends where the next starts, and never before it starts', () => {
    fc.assert(
      fc.property(
        fc.date({ min: d('2000-01-01T00:00:00Z'), max: d('2090-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('daily', 'weekly', 'monthly', 'yearly' as const),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 60 }),
        (anchor, frequency, interval, cycle) => {
          const p = period(anchor, frequency, interval, cycle);
          expect(p.end.getTime()).toBeGreaterThan(p.start.getTime());
          expect(period(anchor, frequency, interval, cycle + 1).start).toEqual(p.end);
        },
      ),
      { seed: 20261123, numRuns: 500 },
    );
  });

  it('refuses an interval below 1 as an API error', () => {
    expect(() => periodStart(d('2024-01-01T00:00:00Z'), 'monthly', 0, 1)).toThrow(
      expect.objectContaining({ code: 'parameter_invalid' }),
    );
  });
});

describe('rounding: half away from zero to the subunit', () => {
  it.each([
    [5n, 2n, 3n],
    [-5n, 2n, -3n],
    [4n, 3n, 1n],
    [5n, 3n, 2n],
    [-5n, 3n, -2n],
    [1n, 2n, 1n],
    [0n, 7n, 0n],
  ])('%s / %s = %s', (n, den, q) => expect(divRound(n, den)).toBe(q));
});

describe('proration', () => {
  const start = d('2026-01-01T00:00:00Z');
  const end = d('2026-01-31T00:00:00Z'); // T = 30 days

  it('same cadence: credit and debit over the seconds left, the period kept', () => {
    const at = d('2026-01-21T00:00:00Z'); // r = 10 days = T / 3
    expect(
      prorate({ oldAmount: 49900, newAmount: 99900, periodStart: start, periodEnd: end, at, sameCadence: true }),
    ).toEqual({
      credit: 16633, // 49900 / 3 = 16633.33
      debit: 33300,
      net: 16667,
      restartsPeriod: false,
    });
  });

  it('different cadence: credit of the unused part, the new amount in full, a new period', () => {
    const at = d('2026-01-16T00:00:00Z'); // r = 15 days = T / 2
    expect(
      prorate({ oldAmount: 999, newAmount: 499900, periodStart: start, periodEnd: end, at, sameCadence: false }),
    ).toEqual({
      credit: 500, // 499.5 rounds away from zero
      debit: 499900,
      net: 499400,
      restartsPeriod: true,
    });
  });

  it('downgrade gives a negative net (a credit note)', () => {
    const at = d('2026-01-16T00:00:00Z');
    expect(
      prorate({ oldAmount: 99900, newAmount: 49900, periodStart: start, periodEnd: end, at, sameCadence: true }).net,
    ).toBe(-25000);
  });

  it('properties: 0 <= credit <= old, exact at the ends, monotonic in time, huge amounts exact', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 4) }),
        fc.integer({ min: 0, max: Math.floor(Number.MAX_SAFE_INTEGER / 4) }),
        fc.integer({ min: 1, max: 400 * 86400 }), // T in seconds
        fc.integer({ min: 0, max: 1000 }),
        (oldAmount, newAmount, T, per) => {
          const periodStart = d('2026-03-01T00:00:00Z');
          const periodEnd = new Date(periodStart.getTime() + T * 1000);
          const leftAt = (r: number) => new Date(periodEnd.getTime() - r * 1000);
          const r = Math.floor((T * per) / 1000);
          const p = prorate({ oldAmount, newAmount, periodStart, periodEnd, at: leftAt(r), sameCadence: true });
          expect(p.credit).toBeGreaterThanOrEqual(0);
          expect(p.credit).toBeLessThanOrEqual(oldAmount);
          expect(p.net).toBe(p.debit - p.credit);
          // old x r / T rounded half up (all terms non-negative), computed here rather than with the service's divRound.
          expect(BigInt(p.credit)).toBe((2n * BigInt(oldAmount) * BigInt(r) + BigInt(T)) / (2n * BigInt(T)));
          // |credit - old x r / T| <= 1/2: the rounding error is at most half a subunit.
          const error = 2n * BigInt(T) * BigInt(p.credit) - 2n * BigInt(oldAmount) * BigInt(r);
          expect(error <= BigInt(T) && -error <= BigInt(T)).toBe(true);
          expect(
            prorate({ oldAmount, newAmount, periodStart, periodEnd, at: periodStart, sameCadence: true }).credit,
          ).toBe(oldAmount);
          expect(
            prorate({ oldAmount, newAmount, periodStart, periodEnd, at: periodEnd, sameCadence: true }).credit,
          ).toBe(0);
          if (r < T) {
            expect(
              prorate({ oldAmount, newAmount, periodStart, periodEnd, at: leftAt(r + 1), sameCadence: true }).credit,
            ).toBeGreaterThanOrEqual(p.credit);
          }
        },
      ),
      { seed: 20261123, numRuns: 1000 },
    );
  });

  it('refuses non-integer or negative amounts (no floats in money paths)', () => {
    expect(() =>
      prorate({ oldAmount: 10.5, newAmount: 0, periodStart: start, periodEnd: end, at: start, sameCadence: true }),
    ).toThrow();
    expect(() =>
      prorate({ oldAmount: -1, newAmount: 0, periodStart: start, periodEnd: end, at: start, sameCadence: true }),
    ).toThrow();
  });
});

describe('GST', () => {
  const base = { currency: 'INR', rateBps: 1800, merchantGstin: '29ABCDE1234F1ZW', merchantState: '29' };

  it('same state or unknown: CGST = SGST = round(subtotal x 9%)', () => {
    expect(gst({ ...base, subtotal: 49900, customerState: '29' })).toEqual({
      cgst: 4491,
      sgst: 4491,
      igst: 0,
      tax: 8982,
      total: 58882,
    });
    expect(gst({ ...base, subtotal: 49900, customerState: null })).toMatchObject({ cgst: 4491, sgst: 4491, igst: 0 });
  });

  it('another state: IGST = round(subtotal x 18%)', () => {
    expect(gst({ ...base, subtotal: 49900, customerState: '27' })).toEqual({
      cgst: 0,
      sgst: 0,
      igst: 8982,
      tax: 8982,
      total: 58882,
    });
  });

  it('rounds per head, half away from zero', () => {
    // 25 x 9% = 2.25 -> 2 per head; 50 x 9% = 4.5 -> 5 per head (tax 10, not round(50 x 18%) = 9)
    expect(gst({ ...base, subtotal: 25, customerState: '29' })).toMatchObject({ cgst: 2, sgst: 2, tax: 4 });
    expect(gst({ ...base, subtotal: 50, customerState: '29' })).toMatchObject({ cgst: 5, sgst: 5, tax: 10, total: 60 });
    expect(gst({ ...base, subtotal: 25, customerState: '27' })).toMatchObject({ igst: 5, tax: 5 }); // 4.5 -> 5
  });

  it('no tax on non-INR (zero-rated export) or without a merchant GSTIN', () => {
    expect(gst({ ...base, currency: 'usd', subtotal: 1000, customerState: '29' })).toEqual({
      cgst: 0,
      sgst: 0,
      igst: 0,
      tax: 0,
      total: 1000,
    });
    expect(gst({ ...base, merchantGstin: null, subtotal: 1000, customerState: '29' })).toMatchObject({
      tax: 0,
      total: 1000,
    });
  });
});

describe('tax treatments and gateway amounts (the gateway charges the invoice total)', () => {
  const parties = { currency: 'INR', merchantGstin: '29ABCDE1234F1ZW', merchantState: '29' };

  it('treatment: intra for the same or an unknown state, inter for another, none for non-INR or no GSTIN', () => {
    expect(taxTreatment({ ...parties, customerState: '29' })).toBe('intra');
    expect(taxTreatment({ ...parties, customerState: null })).toBe('intra');
    expect(taxTreatment({ ...parties, customerState: '27' })).toBe('inter');
    expect(taxTreatment({ ...parties, currency: 'usd', customerState: '29' })).toBe('none');
    expect(taxTreatment({ ...parties, merchantGstin: null, customerState: '27' })).toBe('none');
  });

  it("gst() is gstOn() under the parties' treatment (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_000 }),
        fc.integer({ min: 0, max: 2800 }),
        fc.constantFrom('29', '27', null),
        fc.constantFrom('INR', 'USD'),
        fc.constantFrom('29ABCDE1234F1ZW', null),
        (subtotal, rateBps, customerState, currency, merchantGstin) => {
          const args = { subtotal, rateBps, currency, merchantGstin, merchantState: '29', customerState };
          expect(gst(args)).toEqual(gstOn(subtotal, taxTreatment(args), rateBps));
        },
      ),
    );
  });

  it('recurring = the period invoice total; recurring + setup fee = the first invoice total (GST rounded once)', () => {
    expect(gatewayAmounts(49900, 0, { treatment: 'none', rateBps: 0 })).toEqual({ recurring: 49900, setupFee: 0 });
    expect(gatewayAmounts(49900, 10000, { treatment: 'intra', rateBps: 1800 })).toEqual({
      recurring: 58882,
      setupFee: 11800,
    });
    // 25 + 25 intra: 2 x round(2.25) = 4 each alone, 2 x round(4.5) = 10 together: the fee carries the difference.
    expect(gatewayAmounts(25, 25, { treatment: 'intra', rateBps: 1800 })).toEqual({ recurring: 29, setupFee: 31 });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000_000 }),
        fc.integer({ min: 0, max: 10_000_000_000 }),
        fc.constantFrom('none' as const, 'intra' as const, 'inter' as const),
        fc.integer({ min: 0, max: 2800 }),
        (amount, setupFee, treatment, rateBps) => {
          const g = gatewayAmounts(amount, setupFee, { treatment, rateBps });
          expect(g.recurring).toBe(gstOn(amount, treatment, rateBps).total);
          expect(g.recurring + g.setupFee).toBe(gstOn(amount + setupFee, treatment, rateBps).total);
          expect(g.setupFee).toBeGreaterThanOrEqual(setupFee > 0 ? setupFee : 0);
        },
      ),
    );
  });
});

describe('Razorpay add-ons a charge carried (the excess over the period invoice total)', () => {
  const addon = (invoiceId: string, amount: number, chargeInvoiceId: string | null = null) => ({
    invoiceId,
    amount,
    chargeInvoiceId,
  });
  const sub = { gatewayAddons: [addon('a', 1180), addon('b', 590), addon('c', 700, 'inv-0')] };

  it('takes the waiting ones whose amounts make up what was charged beyond the total, oldest first', () => {
    expect(addonsCharged(sub, { amount: 10000 + 1180 + 590 }, { total: 10000 }).map((a) => a.invoiceId)).toEqual([
      'a',
      'b',
    ]);
    // An add-on made after the charge (recorded, not yet on it) waits for the next one.
    expect(addonsCharged(sub, { amount: 10000 + 1180 }, { total: 10000 }).map((a) => a.invoiceId)).toEqual(['a']);
    expect(addonsCharged(sub, { amount: 10000 + 590 }, { total: 10000 }).map((a) => a.invoiceId)).toEqual(['b']);
    expect(addonsCharged(sub, { amount: 10000 }, { total: 10000 })).toEqual([]);
    // One a failed charge already carries is not taken again; an excess no set of them makes up takes none.
    expect(addonsCharged(sub, { amount: 10000 + 700 }, { total: 10000 })).toEqual([]);
    expect(addonsCharged(sub, { amount: 10000 + 1000 }, { total: 10000 })).toEqual([]);
    // Equal amounts: the oldest first.
    const twins = { gatewayAddons: [addon('x', 500), addon('y', 500)] };
    expect(addonsCharged(twins, { amount: 10500 }, { total: 10000 }).map((a) => a.invoiceId)).toEqual(['x']);
  });

  it('without the amount in the event: every waiting add-on (the gateway puts all on the next charge)', () => {
    expect(addonsCharged(sub, { amount: null }, { total: 10000 }).map((a) => a.invoiceId)).toEqual(['a', 'b']);
    expect(addonsCharged({ gatewayAddons: [] }, { amount: 99999 }, { total: 1 })).toEqual([]);
  });
});

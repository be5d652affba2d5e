import 'reflect-metadata';
import fc from 'fast-check';
import { v5 as uuidv5 } from 'uuid';
import { period } from '../../src/core/billing-period';
import { fractionDigits, periodFor, quantityDecimal, SubscriptionPeriods } from '../../src/modules/usage/usage.rules';
import { aggregationId } from '../../src/modules/usage/usage.service';
import { monthOf } from '../../src/modules/usage/usage.partitions';

/** The rules of usage that need no database: quantities as exact decimals, billing periods, partition months. */

const d = (iso: string) => new Date(iso);

describe('quantities', () => {
  it.each([
    [0.1, '0.1'],
    [0.3, '0.3'],
    [1, '1'],
    [-0, '0'],
    [2.5, '2.5'],
    [1e15, '1000000000000000'],
    [1e-12, '1e-12'],
    [123.456789012345, '123.456789012345'],
  ])('%s is stored as %s (the shortest decimal that reads back as the same number)', (q, text) => {
    expect(quantityDecimal(q, 'quantity')).toBe(text);
  });

  it.each([[-1], [1e15 + 2], [Infinity], [NaN], [1e-13], [0.1234567890123]])('%s is refused (400 quantity)', (q) => {
    expect(() => quantityDecimal(q, 'events[2].quantity')).toThrow(
      expect.objectContaining({ code: 'parameter_invalid', param: 'events[2].quantity' }),
    );
  });

  it('counts decimal places of every notation', () => {
    expect([
      fractionDigits('7'),
      fractionDigits('1.25'),
      fractionDigits('1e-7'),
      fractionDigits('1.5e-10'),
      fractionDigits('1e+21'),
    ]).toEqual([0, 2, 7, 11, 0]);
  });
});

describe('periodFor', () => {
  const monthly = (over: Partial<SubscriptionPeriods> = {}): SubscriptionPeriods => ({
    status: 'active',
    billingAnchor: d('2024-01-31T10:00:00Z'),
    currentPeriodStart: d('2024-03-31T10:00:00Z'),
    currentPeriodEnd: d('2024-04-30T10:00:00Z'),
    trialStart: null,
    trialEnd: null,
    billingFrequency: 'monthly',
    billingInterval: 1,
    ...over,
  });

  it('the current period, then earlier and later ones by calendar arithmetic from the anchor (Jan 31 -> Feb 29 -> Mar 31)', () => {
    const s = monthly();
    expect(periodFor(s, d('2024-04-01T00:00:00Z'))).toEqual({
      start: d('2024-03-31T10:00:00Z'),
      end: d('2024-04-30T10:00:00Z'),
    });
    expect(periodFor(s, d('2024-02-29T09:59:59.999Z'))).toEqual({
      start: d('2024-01-31T10:00:00Z'),
      end: d('2024-02-29T10:00:00Z'),
    });
    expect(periodFor(s, d('2024-02-29T10:00:00Z'))).toEqual({
      start: d('2024-02-29T10:00:00Z'),
      end: d('2024-03-31T10:00:00Z'),
    });
    expect(periodFor(s, d('2024-05-15T00:00:00Z'))).toEqual({
      start: d('2024-04-30T10:00:00Z'),
      end: d('2024-05-31T10:00:00Z'),
    });
    expect(periodFor(s, d('2024-01-31T09:59:59Z'))).toBeNull(); // before the first period
  });

  it('a trial is its own period; later periods count from its end; nothing before its start', () => {
    const trialing = monthly({
      status: 'trialing',
      billingAnchor: null,
      trialStart: d('2024-01-01T00:00:00Z'),
      trialEnd: d('2024-01-08T00:00:00Z'),
      currentPeriodStart: d('2024-01-01T00:00:00Z'),
      currentPeriodEnd: d('2024-01-08T00:00:00Z'),
    });
    expect(periodFor(trialing, d('2024-01-05T00:00:00Z'))).toEqual({
      start: d('2024-01-01T00:00:00Z'),
      end: d('2024-01-08T00:00:00Z'),
    });
    expect(periodFor(trialing, d('2024-01-08T00:00:00Z'))).toEqual({
      start: d('2024-01-08T00:00:00Z'),
      end: d('2024-02-08T00:00:00Z'),
    });
    expect(periodFor(trialing, d('2023-12-31T23:59:59Z'))).toBeNull();
    const converted = {
      ...trialing,
      status: 'active',
      billingAnchor: d('2024-01-08T00:00:00Z'),
      currentPeriodStart: d('2024-02-08T00:00:00Z'),
      currentPeriodEnd: d('2024-03-08T00:00:00Z'),
    };
    expect(periodFor(converted, d('2024-01-07T00:00:00Z'))).toEqual({
      start: d('2024-01-01T00:00:00Z'),
      end: d('2024-01-08T00:00:00Z'),
    });
    expect(periodFor(converted, d('2024-01-20T00:00:00Z'))).toEqual({
      start: d('2024-01-08T00:00:00Z'),
      end: d('2024-02-08T00:00:00Z'),
    });
  });

  it('nothing before an anchor a cadence change restarted (those periods are not kept)', () => {
    const s = monthly({
      billingAnchor: d('2024-06-10T00:00:00Z'),
      currentPeriodStart: d('2024-06-10T00:00:00Z'),
      currentPeriodEnd: d('2025-06-10T00:00:00Z'),
      billingFrequency: 'yearly',
    });
    expect(periodFor(s, d('2024-06-09T00:00:00Z'))).toBeNull();
  });

  it('any instant after the anchor falls in exactly the period of the anchor arithmetic that holds it', () => {
    fc.assert(
      fc.property(
        fc.date({ min: d('2000-01-01T00:00:00Z'), max: d('2080-01-01T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('daily', 'weekly', 'monthly', 'yearly' as const),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 3_000 * 86_400_000 }),
        (anchor, frequency, interval, after) => {
          const s = monthly({
            billingAnchor: anchor,
            currentPeriodStart: null,
            currentPeriodEnd: null,
            billingFrequency: frequency,
            billingInterval: interval,
          });
          const t = new Date(anchor.getTime() + after);
          const p = periodFor(s, t)!;
          expect(p.start.getTime()).toBeLessThanOrEqual(t.getTime());
          expect(p.end.getTime()).toBeGreaterThan(t.getTime());
          // it is one of the anchor's periods (its start is a period start, and the period after it starts at its end)
          const k = [...Array(4000).keys()].find(
            (c) => period(anchor, frequency, interval, c).start.getTime() === p.start.getTime(),
          );
          expect(k).toBeDefined();
          expect(period(anchor, frequency, interval, k!)).toEqual(p);
        },
      ),
      { seed: 20261124, numRuns: 300 },
    );
  });
});

describe('ids and months', () => {
  it('an aggregation id is a UUID v5 of (subscription, period start, event type)', () => {
    const a = aggregationId('0190a0a0-0000-7000-8000-000000000001', d('2024-01-01T00:00:00Z'), 'api_calls');
    expect(a).toBe(aggregationId('0190a0a0-0000-7000-8000-000000000001', d('2024-01-01T00:00:00Z'), 'api_calls'));
    expect(a).not.toBe(aggregationId('0190a0a0-0000-7000-8000-000000000001', d('2024-02-01T00:00:00Z'), 'api_calls'));
    expect(a[14]).toBe('5');
  });

  it("is exactly the uuid package's v5 (ids already handed out stay the same)", () => {
    const NAMESPACE = '5f0b5a8e-3c1d-4e57-9d6c-2a4b8e1f7c30';
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.date({ min: d('2000-01-01T00:00:00Z'), max: d('2100-01-01T00:00:00Z') }),
        fc.stringMatching(/^[A-Za-z0-9_.:-]{1,100}$/),
        (sub, at, type) => {
          expect(aggregationId(sub, at, type)).toBe(uuidv5(`${sub}/${at.toISOString()}/${type}`, NAMESPACE));
        },
      ),
      { seed: 20261124, numRuns: 300 },
    );
    expect(aggregationId('0190a0a0-0000-7000-8000-000000000001', d('2024-01-01T00:00:00Z'), 'api_calls')).toBe(
      uuidv5('0190a0a0-0000-7000-8000-000000000001/2024-01-01T00:00:00.000Z/api_calls', NAMESPACE),
    );
  });

  it('partition months are UTC months', () => {
    expect(monthOf(d('2026-12-31T23:59:59.999Z'))).toEqual({
      name: 'usage_events_2026_12',
      from: '2026-12-01T00:00:00.000Z',
      to: '2027-01-01T00:00:00.000Z',
    });
    expect(monthOf(d('2027-01-01T00:00:00Z')).name).toBe('usage_events_2027_01');
  });
});

import { fromGatewayAmount, gatewayExponent, toGatewayAmount, unchargeableAmount } from '../../src/gateways/amounts';
import { GatewayError } from '../../src/gateways/port';

describe('gateway amounts', () => {
  // [currency, ISO subunits, Stripe amount, Razorpay amount]
  const table: Array<[string, number, number, number]> = [
    ['JPY', 500, 500, 500],
    ['INR', 49900, 49900, 49900],
    ['KWD', 1500, 1500, 1500],
    ['ISK', 5, 500, 5], // ISO 0; Stripe keeps ISK two-decimal (always ...00)
    ['HUF', 12345, 12345, 12345], // two-decimal at both
    ['TWD', 9900, 9900, 9900],
    ['UGX', 5000, 500000, 5000], // ISO 0; Stripe two-decimal
    ['KRW', 1000, 1000, 1000],
    ['USD', 1999, 1999, 1999],
  ];

  it.each(table)('%s %d -> stripe %d, razorpay %d and back', (currency, iso, stripe, razorpay) => {
    expect(toGatewayAmount('stripe', iso, currency)).toBe(stripe);
    expect(fromGatewayAmount('stripe', stripe, currency)).toBe(iso);
    expect(toGatewayAmount('razorpay', iso, currency)).toBe(razorpay);
    expect(fromGatewayAmount('razorpay', razorpay, currency)).toBe(iso);
  });

  it('accepts any case', () => {
    expect(toGatewayAmount('stripe', 5, 'isk')).toBe(500);
    expect(gatewayExponent('stripe', 'jpy')).toBe(0);
  });

  it('rejects three-decimal amounts not ending in 0, with a clear message', () => {
    expect(() => toGatewayAmount('stripe', 1505, 'KWD')).toThrow(GatewayError);
    expect(() => toGatewayAmount('stripe', 1505, 'KWD')).toThrow(/end in 0/);
    expect(() => toGatewayAmount('razorpay', 1001, 'BHD')).toThrow(/end in 0/);
    expect(toGatewayAmount('stripe', 1510, 'JOD')).toBe(1510);
  });

  it('says why some supported gateway cannot charge an amount (null when every one can)', () => {
    expect(unchargeableAmount(1505, 'KWD')).toMatch(/stripe requires the amount to end in 0/);
    expect(unchargeableAmount(1001, 'bhd')).toMatch(/end in 0/);
    for (const [amount, currency] of [
      [1500, 'KWD'],
      [0, 'OMR'],
      [5, 'ISK'],
      [501, 'JPY'],
      [49901, 'INR'],
      [1999, 'USD'],
    ] as const) {
      expect(unchargeableAmount(amount, currency)).toBeNull();
    }
  });

  it('never produces fractions back', () => {
    expect(() => fromGatewayAmount('stripe', 550, 'ISK')).toThrow(RangeError);
    expect(() => toGatewayAmount('stripe', 1.5, 'USD')).toThrow(RangeError);
  });
});

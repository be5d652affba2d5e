import { formatCompactMoney } from '../../web/src/lib/compact-money';

/** The overview chart's axis labels (web/src/lib/compact-money.ts): short, in lakhs and crores for INR. */
it('shortens INR to thousands, lakhs and crores, rounding to a tenth half away from zero', () => {
  expect(formatCompactMoney(0, 'INR')).toBe('₹0');
  expect(formatCompactMoney(49_900, 'INR')).toBe('₹499');
  expect(formatCompactMoney(1_234_500, 'INR')).toBe('₹12.3K');
  expect(formatCompactMoney(12_000_000, 'INR')).toBe('₹1.2L');
  expect(formatCompactMoney(24_691_356, 'INR')).toBe('₹2.5L');
  expect(formatCompactMoney(3_400_000_000, 'INR')).toBe('₹3.4Cr');
  expect(formatCompactMoney(10_000_000_000, 'INR')).toBe('₹10Cr');
  expect(formatCompactMoney(-5_000_000, 'INR')).toBe('-₹50K');
  expect(formatCompactMoney(123_456, 'USD')).toBe('$1.2K');
});

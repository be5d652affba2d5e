const UNITS: Record<string, string> = { DAILY: 'day', WEEKLY: 'week', MONTHLY: 'month', YEARLY: 'year' };

/** "per month", "every 3 months"; "one-time" without a cadence. */
export function cadenceText(s: { billingFrequency?: string | null; billingInterval: number }): string {
  const unit = s.billingFrequency ? UNITS[s.billingFrequency] : null;
  if (!unit) return 'one-time';
  return s.billingInterval > 1 ? `every ${s.billingInterval} ${unit}s` : `per ${unit}`;
}

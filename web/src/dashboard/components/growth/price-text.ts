import { formatMoney } from '../../../lib/money';

/** What a plan's cadence reads as after its price: "/ month", "/ 3 months", "once". */
export function cadence(plan: { billingFrequency?: string | null; billingInterval: number }): string {
  const unit: Record<string, string> = { DAILY: 'day', WEEKLY: 'week', MONTHLY: 'month', YEARLY: 'year' };
  const u = plan.billingFrequency ? unit[plan.billingFrequency] : undefined;
  if (!u) return 'once';
  return plan.billingInterval > 1 ? `/ ${plan.billingInterval} ${u}s` : `/ ${u}`;
}

export interface PreviewPlan {
  id: string;
  name: string;
  billingFrequency?: string | null;
  billingInterval: number;
  trialPeriodDays: number;
  defaultPrice?: { amount: number; currency: string } | null;
}

/** "₹499.00 / month" for a plan with a default price; "No price" otherwise. */
export function planPrice(plan: PreviewPlan): string {
  if (!plan.defaultPrice) return 'No price';
  const money = formatMoney(plan.defaultPrice.amount, plan.defaultPrice.currency);
  const c = cadence(plan);
  return c === 'once' ? `${money} once` : `${money} ${c}`;
}

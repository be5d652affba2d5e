import { period } from '../../core/billing-period';
import { TaxSnapshot, TaxTreatment } from '../../money';
import type { BillingSubscription } from './subscription.entities';

/** The subscription's tax, fixed when it was created: its invoices and its gateway amounts follow it. */
export function taxOf(sub: BillingSubscription): TaxSnapshot {
  return { treatment: sub.taxTreatment as string as TaxTreatment, rateBps: sub.taxRateBps };
}

/** The period `cycle` of a subscription's anchor, by its plan's cadence. */
export function periodOf(sub: BillingSubscription, anchor: Date, cycle: number): { start: Date; end: Date } {
  return period(anchor, sub.billingFrequency, sub.billingInterval, cycle);
}

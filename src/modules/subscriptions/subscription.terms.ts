import { period } from '../../core/billing-period';
import { TaxSnapshot, TaxTreatment } from '../../money';
import type { Plan, Price } from '../catalog';
import type { BillingSubscription } from './subscription.entities';

/** The subscription's tax, fixed when it was created: its invoices and its gateway amounts follow it. */
export function taxOf(sub: BillingSubscription): TaxSnapshot {
  return { treatment: sub.taxTreatment as string as TaxTreatment, rateBps: sub.taxRateBps, behavior: sub.taxBehavior };
}

/** The period `cycle` of a subscription's anchor, by its plan's cadence. */
export function periodOf(sub: BillingSubscription, anchor: Date, cycle: number): { start: Date; end: Date } {
  return period(anchor, sub.billingFrequency, sub.billingInterval, cycle);
}

/** The subscription's terms become the plan's at that price (a plan change, now or at its period end). */
export function moveToPlan(sub: BillingSubscription, plan: Plan, price: Price): void {
  Object.assign(sub, {
    productId: plan.productId,
    planId: plan.id,
    priceId: price.id,
    amount: price.amount,
    setupFee: price.setupFee,
    billingFrequency: plan.billingFrequency!,
    billingInterval: plan.billingInterval,
    maxCycles: plan.maxCycles ?? null,
    trialEndAction: plan.trialEndAction,
    // Its invoices and gateway amounts follow the new price's tax behaviour (docs/invoices-and-gst.md).
    taxBehavior: price.taxBehavior,
  });
}

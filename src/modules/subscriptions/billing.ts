/**
 * What subscriptions bill with, read from beside them: the billing calendar (src/core/billing-period.ts) and the
 * money arithmetic (src/money).
 */
export { period, periodStart } from '../../core/billing-period';
export type { Frequency } from '../../core/billing-period';
export { divRound, gatewayAmounts, gst, gstApplies, gstOn, prorate, taxTreatment } from '../../money';
export type { Gst, Proration, TaxSnapshot, TaxTreatment } from '../../money';

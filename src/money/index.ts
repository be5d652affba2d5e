/**
 * The money kernel: pure integer arithmetic on subunits (rounding, proration, GST, discounts, MRR normalisation,
 * currency exponents and printing). It imports nothing of the domain, so every module can share it.
 */
export { divRound, share } from './rounding';
export { prorate, prorationDocument } from './proration';
export type { ProratedSide, Proration, ProrationDocument } from './proration';
export { gatewayAmounts, gst, gstApplies, gstFor, gstIncluded, gstOn, taxTreatment } from './gst';
export type { Gst, TaxBehavior, TaxSnapshot, TaxTreatment } from './gst';
export { allocate, invoiceTax, invoiceTaxFor, invoiceTaxIncludedFor, invoiceTaxWithHeads } from './invoice-tax';
export type { InvoiceTax, LineTax, TaxParties } from './invoice-tax';
export { discountLabel, discountOn, percentToBps } from './discount';
export type { DiscountTerms } from './discount';
export { monthlyAmount } from './mrr';
export { currencyExponent } from './currency';
export {
  decimalAmount,
  formatAmount,
  formatMoney,
  formatUnitPrice,
  groupDigits,
  indianNumberInWords,
  rupeesInWords,
} from './format';

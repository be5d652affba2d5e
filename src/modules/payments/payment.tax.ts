import { gst, gstApplies } from '../../money';
import { SnapshotTaxParties, taxPartiesOf } from '../invoices';

/**
 * The GST a one-time payment collects (docs/payments.md, "Tax and refund amounts"). `amount` stays the tax-exclusive
 * price; the tax on it (docs/invoices-and-gst.md) is fixed when the payment is created, and the checkout charges `amount_total` = amount + tax, which is also the total of the invoice issued when it succeeds.
 * Refunds are money returned (docs/payments.md): they count against `amount_total` and the gateway refunds exactly each
 * refund's amount, so no share of the tax is worked out for the gateway (a refund's credit note carries its share of
 * the invoice's tax heads: invoices/credit-note.ts). Pure integer arithmetic.
 */

export interface CustomerTaxDetails {
  stateCode?: string | null;
  gstin?: string | null;
}

/**
 * The tax parties a payment snapshots. The customer's place of supply is the one the request gives
 * (`customer_state_code`, else its `customer_gstin`'s state), else the customer record's (`stored`, found by
 * e-mail); an untaxable payment fixes no customer (the invoice then shows the record's, as for any untaxed invoice).
 */
export function paymentTaxParties(
  currency: string,
  merchant: { gstin?: string | null; stateCode?: string | null; taxRateBps: number },
  request: CustomerTaxDetails,
  stored: CustomerTaxDetails | null,
): SnapshotTaxParties {
  if (!gstApplies(currency, merchant.gstin)) return taxPartiesOf(merchant, null);
  const customer =
    request.stateCode != null
      ? { stateCode: request.stateCode, gstin: request.gstin ?? stored?.gstin ?? null }
      : request.gstin != null
        ? { stateCode: null, gstin: request.gstin } // placed in its GSTIN's state, not in one the record kept
        : { stateCode: stored?.stateCode ?? null, gstin: stored?.gstin ?? null };
  return taxPartiesOf(merchant, customer);
}

/** The GST on `amount` (docs/invoices-and-gst.md: CGST + SGST or IGST, each head rounded half away from zero). */
export function paymentTax(amount: number, currency: string, parties: SnapshotTaxParties): number {
  return gst({
    subtotal: amount,
    currency,
    rateBps: parties.rateBps,
    merchantGstin: parties.merchantGstin,
    merchantState: parties.merchantState,
    customerState: parties.customer?.state ?? null,
  }).tax;
}

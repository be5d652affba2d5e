import { gstApplies, gstFor, TaxBehavior } from '../../money';
import { SnapshotTaxParties, taxPartiesOf, treatmentOf } from '../invoices';

/**
 * The GST a one-time payment collects (docs/payments.md, "Tax and refund amounts"). `amount` is the price the merchant
 * asked for, tax-exclusive by default; the tax on it (docs/invoices-and-gst.md) is fixed when the payment is created,
 * and the checkout charges `amount_total` = amount + tax, which is also the total of the invoice issued when it
 * succeeds. With `tax_behavior` `inclusive` the amount contains its GST: `amount_total` = amount, the tax is the GST
 * contained in it ("Tax-inclusive prices").
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

/**
 * The GST of `amount` (docs/invoices-and-gst.md: CGST + SGST or IGST, each head rounded half away from zero): on top of
 * it when `exclusive`, contained in it when `inclusive` ("Tax-inclusive prices"). `total` is what the checkout charges.
 */
export function paymentTax(
  amount: number,
  currency: string,
  parties: SnapshotTaxParties,
  behavior: TaxBehavior = 'exclusive',
): { tax: number; total: number } {
  const g = gstFor(amount, behavior, treatmentOf(currency, parties), parties.rateBps);
  return { tax: g.tax, total: g.total };
}

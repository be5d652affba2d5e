import { share } from './rounding';

export interface Gst {
  cgst: number;
  sgst: number;
  igst: number;
  tax: number;
  total: number;
}

/**
 * How GST applies to a supply (docs/invoices-and-gst.md): `none` (non-INR: a zero-rated export; or a merchant without a
 * GSTIN), `intra` (CGST + SGST: the customer is in the merchant's state, or its state is unknown) or `inter` (IGST).
 */
export type TaxTreatment = 'none' | 'intra' | 'inter';

/** Whether GST can apply at all: INR, and a merchant with a GSTIN (docs/invoices-and-gst.md). */
export function gstApplies(currency: string, merchantGstin: string | null | undefined): boolean {
  return currency.toUpperCase() === 'INR' && !!merchantGstin;
}

/** The treatment of an invoice in `currency` between these parties (docs/invoices-and-gst.md). */
export function taxTreatment(args: {
  currency: string;
  merchantGstin: string | null;
  merchantState: string | null;
  customerState: string | null;
}): TaxTreatment {
  if (!gstApplies(args.currency, args.merchantGstin)) return 'none';
  return !args.customerState || args.customerState === args.merchantState ? 'intra' : 'inter';
}

/**
 * GST on a tax-exclusive subtotal under a treatment: `intra` CGST = SGST = round(subtotal x rate / 2), `inter`
 * IGST = round(subtotal x rate), `none` nothing. Rates in basis points (1800 = 18%).
 */
export function gstOn(subtotal: number, treatment: TaxTreatment, rateBps: number): Gst {
  if (!Number.isSafeInteger(subtotal) || subtotal < 0)
    throw new Error(`gst: subtotal must be a non-negative integer, got ${subtotal}`);
  if (!Number.isInteger(rateBps) || rateBps < 0)
    throw new Error(`gst: rateBps must be a non-negative integer, got ${rateBps}`);
  if (treatment === 'intra') {
    const half = share(subtotal, rateBps, 20_000);
    return { cgst: half, sgst: half, igst: 0, tax: 2 * half, total: subtotal + 2 * half };
  }
  if (treatment === 'inter') {
    const igst = share(subtotal, rateBps, 10_000);
    return { cgst: 0, sgst: 0, igst, tax: igst, total: subtotal + igst };
  }
  return { cgst: 0, sgst: 0, igst: 0, tax: 0, total: subtotal };
}

/** How a price's amount relates to GST (docs/invoices-and-gst.md, "Tax-inclusive prices"). */
export type TaxBehavior = 'exclusive' | 'inclusive';

/**
 * GST contained in a tax-inclusive `total` under a treatment (docs/invoices-and-gst.md, "Tax-inclusive prices"): the
 * answer's `total` is exactly the given total and its taxable value is `total - tax`. `inter`: IGST = total -
 * round(total x 10000 / (10000 + rate)). `intra`: CGST = SGST = round(total x rate / (2 x (10000 + rate))), each half
 * rounded on its own as gstOn() does, so the heads are equal and sum to the tax exactly; an odd subunit of tax that
 * cannot be halved stays in the taxable value. `none` nothing. Rates in basis points (1800 = 18%).
 */
export function gstIncluded(total: number, treatment: TaxTreatment, rateBps: number): Gst {
  if (!Number.isSafeInteger(total) || total < 0)
    throw new Error(`gst: total must be a non-negative integer, got ${total}`);
  if (!Number.isInteger(rateBps) || rateBps < 0)
    throw new Error(`gst: rateBps must be a non-negative integer, got ${rateBps}`);
  if (treatment === 'intra') {
    const half = share(total, rateBps, 2 * (10_000 + rateBps));
    return { cgst: half, sgst: half, igst: 0, tax: 2 * half, total };
  }
  if (treatment === 'inter') {
    const igst = total - share(total, 10_000, 10_000 + rateBps);
    return { cgst: 0, sgst: 0, igst, tax: igst, total };
  }
  return { cgst: 0, sgst: 0, igst: 0, tax: 0, total };
}

/**
 * The GST of an amount priced with `behavior`: `exclusive` adds it on top (gstOn(), total = amount + tax), `inclusive`
 * takes it out of the amount (gstIncluded(), total = amount). The taxable value is `total - tax` either way.
 */
export function gstFor(amount: number, behavior: TaxBehavior, treatment: TaxTreatment, rateBps: number): Gst {
  return behavior === 'inclusive' ? gstIncluded(amount, treatment, rateBps) : gstOn(amount, treatment, rateBps);
}

/**
 * The formulas (docs/invoices-and-gst.md), GST on a tax-exclusive subtotal: only INR invoices of a merchant with a
 * GSTIN are taxed (anything else is a zero-rated export or untaxed). Customer in the merchant's state, or state
 * unknown: CGST = SGST = round(subtotal x rate / 2); another state: IGST = round(subtotal x rate). Rates in basis
 * points (1800 = 18%).
 */
export function gst(args: {
  subtotal: number;
  currency: string;
  rateBps: number;
  merchantGstin: string | null;
  merchantState: string | null;
  customerState: string | null;
}): Gst {
  return gstOn(args.subtotal, taxTreatment(args), args.rateBps);
}

/**
 * A subscription's tax, fixed when it is created (its invoices and the amounts its gateway charges both follow it, so
 * a later change of the merchant's settings cannot make them disagree).
 */
export interface TaxSnapshot {
  treatment: TaxTreatment;
  /** 0 when the treatment is `none`. */
  rateBps: number;
  /** Whether its price contains the GST (docs/invoices-and-gst.md, "Tax-inclusive prices"); absent: exclusive. */
  behavior?: TaxBehavior;
}

/**
 * What the gateway charges for a subscription (docs/invoices-and-gst.md: prices are tax-exclusive, the invoice's total
 * is subtotal + GST): each period, the period invoice's total; on the first charge, also the setup fee, taken as the
 * difference so that the first charge equals the first invoice's total (GST is rounded once, on the whole subtotal).
 * A tax-inclusive price's invoice totals are its amounts themselves, so the gateway charges exactly those.
 */
export function gatewayAmounts(
  amount: number,
  setupFee: number,
  tax: TaxSnapshot,
): { recurring: number; setupFee: number } {
  if (tax.behavior === 'inclusive') return { recurring: amount, setupFee };
  const recurring = gstOn(amount, tax.treatment, tax.rateBps).total;
  return {
    recurring,
    setupFee: setupFee > 0 ? gstOn(amount + setupFee, tax.treatment, tax.rateBps).total - recurring : 0,
  };
}

import { periodStart } from '../../core/billing-period';
import type { Frequency } from '../../core/billing-period';

/**
 * The terms an INR subscription's mandate is registered with (docs/india.md, "Mandates"): the most one debit may take,
 * how often it may be debited, and until when. Cadence sets them at creation, sends them to the gateway with the
 * subscription (Stripe metadata, Razorpay notes, as `mandate_max_amount`, `mandate_frequency`, `mandate_valid_until`),
 * keeps them on the subscription, and refuses a plan change whose debit the mandate could not carry.
 */
export interface MandateTerms {
  maxAmount: number;
  frequency: 'as_presented';
  validUntil: Date;
}

/** A mandate without a term end is registered for this many years. */
export const OPEN_MANDATE_YEARS = 10;

export function mandateTerms(p: {
  /** The merchant's limit for a debit without the customer's authentication (subunits). */
  afaLimit: number;
  /** The largest debit the subscription makes as created: its recurring charge, with a setup fee it carries. */
  firstDebit: number;
  now: Date;
  trialDays: number;
  frequency: Frequency;
  interval: number;
  maxCycles: number | null;
}): MandateTerms {
  // Debits vary (proration, usage, upgrades): as presented, up to the larger of the limit and the first debit.
  const start = new Date(p.now.getTime() + p.trialDays * 86_400_000);
  const validUntil =
    p.maxCycles != null
      ? periodStart(start, p.frequency, p.interval, p.maxCycles)
      : periodStart(p.now, 'yearly', OPEN_MANDATE_YEARS, 1);
  return { maxAmount: Math.max(p.afaLimit, p.firstDebit), frequency: 'as_presented', validUntil };
}

import { logger } from '../../core/logger';
import { BillingReason, Invoice, InvoiceStatus, InvoiceType } from '../invoices';
import type { InvoiceLineDraft } from '../invoices';
import { formatUnitPrice } from '../../money';
import { collectFromMandate } from './change-plan';
import type { SubscriptionChange } from './subscription.lifecycle';
import { taxOf } from './subscription.terms';
import type { SubscriptionService } from './subscription.service';
import { ClosedUsage, closeUnbilledUsage } from '../usage';

/**
 * Usage is billed in arrears (docs/usage.md). When a subscription's billing period closes — the renewal that bills the
 * next period (subscription.lifecycle.ts billPeriod), or the end of the subscription at a period's end (period-end
 * cancellation, completion: subscription.scheduler.ts) — every part of its usage not billed yet that was counted in a
 * period starting before the closing instant is closed in one statement (usage/usage.billing.store.ts), so an event reported
 * late for an earlier period is billed by the next close, never lost and never billed twice. Each (period, event type)
 * the plan prices in the subscription's currency is one line of its own invoice: quantity x unit_amount_decimal in
 * exact numeric, rounded half away from zero to a whole subunit once per line (its description shows the rate in major
 * units: usageLines). That invoice (billing_reason subscription_cycle, open, GST from the subscription's tax snapshot)
 * is issued in the closing transaction and collected from the mandate after the commit like a plan change's adjustment
 * (change-plan.ts collectFromMandate).
 *
 * Decided here: event types the plan does not price are closed without a charge (a rate added later does not bill
 * usage already closed); usage counted during a free trial is free like the trial (closed at zero by the first charge);
 * a zero total issues no invoice; an immediate cancellation bills nothing (as Stripe's `invoice_now` default): the
 * mandate is gone, and the usage stays visible in the summary.
 */

/** A final close takes every period, whatever its start. */
const FOREVER = new Date('9999-12-31T00:00:00.000Z');

/**
 * Closes the subscription's usage of periods that started before `closingAt` and issues its usage invoice in the
 * change's transaction (null when nothing priced is due). `final`: the subscription ends with this close; on Razorpay,
 * whose only collection is an add-on to a later charge, its invoice then stays open (no later charge will come).
 */
export async function billUsage(
  change: SubscriptionChange,
  service: SubscriptionService,
  p: { closingAt: Date; at: Date; final?: boolean },
): Promise<Invoice | null> {
  const sub = change.sub;
  const closed = await closeUnbilledUsage(change.em, {
    subscriptionId: sub.id,
    closingAt: p.closingAt,
    planId: sub.planId,
    currency: sub.currency,
  });
  if (!closed.length) return null;
  const lines = usageLines(closed, sub.trialEnd ?? null, sub.currency);
  if (!lines.some((l) => l.amount > 0)) return null;
  const invoice = await service.invoices.issue(change.em, {
    type: InvoiceType.INVOICE,
    billingReason: BillingReason.SUBSCRIPTION_CYCLE,
    status: InvoiceStatus.OPEN,
    customerId: sub.customerId,
    subscriptionId: sub.id,
    currency: sub.currency,
    lines,
    periodStart: new Date(Math.min(...lines.map((l) => l.periodStart!.getTime()))),
    periodEnd: new Date(Math.max(...lines.map((l) => l.periodEnd!.getTime()))),
    issuedAt: p.at,
    // Usage is priced as the subscription's price is: GST on top, or contained (docs/invoices-and-gst.md).
    tax: taxOf(sub),
  });
  if (p.final && sub.provider === 'razorpay') {
    logger.info(
      { subscription_id: sub.id, invoice_id: invoice.id },
      'final usage invoice of an ended Razorpay subscription left open: no later charge can carry an add-on',
    );
  } else {
    // Named by its period, not its number: the number is taken with the COMMIT (invoice numbering), after this line.
    const day = (d?: Date | null) => (d ? d.toISOString().slice(0, 10) : '');
    await collectFromMandate(
      change,
      service.invoices,
      invoice,
      `Usage ${day(invoice.periodStart)} to ${day(invoice.periodEnd)}`,
    );
  }
  return invoice;
}

/** The close when a subscription ends at a period's end: everything still unbilled, whatever its period. */
export function billFinalUsage(
  change: SubscriptionChange,
  service: SubscriptionService,
  at: Date,
): Promise<Invoice | null> {
  return billUsage(change, service, { closingAt: FOREVER, at, final: true });
}

/**
 * Invoice lines of closed usage: one per (period, event type) with a rate, outside a free trial (periods ending by
 * `trialEnd`). quantity 1 and unit_amount = amount, as invoice lines count whole units and whole subunits; the exact
 * quantity and rate are in the description, the rate per unit in major units of `currency` with every decimal it
 * needs (string arithmetic: src/money/format.ts formatUnitPrice), e.g. `Usage: api_calls (1,234.5 call x ₹0.0025)` for a
 * rate of 0.25 paise (a quarter paisa) a call. The rate is stored in subunits; shown as such beside the invoice's
 * rupee columns it would read as rupees.
 */
export function usageLines(
  closed: ClosedUsage[],
  trialEnd: Date | null,
  currency: string,
): (InvoiceLineDraft & { periodStart: Date; periodEnd: Date })[] {
  const lines: (InvoiceLineDraft & { periodStart: Date; periodEnd: Date })[] = [];
  for (const u of closed) {
    if (u.unitAmountDecimal === null || u.amount === null) continue;
    if (trialEnd && u.periodEnd.getTime() <= trialEnd.getTime()) continue;
    const amount = Number(u.amount);
    // Rates are below 10^9 subunits per unit: only an absurd quantity gets here, and no invoice can hold it.
    if (!Number.isSafeInteger(amount))
      throw new Error(
        `usage line amount out of range: ${u.amount} (${u.eventType}, ${u.quantity} x ${u.unitAmountDecimal})`,
      );
    lines.push({
      description: `Usage: ${u.eventType} (${groupDigits(u.quantity)} ${u.unit} x ${formatUnitPrice(u.unitAmountDecimal, currency)})`,
      quantity: 1,
      unitAmount: amount,
      amount,
      periodStart: u.periodStart,
      periodEnd: u.periodEnd,
    });
  }
  return lines;
}

/** `"1234.5"` -> `"1,234.5"`: thousands separators on the integer part of a decimal text (no float on the way). */
export function groupDigits(decimal: string): string {
  const [whole, fraction] = decimal.split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction ? `${grouped}.${fraction}` : grouped;
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { queueRazorpayEvent } from './events';
import { gid, unix } from './ids';
import { addUnits, PeriodUnit, RAZORPAY_PERIOD_UNIT } from './periods';
import {
  AUTHENTICATION_REQUIRED,
  bankOf,
  cardNetwork,
  HARD_DECLINES,
  Instrument,
  laterDebitFailure,
  pageBase,
} from './rules';
import { SandboxObject } from './sandbox.entities';
import { Account, createObject, findObject, patch, Persister } from './store';

/** Razorpay-side money movements of the sandbox: payments (for links and subscriptions) and subscription cycles. */

export const accountOf = (obj: SandboxObject): Account => ({
  provider: 'razorpay',
  accountKey: obj.accountKey,
  livemode: false,
});

const ERROR_DESCRIPTIONS: Record<string, string> = {
  card_declined: 'Your payment was declined by the bank.',
  insufficient_funds: 'Payment failed due to insufficient funds.',
  stolen_card: 'Payment failed: the card was reported stolen.',
  processing_error: 'Payment processing failed due to an error at the bank.',
  payment_failed: 'Payment failed.',
  authentication_required: 'The debit is above the mandate limit: the customer must authenticate it.',
};

/** A payment entity, captured or failed, as Razorpay reports it. */
export function createPayment(
  em: Persister,
  account: Account,
  p: {
    amount: number;
    currency: string;
    notes: Record<string, string>;
    email?: string | null;
    contact?: string | null;
    instrument: Instrument;
    failure: string | null;
    description?: string | null;
    invoiceId?: string | null;
    /** The subscription a payment authorises or charges (its entity names it, as Razorpay's does). */
    subscriptionId?: string | null;
    at?: Date;
  },
): SandboxObject {
  const i = p.instrument;
  return createObject(em, account, 'payment', {
    id: gid('pay_', 14),
    entity: 'payment',
    amount: p.amount,
    currency: p.currency,
    status: p.failure ? 'failed' : 'captured',
    captured: !p.failure,
    method: i.method,
    // As Razorpay: `bank` for e-mandates (and netbanking), the card's `issuer`; a UPI payment names only its VPA
    // (the sandbox passes a bank typed on the form through all the same).
    bank: i.method === 'card' ? null : i.bank,
    vpa: i.method === 'upi' ? i.vpa : null,
    upi: i.method === 'upi' ? { vpa: i.vpa, flow: 'collect' } : null,
    card:
      i.method === 'card'
        ? {
            entity: 'card',
            last4: (i.cardNumber ?? '').replace(/\D/g, '').slice(-4) || '1111',
            network: cardNetwork(i).network,
            type: 'credit',
            issuer: bankOf(i),
            international: false,
          }
        : null,
    amount_refunded: 0,
    refund_status: null,
    invoice_id: p.invoiceId ?? null,
    ...(p.subscriptionId ? { subscription_id: p.subscriptionId } : {}),
    description: p.description ?? null,
    email: p.email ?? null,
    contact: p.contact ?? null,
    notes: p.notes,
    error_code: p.failure ? 'BAD_REQUEST_ERROR' : null,
    error_description: p.failure ? (ERROR_DESCRIPTIONS[p.failure] ?? 'Payment failed.') : null,
    error_reason: p.failure,
    error_source: p.failure ? (p.failure === 'payment_failed' ? 'customer' : 'bank') : null,
    error_step: p.failure ? 'payment_authorization' : null,
    created_at: unix(p.at),
  });
}

interface SubInternal {
  instrument: Instrument | null;
  /** Charges attempted after authorisation (the card rules count these). */
  attempts: number;
  unit: PeriodUnit;
  count: number;
  anchor: number;
  cycle: number;
  planAmount: number;
  currency: string;
  pendingAddons: number;
  /** The invoice of a cycle whose charge failed (retried by the test-helper route). */
  openInvoice?: string | null;
  /** Cancel when the current cycle (or the trial) ends. */
  cancelAtCycleEnd?: boolean;
  /** An update with schedule_change_at cycle_end: the plan the next cycle (the first charge, in a trial) bills. */
  scheduledPlan?: { id: string; planAmount: number; unit: PeriodUnit; count: number } | null;
}

const bounds = (si: SubInternal, cycle: number) => ({
  start: unix(addUnits(new Date(si.anchor * 1000), si.unit, si.count * cycle)),
  end: unix(addUnits(new Date(si.anchor * 1000), si.unit, si.count * (cycle + 1))),
});

/** Internal billing state for a subscription just created through the API (before authorisation). */
export function initialInternal(plan: SandboxObject, addonsTotal: number): SubInternal {
  return {
    instrument: null,
    attempts: 0,
    unit: RAZORPAY_PERIOD_UNIT[plan.data.period] ?? 'month',
    count: Number(plan.data.interval ?? 1),
    anchor: 0,
    cycle: 0,
    planAmount: Number(plan.data.item.amount),
    currency: plan.data.item.currency,
    pendingAddons: addonsTotal,
    openInvoice: null,
  };
}

export interface ChargeOutcome {
  failure: string | null;
  payment: SandboxObject;
  events: string[];
}

/**
 * Charges the current cycle at `at`: its invoice (a new one, or `invoice` for a retry) and a payment, then
 * subscription.charged (and .completed after the last of total_count), or subscription.pending / .halted (hard
 * declines). `auth_attempts` counts the charge attempts of the current cycle.
 */
function chargeCycle(
  em: Persister,
  sub: SandboxObject,
  failure: string | null,
  at: Date,
  retried?: SandboxObject,
): ChargeOutcome {
  const si = sub.internal as SubInternal;
  const account = accountOf(sub);
  const atS = unix(at);
  const invoice =
    retried ??
    createObject(em, account, 'invoice', {
      id: gid('inv_', 14),
      entity: 'invoice',
      type: 'invoice',
      subscription_id: sub.id,
      customer_id: sub.data.customer_id,
      status: 'issued',
      amount: si.planAmount + si.pendingAddons,
      amount_paid: 0,
      amount_due: si.planAmount + si.pendingAddons,
      currency: si.currency,
      billing_start: sub.data.current_start,
      billing_end: sub.data.current_end,
      payment_id: null,
      paid_at: null,
      issued_at: atS,
      created_at: atS,
    });
  const payment = createPayment(em, account, {
    amount: Number(invoice.data.amount),
    currency: si.currency,
    notes: sub.data.notes ?? {},
    instrument: si.instrument!,
    failure,
    invoiceId: invoice.id,
    subscriptionId: sub.id,
    at,
  });
  // Sandbox convention: payment_id names the latest attempt, paid or failed (reconciliation reads its error).
  patch(invoice, {
    payment_id: payment.id,
    status: failure ? 'issued' : 'paid',
    amount_paid: failure ? 0 : invoice.data.amount,
    amount_due: failure ? invoice.data.amount : 0,
    paid_at: failure ? null : atS,
  });
  const authAttempts = retried ? Number(sub.data.auth_attempts ?? 0) + 1 : 1;
  // The add-ons are on this invoice now, paid or open: no later cycle carries them again.
  patch(sub, { auth_attempts: authAttempts }, { pendingAddons: 0, openInvoice: failure ? invoice.id : null });
  if (failure) {
    const halted = HARD_DECLINES.has(failure);
    patch(sub, { status: halted ? 'halted' : 'pending' });
    if (halted) sub.dueAt = null;
    // Authentication asked for: the invoice's short_url is the page where the customer authenticates the debit,
    // and the event carries the invoice (a sandbox convention: Razorpay notifies the customer itself).
    const authenticate = failure === AUTHENTICATION_REQUIRED;
    if (authenticate)
      patch(invoice, { short_url: `${pageBase(String(sub.data.short_url ?? ''))}/authenticate/${invoice.id}` });
    return {
      failure,
      payment,
      events: [
        queueRazorpayEvent(
          em,
          account.accountKey,
          halted ? 'subscription.halted' : 'subscription.pending',
          { subscription: sub.data, payment: payment.data, ...(authenticate ? { invoice: invoice.data } : {}) },
          at,
        ),
      ],
    };
  }
  const paidCount = Number(sub.data.paid_count) + 1;
  const remaining = Math.max(0, Number(sub.data.total_count) - paidCount);
  patch(sub, { status: 'active', paid_count: paidCount, remaining_count: remaining });
  const events = [
    queueRazorpayEvent(
      em,
      account.accountKey,
      'subscription.charged',
      { subscription: sub.data, payment: payment.data },
      at,
    ),
  ];
  if (remaining === 0) {
    // Razorpay completes a subscription once total_count cycles are paid; it stays usable until the period ends.
    patch(sub, { status: 'completed', ended_at: sub.data.current_end });
    sub.dueAt = null;
    events.push(queueRazorpayEvent(em, account.accountKey, 'subscription.completed', { subscription: sub.data }, at));
  }
  return { failure: null, payment, events };
}

/** The mandate was authorised at the hosted page at `now` (the account's time): a trial waits, otherwise cycle 1 is charged now. */
export function authorizeRazorpaySubscription(
  em: EntityManager,
  sub: SandboxObject,
  instrument: Instrument,
  now: Date,
): string[] {
  const account = accountOf(sub);
  const nowS = unix(now);
  // start_at was fixed against wall time at creation; the trial it encodes runs from the account clock's now.
  const trialSeconds = Number(sub.internal.trialSeconds ?? 0);
  const startAt = trialSeconds > 0 ? nowS + trialSeconds : null;
  const si = { ...(sub.internal as SubInternal), instrument, anchor: startAt ?? nowS, cycle: 0 };
  sub.internal = si;
  const period = bounds(si, 0);
  const customerId = sub.data.customer_id ?? gid('cust_', 14);
  const authPayment = createPayment(em, account, {
    amount: 0,
    currency: si.currency,
    notes: sub.data.notes ?? {},
    instrument,
    failure: null,
    description: 'Mandate authorisation',
    subscriptionId: sub.id,
    at: now,
  });
  patch(sub, {
    status: startAt ? 'authenticated' : 'active',
    customer_id: customerId,
    payment_method: instrument.method,
    auth_attempts: 0,
    current_start: startAt ? null : period.start,
    current_end: startAt ? null : period.end,
    start_at: startAt ?? nowS,
    charge_at: startAt ?? period.end,
  });
  sub.dueAt = new Date((startAt ?? period.end) * 1000);
  const events = [
    queueRazorpayEvent(
      em,
      account.accountKey,
      'subscription.authenticated',
      { subscription: sub.data, payment: authPayment.data },
      now,
    ),
  ];
  if (!startAt) events.push(...chargeCycle(em, sub, null, now).events);
  return events;
}

/** A due cycle at `at` (its due time on the account's clock): cancel at cycle end, skip while paused, otherwise advance and charge by the card rules. */
export function renewRazorpaySubscription(em: Persister, sub: SandboxObject, at: Date): string[] {
  const si = sub.internal as SubInternal;
  const account = accountOf(sub);
  if (si.cancelAtCycleEnd) {
    patch(sub, { status: 'cancelled', ended_at: unix(at) });
    sub.dueAt = null;
    return [queueRazorpayEvent(em, account.accountKey, 'subscription.cancelled', { subscription: sub.data }, at)];
  }
  const first = sub.data.status === 'authenticated';
  if (si.scheduledPlan) applyScheduledPlan(sub, first);
  const next = sub.internal as SubInternal;
  const cycle = first ? 0 : next.cycle + 1;
  const b = bounds(next, cycle);
  patch(sub, { current_start: b.start, current_end: b.end, charge_at: b.end }, { cycle });
  sub.dueAt = new Date(b.end * 1000);
  if (sub.data.status === 'paused') return [];
  const attempts = si.attempts + 1;
  patch(sub, {}, { attempts });
  const failure = laterDebitFailure(si.instrument!, attempts, {
    currency: si.currency,
    amount: si.planAmount + si.pendingAddons,
    limit: sub.data.notes?.mandate_afa_limit,
    validUntil: sub.data.notes?.mandate_valid_until,
    at: Math.floor(at.getTime() / 1000),
  });
  return chargeCycle(em, sub, failure, at).events;
}

/** Retries the failed cycle of a pending (or halted) subscription at `at`; null: nothing to retry. */
export async function retryRazorpayCharge(
  em: EntityManager,
  sub: SandboxObject,
  at: Date,
  authenticated = false,
): Promise<ChargeOutcome | null> {
  const si = sub.internal as SubInternal;
  if ((sub.data.status !== 'pending' && sub.data.status !== 'halted') || !si.openInvoice) return null;
  const invoice = await findObject(em, accountOf(sub), 'invoice', si.openInvoice, true);
  if (!invoice || invoice.data.status !== 'issued') return null;
  const attempts = si.attempts + 1;
  patch(sub, {}, { attempts });
  if (sub.dueAt == null && sub.data.current_end) sub.dueAt = new Date(Number(sub.data.current_end) * 1000);
  // Off the customer's session a debit above the limit needs authentication again; the authentication page pays it.
  const failure = laterDebitFailure(si.instrument!, attempts, {
    currency: si.currency,
    amount: Number(invoice.data.amount),
    limit: sub.data.notes?.mandate_afa_limit,
    validUntil: sub.data.notes?.mandate_valid_until,
    at: Math.floor(at.getTime() / 1000),
    onSession: authenticated,
  });
  return chargeCycle(em, sub, failure, at, invoice);
}

/**
 * A new plan (PATCH plan_id, applied now). The same cadence keeps the cycle (the new amount is charged from the next
 * one); another cadence starts a new cycle at `now` when the subscription is running, or from start_at in a trial.
 * Nothing is charged here: the service bills its own proration.
 */
export function changeRazorpayPlan(sub: SandboxObject, plan: SandboxObject, now: Date): void {
  const si = sub.internal as SubInternal;
  const next = initialInternal(plan, 0);
  const sameCadence = next.unit === si.unit && next.count === si.count;
  const changes: Partial<SubInternal> = { planAmount: next.planAmount, unit: next.unit, count: next.count };
  const data: Record<string, unknown> = { plan_id: plan.id };
  if (!sameCadence && sub.data.current_start != null && sub.data.status !== 'authenticated') {
    Object.assign(changes, { anchor: unix(now), cycle: 0 });
    const b = bounds({ ...si, ...changes } as SubInternal, 0);
    Object.assign(data, { current_start: b.start, current_end: b.end, charge_at: b.end });
    if (sub.dueAt) sub.dueAt = new Date(b.end * 1000);
  }
  patch(sub, data, changes);
}

/**
 * An update scheduled for the cycle's end (PATCH plan_id with schedule_change_at cycle_end): nothing changes now; the
 * next cycle (the first charge, in a trial) bills the new plan, a new cadence counting its cycles from there. A later
 * one replaces it; cancel_scheduled_changes drops it.
 */
export function scheduleRazorpayPlan(sub: SandboxObject, plan: SandboxObject): void {
  const next = initialInternal(plan, 0);
  patch(
    sub,
    { has_scheduled_changes: true, change_scheduled_at: sub.data.current_end ?? sub.data.charge_at },
    { scheduledPlan: { id: plan.id, planAmount: next.planAmount, unit: next.unit, count: next.count } },
  );
}

/** Razorpay applies a scheduled update as the cycle ends, before it charges the next one. */
function applyScheduledPlan(sub: SandboxObject, first: boolean): void {
  const si = sub.internal as SubInternal;
  const plan = si.scheduledPlan!;
  const changes: Partial<SubInternal> = {
    planAmount: plan.planAmount,
    unit: plan.unit,
    count: plan.count,
    scheduledPlan: null,
  };
  if (!first && (plan.unit !== si.unit || plan.count !== si.count)) {
    // The new cadence's cycles start where the last one ended (the renewal charges cycle + 1 = 0).
    Object.assign(changes, { anchor: Number(sub.data.current_end), cycle: -1 });
  }
  patch(sub, { plan_id: plan.id, has_scheduled_changes: false, change_scheduled_at: null }, changes);
}

/** POST /subscriptions/:id/cancel_scheduled_changes: drops a scheduled update or a cancellation at the cycle's end. */
export function cancelRazorpayScheduledChanges(sub: SandboxObject): void {
  patch(
    sub,
    { has_scheduled_changes: false, change_scheduled_at: null, cancel_at_cycle_end: false },
    { scheduledPlan: null, cancelAtCycleEnd: false },
  );
}

/**
 * POST /subscriptions/:id/addons: a one-off item for the subscription's next cycle. Razorpay charges nothing now; the
 * add-on joins the next cycle's invoice (pendingAddons) and is charged with it.
 */
export function addRazorpayAddon(
  em: EntityManager,
  sub: SandboxObject,
  item: { name: string; amount: number; currency: string; description?: string | null },
  quantity: number,
  now: Date,
): SandboxObject {
  const si = sub.internal as SubInternal;
  const addon = createObject(em, accountOf(sub), 'addon', {
    id: gid('ao_', 14),
    entity: 'addon',
    item: {
      id: gid('item_', 14),
      active: true,
      name: item.name,
      description: item.description ?? null,
      amount: item.amount,
      unit_amount: item.amount,
      currency: item.currency,
      type: 'addon',
      unit: null,
      tax_inclusive: false,
      created_at: unix(now),
    },
    quantity,
    created_at: unix(now),
    subscription_id: sub.id,
    invoice_id: null,
  });
  patch(sub, {}, { pendingAddons: si.pendingAddons + item.amount * quantity });
  return addon;
}

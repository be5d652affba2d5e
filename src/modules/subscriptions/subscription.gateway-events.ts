import type { EntityManager } from '@mikro-orm/postgresql';
import { addDays } from 'date-fns';
import { v7 as uuidv7, validate as isUuid } from 'uuid';
import { DomainError } from '../../core/errors';
import { logger } from '../../core/logger';
import { AUTHENTICATION_REQUIRED, type GatewayEvent } from '../../gateways/port';
import { currentMerchantOf } from '../merchants';
import type { ProviderConnection } from '../providers';
import { TrialEndAction } from '../catalog';
import { BillingReason, Invoice, InvoiceStatus, InvoiceType } from '../invoices';
import { payInvoiceByCollection, Payment, PaymentBillingReason, recordCollection, reserveRefund } from '../payments';
import { billPeriod, commandInFlight, SubscriptionChange } from './subscription.lifecycle';
import { periodOf, taxOf } from './subscription.terms';
import { BillingSubscription, GatewayAddon, ScheduledAction } from './subscription.entities';
import { recordEventAndLockSubscription } from './subscription.store';
import { endGatewayDiscountIfOver } from './subscription.discount';
import { SubscriptionStatus, TERMINAL, transitionFor } from './subscription.machine';
import type { SubscriptionService } from './subscription.service';
import { recordMandateAttempt } from '../analytics';
import { SubscriptionCommand } from './subscription.command-names';
import { announceRetry } from './pre-debit';
import { ObservedState, settlePending } from './subscription.pending';
import { GatewayCommand } from '../gateway-commands';
import { billFinalUsage } from './usage.billing';
import { applyScheduledChange } from './scheduled-change';
import { endMandate, mandateAuthorized } from './mandate-record';

const S = SubscriptionStatus;

/** Commands whose gateway call schedules, drops or overtakes a scheduled change: a renewal waits for them. */
const TOUCHES_SCHEDULE = new Set(['schedule_change', 'remove_scheduled_change', 'cancel', 'change_plan']);

/**
 * A renewal (or a trial's first charge) reported while a command that schedules or drops a change is at the gateway
 * cannot know yet which plan the gateway charged: the event is refused (the gateway delivers it again), and applied
 * once the command has written its outcome.
 */
function renewalMustWait(sub: BillingSubscription): boolean {
  const inFlight = commandInFlight(sub);
  if (!inFlight || !TOUCHES_SCHEDULE.has(inFlight)) return false;
  return inFlight === 'schedule_change' || !!sub.scheduledChangeData;
}

/** The `pending_command` the scheduler holds while it ends an abandoned checkout at the gateway. */
export const CHECKOUT_EXPIRY_CLAIM = 'checkout_expiry';

/** Declines that end dunning at once (docs/subscriptions.md). */
export const HARD_DECLINES = new Set([
  'stolen_card',
  'lost_card',
  'mandate_revoked',
  'mandate_expired',
  'account_closed',
]);

/** Days after the failed charge at which the dunning retries run (docs/subscriptions.md: 1, 3 and 5 days). */
export const RETRY_DAYS = [1, 3, 5];

/** The day of retry `n` (1-based) after the failure; beyond the schedule, two days apart. */
export function retryDay(n: number): number {
  return n <= RETRY_DAYS.length ? RETRY_DAYS[n - 1] : RETRY_DAYS[RETRY_DAYS.length - 1] + 2 * (n - RETRY_DAYS.length);
}

/**
 * Applies a verified gateway event about a subscription once (the (provider, event id) row is the guard), in one
 * transaction under the connection's tenant; the gateway calls it leads to run after the commit. False: a repeat.
 * The transaction's first statement records the event, reads the merchant's clock and locks the subscription with
 * its merchant and customer (subscription.store.ts recordEventAndLockSubscription): a renewal's whole transaction is
 * that, the invoice and subscription writes, the notice, and the invoice numbering sent with the commit.
 */
export async function receiveSubscriptionEvent(
  service: SubscriptionService,
  em: EntityManager,
  connection: ProviderConnection,
  event: GatewayEvent,
): Promise<boolean> {
  const tenant = { merchantId: connection.merchantId, mode: connection.mode };
  const follow = await em.transactional(async (tx) => {
    const found = await recordEventAndLockSubscription(
      tx,
      tenant,
      {
        provider: connection.provider,
        eventId: event.eventId,
        type: event.rawType,
        connectionId: connection.id,
        payload: event.raw,
      },
      {
        id: event.subscriptionId && isUuid(event.subscriptionId) ? event.subscriptionId : null,
        providerSubscriptionId: event.providerSubscriptionId ?? null,
        checkoutSessionId: event.checkoutSessionId ?? null,
      },
    );
    if (!found.fresh) return null;
    if (!found.sub) return [];
    // The invoice a charge issues takes its parties from this read rather than reading them again.
    if (found.merchant && found.customer) service.invoices.partiesRead(tx, found.merchant, found.customer);
    // Merchant time as Clock.now has it: the wall clock plus the test clock's offset.
    return applySubscriptionEvent(
      service,
      tx,
      connection,
      event,
      new Date(Date.now() + found.clockOffsetMs),
      found.sub,
    );
  });
  if (!follow) return false;
  for (const f of follow) await f();
  return true;
}

/**
 * Applies a verified subscription event of a gateway to its subscription `sub` (locked, and the event recorded once
 * per gateway event id, by the caller in the same transaction `em` runs). Events may repeat or come out of order: a
 * move the table does not allow from the current state is ignored, and a charge for a period already billed changes
 * nothing. Answers the follow-up gateway calls to make after the commit.
 */
export async function applySubscriptionEvent(
  service: SubscriptionService,
  em: EntityManager,
  connection: ProviderConnection,
  event: GatewayEvent,
  /** Merchant time. */
  now: Date,
  sub: BillingSubscription,
): Promise<(() => Promise<void>)[]> {
  // A mandate checkout's outcome is an autopay attempt (analytics), recorded with the change it causes (none for a
  // declined try on a checkout that stays open: the checkout counts as failed until a try succeeds).
  await recordMandateAttempt(em, sub, event, now);
  if (!sub.providerSubscriptionId && event.providerSubscriptionId)
    sub.providerSubscriptionId = event.providerSubscriptionId;
  if (!sub.providerCustomerId && event.providerCustomerId) sub.providerCustomerId = event.providerCustomerId;
  const change = service.change(em, sub);
  if (
    TERMINAL.has(sub.status) &&
    (event.kind === 'subscription.authorized' || event.kind === 'subscription.charged') &&
    sub.providerSubscriptionId
  ) {
    // A checkout completed after the subscription was cancelled here (its hosted page was still open): the gateway
    // must not go on charging a subscription that has ended.
    change.gatewayCommand(
      SubscriptionCommand.CANCEL,
      'End a mandate authorised after the subscription was cancelled',
      { at_period_end: false },
      `cancel-late-mandate-${sub.id}`,
    );
  }
  // The gateway's own report of a command that went unanswered: it happened (subscription.pending.ts).
  const observed = OBSERVED[event.kind];
  if (sub.pendingOutcome && observed && settlePending(change, observed, now, false)) {
    await change.save();
    return change.followUps;
  }
  if (
    (event.kind === 'subscription.charged' || event.kind === 'subscription.charge_failed') &&
    (sub.status === S.ACTIVE || sub.status === S.TRIALING) &&
    renewalMustWait(sub)
  ) {
    // Which plan this renewal charged is known once the command at the gateway has written its outcome: the event
    // is refused (nothing recorded) and applied when the gateway delivers it again.
    throw new Error(`subscription ${sub.id}: a scheduled plan change is being changed at the gateway; retry the event`);
  }
  switch (event.kind) {
    case 'subscription.authorized':
      authorize(change, event, now);
      break;
    case 'subscription.charged':
      if (sub.status === S.CREATED) authorize(change, event, now);
      await charged(service, change, event, now);
      break;
    case 'subscription.charge_failed':
      if (sub.status === S.CREATED) authorize(change, event, now);
      await chargeFailed(service, change, event, now);
      break;
    case 'subscription.cancelled':
      await cancelledAtGateway(service, change, event, now);
      break;
    case 'subscription.mandate_setup':
      replaceMandate(change, event, now);
      break;
    case 'subscription.mandate_revoked':
      endMandate(change, now, 'webhook');
      break;
    case 'subscription.collection_paid':
      await collectionPaid(service, change, event, now);
      break;
    case 'subscription.authorization_failed':
      // A declined attempt: the checkout stays open for another (or, at Razorpay, a renewal's failed payment, which
      // subscription.pending / .halted report too). Nothing changes.
      break;
    default:
      // paused / resumed echo Cadence's own commands; completed is the scheduler's at the period's end.
      break;
  }
  await change.save();
  return change.followUps;
}

/**
 * The customer authorised a new mandate on its setup page (createMandateSetup): recorded as
 * `subscription.mandate_updated`, and the gateway told to charge it from now on by a durable command. A subscription
 * that ended meanwhile keeps nothing of it.
 */
function replaceMandate(change: SubscriptionChange, event: GatewayEvent, now: Date): void {
  const sub = change.sub;
  if (!event.setupId || !sub.providerSubscriptionId || !transitionFor(sub.status, 'replace_mandate')) return;
  mandateAuthorized(sub, event, now); // before the move: its event carries the subscription as it is now
  change.move('replace_mandate', 'webhook', { checkout_session_id: event.checkoutSessionId ?? null });
  change.gatewayCommand(
    SubscriptionCommand.APPLY_MANDATE,
    'Charge the newly authorised mandate from now on',
    { provider_subscription_id: sub.providerSubscriptionId, setup_id: event.setupId },
    `mandate-${event.setupId}`,
  );
}

/**
 * The gateway was paid a one-off invoice of the subscription that Cadence asked it to collect (collect_invoice): the
 * Cadence invoice it names is paid, with the payment that collected it, once (a repeat, or the command recording the
 * same charge first, finds it paid). That is how a collection above the mandate's limit is settled after the customer
 * authenticated it. The subscription's state is not the collection's: it stays as it is.
 */
async function collectionPaid(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const { sub, em } = change;
  if (!event.invoiceId || !isUuid(event.invoiceId)) return;
  const invoice = await em.findOne(Invoice, { id: event.invoiceId, subscriptionId: sub.id });
  if (invoice?.status !== InvoiceStatus.OPEN) return;
  await payInvoiceByCollection(service.invoices, em, invoice.id, now, {
    sub,
    providerPaymentId: event.providerPaymentId ?? null,
    reason: PaymentBillingReason.SUBSCRIPTION_UPDATE,
    method: event.method ?? null,
  });
}

/** The mandate was authorised: a trial starts, or the subscription is active and its first period begins. */
function authorize(change: SubscriptionChange, event: GatewayEvent, now: Date): void {
  const sub = change.sub;
  if (sub.status !== S.CREATED) return;
  mandateAuthorized(sub, event, now);
  // The checkout completed: nothing is left to expire.
  if (sub.nextAction === ScheduledAction.CHECKOUT_EXPIRY) change.schedule(null);
  const method = event.method ? { method: event.method } : {};
  if (sub.trialPeriodDays > 0) {
    change.move('mandate_authorized_with_trial', 'webhook', method);
    sub.trialEnd = event.trialEnd ?? addDays(now, sub.trialPeriodDays);
    // The gateway counts the trial to the second from its own clock (days of 86,400 s): its start is its end less the
    // trial days, so trial_end - trial_start is exactly the plan's trial length.
    sub.trialStart = event.trialEnd ? new Date(event.trialEnd.getTime() - sub.trialPeriodDays * 86_400_000) : now;
    sub.currentPeriodStart = sub.trialStart;
    sub.currentPeriodEnd = sub.trialEnd;
    if (sub.trialEndAction === TrialEndAction.CANCEL_SUBSCRIPTION) {
      // The gateway must not charge at the trial's end; the scheduler ends the subscription then.
      change.schedule(ScheduledAction.TRIAL_END_CANCEL, sub.trialEnd);
      change.gatewayCommand(
        SubscriptionCommand.CANCEL,
        'End at the trial end: no charge then (trial_end_action cancel_subscription)',
        { at_period_end: true },
        `trial-end-cancel-${sub.id}`,
      );
    }
    return;
  }
  change.move('mandate_authorized', 'webhook', method);
  // The first period runs from now until the first charge reports the gateway's own bounds.
  sub.billingAnchor = event.periodStart ?? now;
  sub.anchorCycle = 0;
  const p =
    event.periodStart && event.periodEnd
      ? { start: event.periodStart, end: event.periodEnd }
      : periodOf(sub, sub.billingAnchor, 0);
  sub.currentPeriodStart = p.start;
  sub.currentPeriodEnd = p.end;
}

/** The charged period: the gateway's bounds when the event carries them, else the one after the current period. */
function chargedPeriod(sub: BillingSubscription, event: GatewayEvent, now: Date): { start: Date; end: Date } {
  if (event.periodStart && event.periodEnd) return { start: event.periodStart, end: event.periodEnd };
  if (sub.cyclesCompleted === 0) {
    const anchor = sub.status === S.TRIALING ? (sub.trialEnd ?? now) : (sub.billingAnchor ?? now);
    return periodOf(sub, anchor, 0);
  }
  return periodOf(sub, sub.billingAnchor ?? now, sub.anchorCycle + 1);
}

/** Adopts a charged period's bounds as the subscription's, keeping the anchor arithmetic in step. */
function enterPeriod(sub: BillingSubscription, p: { start: Date; end: Date }): void {
  if (!sub.billingAnchor || sub.cyclesCompleted === 0) {
    sub.billingAnchor = p.start;
    sub.anchorCycle = 0;
  } else {
    sub.anchorCycle += 1;
  }
}

/** A period was already billed when the charge reports one that does not start after the current one. */
function alreadyBilled(sub: BillingSubscription, p: { start: Date }): boolean {
  return sub.cyclesCompleted > 0 && !!sub.currentPeriodStart && p.start.getTime() <= sub.currentPeriodStart.getTime();
}

/** A charge succeeded: a renewal, the first charge, the trial's end, or a dunning retry. */
async function charged(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const sub = change.sub;
  if (sub.status === S.PAST_DUE) {
    // A retry paid the open invoice: no new period, no new invoice.
    change.move('charge_succeeded', 'webhook', { retry_attempt: sub.retryAttempt });
    if (sub.openInvoiceId) {
      const paid = await paidByCharge(
        service,
        change,
        sub.openInvoiceId,
        event,
        now,
        PaymentBillingReason.SUBSCRIPTION_RETRY,
      );
      returnCredit(change, service, paid, event);
      // Add-ons the failed charge carried were charged again with it.
      await settleAddons(service, change, carriedBy(sub, sub.openInvoiceId), { paidBy: event, at: now });
    }
    sub.openInvoiceId = null;
    sub.retryAttempt = 0;
    sub.pastDueSince = null;
    scheduleAfterBilling(change);
    return;
  }
  if (!transitionFor(sub.status, 'charge_succeeded') && sub.status !== S.ACTIVE) {
    // Halted or ended: the gateway should have charged nothing. Paused: a late event of a period already billed.
    if (STRAY.has(sub.status)) await strayCharge(service, change, event, now);
    return;
  }
  const p = chargedPeriod(sub, event, now);
  if (alreadyBilled(sub, p)) return;
  // A change scheduled for this period's start: the gateway charged the new plan (scheduled-change.ts).
  await applyScheduledChange(change, p);
  if (sub.status === S.TRIALING)
    change.move('charge_succeeded', 'webhook', event.method ? { method: event.method } : {});
  enterPeriod(sub, p);
  // The charge is a payment the invoice names from its insert (no second write of the invoice).
  const paymentId = uuidv7();
  const invoice = await billPeriod(change, service, { start: p.start, end: p.end, paid: true, at: now, paymentId });
  collected(
    change,
    invoice,
    event,
    invoice.billingReason === BillingReason.SUBSCRIPTION_CREATE
      ? PaymentBillingReason.SUBSCRIPTION_CREATE
      : PaymentBillingReason.SUBSCRIPTION_CYCLE,
    paymentId,
  );
  endGatewayDiscountIfOver(change);
  returnCredit(change, service, invoice, event);
  await settleAddons(service, change, addonsCharged(sub, event, invoice), { paidBy: event, at: now });
  scheduleAfterBilling(change);
}

/** What a gateway event shows of a subscription, for settling a command that went unanswered. */
const OBSERVED: Partial<Record<GatewayEvent['kind'], ObservedState>> = {
  'subscription.paused': { status: 'paused', cancelAtPeriodEnd: false },
  'subscription.resumed': { status: 'active', cancelAtPeriodEnd: false },
  'subscription.cancelled': { status: 'cancelled', cancelAtPeriodEnd: false },
};

/** States in which a charge the gateway reports was never asked for: it is recorded and refunded at once. */
const STRAY: ReadonlySet<SubscriptionStatus> = new Set([S.HALTED, S.CANCELLED, S.COMPLETED]);

/**
 * No charge is dropped: the gateway charged a subscription that is halted, cancelled or completed (its collection was
 * being stopped, or a late renewal). The charge is recorded as it happened (a paid invoice for the period it names and
 * the payment that invoice names) and refunded in full at once (a durable refund command, whose success issues the
 * credit note against that invoice); a halted subscription's collection is stopped again. Once per gateway payment
 * (a webhook and a reconciliation pass may both report it); a period already billed is a late event, not a new charge.
 */
async function strayCharge(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const { sub, em } = change;
  const p = chargedPeriod(sub, event, now);
  if (alreadyBilled(sub, p)) return;
  if (!event.providerPaymentId) {
    logger.error(
      { subscription_id: sub.id, event_id: event.eventId },
      'a charge after the subscription ended names no gateway payment: not recorded',
    );
    return;
  }
  if ((await em.count(Payment, { providerPaymentId: event.providerPaymentId })) > 0) return;
  const paymentId = uuidv7();
  const invoice = await service.invoices.issue(em, {
    type: InvoiceType.INVOICE,
    billingReason: BillingReason.SUBSCRIPTION_CYCLE,
    status: InvoiceStatus.PAID,
    customerId: sub.customerId,
    subscriptionId: sub.id,
    paymentId,
    currency: sub.currency,
    lines: [
      {
        description: `Subscription: charged by ${sub.provider} after the subscription was ${sub.status} (refunded)`,
        quantity: 1,
        unitAmount: sub.amount,
        amount: sub.amount,
        periodStart: p.start,
        periodEnd: p.end,
      },
    ],
    periodStart: p.start,
    periodEnd: p.end,
    issuedAt: now,
    paidAt: now,
    tax: taxOf(sub),
  });
  if (event.amount != null && event.amount !== invoice.total) {
    logger.warn(
      { subscription_id: sub.id, charged: event.amount, invoiced: invoice.total },
      'a charge after the subscription ended differs from its invoice; the whole invoice is refunded',
    );
  }
  const payment = recordCollection(em, {
    id: paymentId,
    invoice,
    sub,
    providerPaymentId: event.providerPaymentId,
    reason: PaymentBillingReason.SUBSCRIPTION_CYCLE,
    method: event.method ?? null,
  });
  const { command } = reserveRefund(em, service.commands, payment, {
    amount: payment.amountTotal,
    reason: `charged after the subscription was ${sub.status}`,
  });
  change.runAfterCommit(command.id);
  if (sub.status === S.HALTED && sub.providerSubscriptionId) {
    change.gatewayCommand(
      SubscriptionCommand.STOP_COLLECTION,
      'Stop collection: the gateway charged a halted subscription',
      {},
      `stop-collection-${sub.id}-${event.providerPaymentId}`,
    );
  }
}

/**
 * The Razorpay add-ons (plan change adjustments, change-plan.ts) a period's charge carried: the gateway charges the
 * period's amount (the invoice's total) plus every add-on made before the charge, so what it took beyond the total is
 * theirs. The waiting add-ons whose amounts make up that excess exactly, the oldest preferred (an add-on recorded but
 * made at the gateway only after this charge waits for the next one); none when no set of them does. All of them when
 * the event does not say the amount.
 */
export function addonsCharged(
  sub: Pick<BillingSubscription, 'gatewayAddons'>,
  event: Pick<GatewayEvent, 'amount'>,
  invoice: Pick<Invoice, 'total'>,
): GatewayAddon[] {
  const waiting = sub.gatewayAddons.filter((a) => a.chargeInvoiceId === null);
  if (!waiting.length) return [];
  if (event.amount == null) return waiting;
  // A handful at most in practice; the search is bounded all the same.
  const candidates = waiting.slice(0, 16);
  const pick = (i: number, left: number): GatewayAddon[] | null => {
    if (left === 0) return [];
    if (left < 0 || i >= candidates.length) return null;
    const taken = pick(i + 1, left - candidates[i].amount);
    return taken ? [candidates[i], ...taken] : pick(i + 1, left);
  };
  const excess = event.amount - invoice.total;
  return excess > 0 ? (pick(0, excess) ?? []) : [];
}

/** The add-ons a failed charge carried (its period invoice is `invoiceId`): they follow that invoice's dunning. */
function carriedBy(sub: BillingSubscription, invoiceId: string): GatewayAddon[] {
  return sub.gatewayAddons.filter((a) => a.chargeInvoiceId === invoiceId);
}

/**
 * Settles the adjustment invoices of add-ons a charge carried, in the transaction that applies the charge, and drops
 * them from the subscription (so each is settled once): paid by the charge `paidBy` (amount_paid = the amount due the
 * add-on charged; each invoice names its own payment, its share of that gateway payment, refundable on its own),
 * `uncollectible` (dunning gave up), or carried by a failed charge whose open period invoice is `carriedBy` (they stay
 * open and follow its dunning).
 */
async function settleAddons(
  service: SubscriptionService,
  change: SubscriptionChange,
  addons: GatewayAddon[],
  outcome: { paidBy: GatewayEvent; at: Date } | { carriedBy: string } | 'uncollectible',
): Promise<void> {
  if (!addons.length) return;
  const sub = change.sub;
  const ids = new Set(addons.map((a) => a.invoiceId));
  if (typeof outcome === 'object' && 'carriedBy' in outcome) {
    sub.gatewayAddons = sub.gatewayAddons.map((a) =>
      ids.has(a.invoiceId) ? { ...a, chargeInvoiceId: outcome.carriedBy } : a,
    );
    return;
  }
  for (const a of addons) {
    try {
      if (outcome === 'uncollectible') await service.invoices.markUncollectible(change.em, a.invoiceId);
      else
        await paidByCharge(
          service,
          change,
          a.invoiceId,
          outcome.paidBy,
          outcome.at,
          PaymentBillingReason.SUBSCRIPTION_UPDATE,
        );
    } catch (err) {
      // Settled otherwise meanwhile (voided, say): the charge is still applied; the refusal changed nothing.
      if (!(err instanceof DomainError)) throw err;
      logger.warn(
        { err, subscription_id: sub.id, invoice_id: a.invoiceId },
        'adjustment invoice not settled with the charge that carried its add-on',
      );
    }
  }
  sub.gatewayAddons = sub.gatewayAddons.filter((a) => !ids.has(a.invoiceId));
}

/** An open invoice paid by a gateway charge, with the payment that records what the customer paid on it. */
function paidByCharge(
  service: SubscriptionService,
  change: SubscriptionChange,
  invoiceId: string,
  event: GatewayEvent,
  at: Date,
  reason: PaymentBillingReason,
): Promise<Invoice> {
  return payInvoiceByCollection(service.invoices, change.em, invoiceId, at, {
    sub: change.sub,
    providerPaymentId: event.providerPaymentId ?? null,
    reason,
    method: event.method ?? null,
  });
}

/**
 * Every collection is a payment: the charge that paid `invoice` is recorded as one, named by the invoice (nothing when
 * the customer paid nothing on it, or a payment already names it).
 */
function collected(
  change: SubscriptionChange,
  invoice: Invoice,
  event: GatewayEvent,
  reason: PaymentBillingReason,
  id?: string,
): void {
  if (invoice.amountPaid <= 0) {
    // Credit paid all of it: nothing was collected for it.
    if (id && invoice.paymentId === id) invoice.paymentId = null;
    return;
  }
  if (invoice.paymentId && invoice.paymentId !== id) return;
  recordCollection(change.em, {
    id,
    invoice,
    sub: change.sub,
    providerPaymentId: event.providerPaymentId ?? null,
    reason,
    method: event.method ?? null,
  });
}

/**
 * The gateway charged the invoice's whole total, but credit from earlier credit notes paid part of it: that part is
 * refunded on the charge (after the commit, idempotent per invoice), so what the customer paid is `amount_paid`.
 * Refunds work the same at both gateways; neither has a balance both share.
 */
function returnCredit(
  change: SubscriptionChange,
  service: SubscriptionService,
  invoice: Invoice,
  event: GatewayEvent,
): void {
  const providerPaymentId = event.providerPaymentId;
  if (invoice.creditApplied <= 0 || !providerPaymentId) return;
  change.gatewayCommand(
    SubscriptionCommand.REFUND_CREDIT,
    `Refund the credit applied to invoice ${invoice.number}`,
    {
      provider_payment_id: providerPaymentId,
      amount: Math.min(invoice.creditApplied, invoice.total),
      currency: invoice.currency,
      // The gateway is told the invoice, so this refund's event is known as the credit's return (RefundInput).
      send_invoice_id: true,
    },
    `credit-${invoice.id}`,
    invoice.id,
  );
}

/** After a paid period: the end of a max_cycles term, or of a cancellation at period end, is the scheduler's. */
function scheduleAfterBilling(change: SubscriptionChange): void {
  const sub = change.sub;
  if (sub.cancelAtPeriodEnd) {
    change.schedule(ScheduledAction.PERIOD_END_CANCEL, sub.currentPeriodEnd ?? null);
    return;
  }
  if (sub.maxCycles != null && sub.cyclesCompleted >= sub.maxCycles) {
    change.schedule(ScheduledAction.COMPLETE, sub.currentPeriodEnd ?? null);
    // Stripe has no term length: told to stop at this period's end, it never charges another cycle.
    if (sub.provider === 'stripe') {
      change.gatewayCommand(
        SubscriptionCommand.CANCEL,
        'End of term (max_cycles): no charge after this period',
        { at_period_end: true },
        `term-end-${sub.id}`,
      );
    }
    return;
  }
  change.schedule(null);
}

/**
 * A charge failed. From active or trialing: past_due with an open invoice for the period, retries scheduled.
 * From past_due: a failed retry, recorded past_due -> past_due; after the merchant's last retry, halted. A hard
 * decline halts at once.
 */
async function chargeFailed(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const sub = change.sub;
  const reason = event.failureReason ?? 'payment_failed';
  const hard = HARD_DECLINES.has(reason);
  if (sub.status === S.PAST_DUE) {
    const attempt = sub.retryAttempt + 1;
    sub.retryAttempt = attempt;
    change.move('retry_failed', 'webhook', { gateway_decline_reason: reason, retry_attempt: attempt });
    const maxRetries = (await currentMerchantOf(change.em, sub.merchantId)).maxRetries;
    if (hard) return halt(service, change, 'webhook', reason);
    if (attempt >= maxRetries) return halt(service, change, 'scheduler', reason);
    await askAuthentication(service, change, event, now);
    const retryAt = addDays(sub.pastDueSince ?? now, retryDay(attempt + 1));
    change.schedule(ScheduledAction.RETRY, retryAt);
    if (reason !== AUTHENTICATION_REQUIRED) await announceRetry(change, service.invoices, retryAt, now);
    return;
  }
  if (!transitionFor(sub.status, 'charge_failed')) return; // late or repeated
  const p = chargedPeriod(sub, event, now);
  if (alreadyBilled(sub, p)) return;
  await applyScheduledChange(change, p);
  change.move('charge_failed', 'webhook', { gateway_decline_reason: reason, retry_attempt: 0 });
  enterPeriod(sub, p);
  const invoice = await billPeriod(change, service, { start: p.start, end: p.end, paid: false, at: now });
  endGatewayDiscountIfOver(change);
  sub.openInvoiceId = invoice.id;
  await settleAddons(service, change, addonsCharged(sub, event, invoice), { carriedBy: invoice.id });
  sub.retryAttempt = 0;
  sub.pastDueSince = now;
  if (hard) return halt(service, change, 'webhook', reason);
  const maxRetries = (await currentMerchantOf(change.em, sub.merchantId)).maxRetries;
  if (maxRetries <= 0) return halt(service, change, 'scheduler', reason);
  await askAuthentication(service, change, event, now); // only while the customer still can
  const retryAt = addDays(now, retryDay(1));
  change.schedule(ScheduledAction.RETRY, retryAt);
  // A debit that needs the customer's authentication is never made silently: its retries need no notice.
  if (reason !== AUTHENTICATION_REQUIRED) await announceRetry(change, service.invoices, retryAt, now);
}

/**
 * The debit is above the mandate's limit (docs/india.md): the gateway made none and asks the customer to authenticate
 * it on its page. The open invoice keeps that page and the merchant is sent `invoice.payment_action_required`; once
 * the customer authenticates, the gateway charges the invoice and its event settles the subscription like a paid retry.
 */
async function askAuthentication(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const { sub, em } = change;
  if (event.failureReason !== AUTHENTICATION_REQUIRED || !sub.openInvoiceId) return;
  const invoice = await em.findOne(Invoice, { id: sub.openInvoiceId });
  if (invoice) service.invoices.requireAuthentication(em, invoice, event.authenticationUrl ?? null, now, sub.mode);
}

/** Dunning ends: halted, the open invoice uncollectible, nothing more scheduled. */
async function halt(
  service: SubscriptionService,
  change: SubscriptionChange,
  by: 'webhook' | 'scheduler',
  reason: string | null,
): Promise<void> {
  const sub = change.sub;
  change.move('halt', by, { gateway_decline_reason: reason, retry_attempt: sub.retryAttempt });
  if (sub.openInvoiceId) {
    await service.invoices.markUncollectible(change.em, sub.openInvoiceId);
    await settleAddons(service, change, carriedBy(sub, sub.openInvoiceId), 'uncollectible');
  }
  change.schedule(null);
  // The gateway would go on renewing (and charging, or failing) every period: collection stops there, in whatever
  // state the gateway holds the subscription (subscription.commands.ts stop_collection).
  if (sub.providerSubscriptionId) {
    change.gatewayCommand(
      SubscriptionCommand.STOP_COLLECTION,
      'Stop collection: the subscription is halted',
      {},
      `stop-collection-${sub.id}`,
    );
  }
}

/**
 * The gateway ended the subscription: a checkout that failed, or a cancellation made at the gateway. A cancellation
 * at the period's end bills the last period's usage in arrears, as the scheduler does when it gets there first
 * (subscription.scheduler.ts PERIOD_END_CANCEL): whichever path moves the subscription bills it, under the row lock, and
 * the other finds it cancelled. An immediate cancellation or a trial's end bills no usage (usage.billing.ts).
 */
async function cancelledAtGateway(
  service: SubscriptionService,
  change: SubscriptionChange,
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const sub = change.sub;
  // The echo of a cancel command still at its last step (the gateway may report it before the command commits):
  // the command records the cancellation itself, as `api`.
  // Likewise the echo of the scheduler ending an abandoned checkout: it records the cancellation as `scheduler`.
  const inFlight = commandInFlight(sub);
  if (inFlight === 'cancel' || inFlight === CHECKOUT_EXPIRY_CLAIM) return;
  // The end of a max_cycles term, reported by the gateway (Stripe is told to cancel at the last period's end): the
  // scheduler's COMPLETE records it as `completed`, with the last period's usage. Before that end it is a cancellation.
  if (
    sub.nextAction === ScheduledAction.COMPLETE &&
    sub.currentPeriodEnd &&
    now.getTime() >= sub.currentPeriodEnd.getTime()
  )
    return;
  // Halted: the gateway subscription was ended to stop collection (subscription.commands.ts stop_collection); its
  // cancellation is the echo of that command, and the subscription stays halted until the merchant cancels it.
  if (
    sub.status === S.HALTED &&
    (await change.em.count(GatewayCommand, { subscriptionId: sub.id, action: SubscriptionCommand.STOP_COLLECTION })) > 0
  )
    return;
  let periodEnded = false;
  if (sub.status === S.CREATED) {
    change.move(
      'checkout_failed',
      'webhook',
      event.failureReason ? { gateway_decline_reason: event.failureReason } : {},
    );
  } else if (
    sub.cancelAtPeriodEnd &&
    transitionFor(sub.status, sub.status === S.TRIALING ? 'trial_end_cancel' : 'period_end_cancel')
  ) {
    // The gateway reached the period's end before the scheduler did: the same cancellation, reported by the gateway.
    periodEnded = sub.status !== S.TRIALING;
    change.move(periodEnded ? 'period_end_cancel' : 'trial_end_cancel', 'webhook');
  } else if (transitionFor(sub.status, 'cancel')) {
    change.move('cancel', 'webhook');
  } else {
    return;
  }
  sub.cancelledAt = now;
  sub.endedAt = now;
  change.schedule(null);
  if (periodEnded) await billFinalUsage(change, service, now);
}

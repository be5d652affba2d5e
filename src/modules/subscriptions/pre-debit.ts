import { v7 as uuidv7 } from 'uuid';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantEntityManager } from '../../core/context';
import { make, Mode, TenantParams } from '../../core/entity';
import { outboxEvent, OutboxEvent, recordEvent } from '../../core/events';
import { writeEvents } from '../../core/events.store';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import { gstFor } from '../../money';
import { Price, TrialEndAction } from '../catalog';
import { Invoice, type InvoiceService } from '../invoices';
import type { SubscriptionChange } from './subscription.lifecycle';
import type { DueWork } from '../test-clock';
import { discountLine, nextPeriodDiscount } from './subscription.discount';
import { BillingSubscription } from './subscription.entities';
import { SubscriptionStatus } from './subscription.machine';
import { PreDebitKind, PreDebitNotice } from './pre-debit.entities';
import type { SubscriptionService } from './subscription.service';
import { insertNotices, markNoticed, nextNoticeAt, noticesDue } from './subscription.store';
import { taxOf } from './subscription.terms';
import { SubscriptionCommand } from './subscription.command-names';
import { endMandate } from './mandate-record';

/**
 * Pre-debit notices (docs/india.md): before the gateway debits a mandate for a renewal (or the charge at a trial's
 * end), the customer is told what and when by `invoice.upcoming`, sent to the merchant's webhooks with the draft
 * invoice as its object. It goes out PRE_DEBIT_LEAD_HOURS before the debit (at the period's start when the period is
 * shorter), so at least 24 hours ahead; one per subscription and debit (table pre_debit_notices), whichever process
 * sweeps. The test clock sends them in time order within an advance, before the gateway's renewal.
 */
export const PRE_DEBIT_LEAD_HOURS = 48;

/** The least time between a notice and the debit it announces (the RBI's rule). */
export const MIN_NOTICE_HOURS = 24;

/**
 * How far a renewal's notice may fall short of MIN_NOTICE_HOURS before the renewal is held: a sweep's own delay. A
 * period shorter than the lead (a daily plan) is announced at its start, exactly 24 hours ahead, and the sweep that
 * sends it runs moments later; holding such a renewal for those moments would delay every daily debit.
 */
export const NOTICE_SWEEP_TOLERANCE_MS = 5 * 60_000;

const S = SubscriptionStatus;

/** The same rule as subscription.store.ts NOTICE_DUE, on a locked row: a notice is still due for its next debit. */
function noticeDue(sub: BillingSubscription, now: Date): boolean {
  const end = sub.currentPeriodEnd;
  if (!end || !sub.providerSubscriptionId || sub.currency !== 'INR' || sub.cancelAtPeriodEnd) return false;
  if (sub.status !== S.ACTIVE && sub.status !== S.TRIALING) return false;
  if (sub.status === S.TRIALING && sub.trialEndAction === TrialEndAction.CANCEL_SUBSCRIPTION) return false;
  if (sub.maxCycles != null && sub.cyclesCompleted >= sub.maxCycles) return false;
  const start = sub.currentPeriodStart ?? end;
  const at = Math.max(start.getTime(), end.getTime() - PRE_DEBIT_LEAD_HOURS * 3_600_000);
  return at <= now.getTime();
}

/**
 * The invoice the next debit will collect, as REST shows an invoice, not yet issued (status `draft`, no id or number):
 * the plan's amount (a change scheduled for then: the new price's), its coupon's discount, a setup fee not yet billed,
 * GST under the subscription's tax terms, and credit from earlier credit notes taken off `amount_due`.
 */
async function upcomingInvoice(em: EntityManager, sub: BillingSubscription, debitAt: Date) {
  const scheduled = sub.scheduledChangeData;
  const price = scheduled ? await em.findOne(Price, { id: scheduled.priceId }) : null;
  const amount = price?.amount ?? sub.amount;
  const discount = nextPeriodDiscount(sub, amount);
  const lines: { description: string; amount: number }[] = [{ description: 'Subscription', amount }];
  if (discount > 0)
    lines.push({
      description: discountLine(sub, discount, { start: debitAt, end: debitAt }).description,
      amount: -discount,
    });
  if (sub.cyclesCompleted === 0 && sub.setupFee > 0) lines.push({ description: 'Setup fee', amount: sub.setupFee });
  // GST on top of the lines, or contained in them for a tax-inclusive price, as the renewal's invoice will have it.
  const { treatment, rateBps, behavior } = taxOf(sub);
  const heads = gstFor(
    lines.reduce((sum, l) => sum + l.amount, 0),
    behavior ?? 'exclusive',
    treatment,
    rateBps,
  );
  const credit = Math.min(sub.creditBalance, heads.total);
  // Razorpay charges a plan change's add-ons with the renewal: the debit is this invoice's amount due and theirs.
  const carried = sub.gatewayAddons.filter((a) => a.chargeInvoiceId === null);
  return {
    object: 'invoice',
    id: null,
    number: null,
    status: 'draft',
    billing_reason: sub.cyclesCompleted === 0 ? 'subscription_create' : 'subscription_cycle',
    customer_id: sub.customerId,
    subscription_id: sub.id,
    currency: sub.currency,
    subtotal: heads.total - heads.tax,
    cgst_amount: heads.cgst,
    sgst_amount: heads.sgst,
    igst_amount: heads.igst,
    tax_amount: heads.tax,
    total: heads.total,
    credit_applied: credit,
    amount_due: heads.total - credit,
    next_payment_attempt: debitAt.toISOString(),
    debit_amount: heads.total - credit + carried.reduce((sum, a) => sum + a.amount, 0),
    carried_invoice_ids: carried.map((a) => a.invoiceId),
    line_items: lines.map((l) => ({
      description: l.description,
      quantity: 1,
      unit_amount: l.amount,
      amount: l.amount,
    })),
    livemode: sub.mode === Mode.LIVE,
  };
}

/** The notice row and its `invoice.upcoming` event, in the caller's transaction. */
function announce(
  em: EntityManager,
  sub: BillingSubscription,
  n: { kind: PreDebitKind; debitAt: Date; amountDue: number; now: Date },
  object: Record<string, unknown>,
): void {
  noticeRow(em, sub, n);
  recordEvent(em, 'invoice.upcoming', object, sub.mode, n.now);
}

/** The notice row alone (one per subscription and debit instant), in the caller's transaction. */
function noticeRow(
  em: EntityManager,
  sub: BillingSubscription,
  n: { kind: PreDebitKind; debitAt: Date; amountDue: number; now: Date },
): void {
  em.persist(
    make(PreDebitNotice, {
      subscriptionId: sub.id,
      kind: n.kind,
      debitAt: n.debitAt,
      amountDue: n.amountDue,
      currency: sub.currency,
      sentAt: n.now,
    }),
  );
}

/**
 * A dunning retry's notice, written with the change that schedules the retry (its first is 24 hours after the failed
 * renewal, the next ones two days apart): the open invoice as REST shows it, with `next_payment_attempt`. INR only.
 */
export async function announceRetry(
  change: SubscriptionChange,
  invoices: Pick<InvoiceService, 'toRest'>,
  debitAt: Date,
  now: Date,
): Promise<void> {
  const { sub, em } = change;
  if (sub.currency !== 'INR' || !sub.openInvoiceId) return;
  const invoice = await em.findOne(Invoice, { id: sub.openInvoiceId });
  if (!invoice || invoice.amountDue <= 0) return;
  if (await em.count(PreDebitNotice, { subscriptionId: sub.id, debitAt })) return;
  const object = { ...invoices.toRest(invoice), next_payment_attempt: debitAt.toISOString() };
  announce(em, sub, { kind: PreDebitKind.RETRY, debitAt, amountDue: invoice.amountDue, now }, object);
}

/**
 * The notice of an invoice the service collects from the mandate itself (a plan change's adjustment, closed usage),
 * written with the change that issues it: the invoice with `next_payment_attempt` MIN_NOTICE_HOURS after
 * `now` (merchant time), when its collection may be asked for. Answers that time (a second later when another notice
 * already announces a debit at that instant: one notice per subscription and debit instant).
 */
export async function announceCollection(
  change: SubscriptionChange,
  invoices: Pick<InvoiceService, 'record'>,
  invoice: Invoice,
  now: Date,
): Promise<Date> {
  const { sub, em } = change;
  let debitAt = new Date(now.getTime() + MIN_NOTICE_HOURS * 3_600_000);
  while (await em.count(PreDebitNotice, { subscriptionId: sub.id, debitAt }))
    debitAt = new Date(debitAt.getTime() + 1000);
  noticeRow(em, sub, { kind: PreDebitKind.COLLECTION, debitAt, amountDue: invoice.amountDue, now });
  invoices.record(em, invoice, 'invoice.upcoming', sub.mode, { next_payment_attempt: debitAt.toISOString() });
  return debitAt;
}

/** Subscriptions of one tenant whose notices one transaction sends. */
const BATCH = 100;
/**
 * Due subscriptions a test-clock advance reads at once, then sends BATCH at a time: the due lookup reads every
 * subscription of the tenant (no index serves the notice time; 0.5 s with 100,000), and once per batch it made a
 * month-start quadratic.
 */
const PASS = 50 * BATCH;

export class PreDebitNotices {
  constructor(
    private readonly service: SubscriptionService,
    private readonly pool: ServicePool,
  ) {}

  /** Sends one subscription's notice if it is still due at `at` (merchant time; default now). */
  async send(tenant: TenantParams, id: string, at?: Date): Promise<boolean> {
    return (await this.sendBatch(tenant, [id], at)) === 1;
  }

  /**
   * Sends the notices still due at `at` (merchant time; default now) of some of one tenant's subscriptions, in one
   * transaction under their row locks (a sweep skips rows another process holds). Answers how many were sent.
   */
  async sendBatch(tenant: TenantParams, ids: string[], at?: Date, opts: { skipLocked?: boolean } = {}) {
    const now = at ?? (await this.service.now(tenant));
    const followUps: (() => Promise<void>)[] = [];
    const count = await tenantEntityManager(this.service.root, tenant).transactional(async (tx) => {
      const lockMode = opts.skipLocked ? LockMode.PESSIMISTIC_PARTIAL_WRITE : LockMode.PESSIMISTIC_WRITE;
      const subs = (await tx.find(BillingSubscription, { id: { $in: ids } }, { lockMode })).filter((sub) =>
        noticeDue(sub, now),
      );
      if (!subs.length) return 0;
      // Every one of them ends up announced, now or before: the due lookup's mark (subscription.store.ts NOTICE_DUE).
      await markNoticed(tx, subs);
      const drafts = new Map<string, Awaited<ReturnType<typeof upcomingInvoice>>>();
      for (const sub of subs) drafts.set(sub.id, await upcomingInvoice(tx, sub, sub.currentPeriodEnd!));
      // The notices in one statement: the table's unique key keeps one sent before (by any process) and answers which
      // are new; only those are acted on and announced.
      const written = await insertNotices(
        tx,
        subs.map((sub) => ({
          id: uuidv7(),
          createdAt: new Date(),
          subscriptionId: sub.id,
          kind: PreDebitKind.RENEWAL,
          debitAt: sub.currentPeriodEnd!,
          amountDue: drafts.get(sub.id)!.debit_amount,
          currency: sub.currency,
          sentAt: now,
        })),
      );
      const events: OutboxEvent[] = [];
      for (const sub of subs) {
        if (!written.has(sub.id)) continue;
        const debitAt = sub.currentPeriodEnd!;
        // A debit after the mandate's validity will be declined: the mandate's end is told now, before it is.
        if (sub.mandateValidUntil && debitAt > sub.mandateValidUntil) {
          const change = this.service.change(tx, sub);
          endMandate(change, now, 'scheduler');
          await change.save();
        }
        const draft = drafts.get(sub.id)!;
        const heldUntil = this.holdIfLate(tx, sub, debitAt, now, followUps);
        if (heldUntil) draft.next_payment_attempt = heldUntil.toISOString();
        // Made after the mandate's end above: the event ids keep that order in the outbox.
        events.push(outboxEvent('invoice.upcoming', draft, sub.mode, now));
      }
      // Written by a statement of its own, not the unit of work: a hundred at a time (events.store.ts).
      await writeEvents(tx, events);
      return events.length;
    });
    for (const f of followUps) await f();
    return count;
  }

  /**
   * A renewal announced less than MIN_NOTICE_HOURS before the gateway debits it, beyond a sweep's tolerance (no
   * worker ran while its notice was due, or it became due late: a resume, a cancellation withdrawn near the period's
   * end) is held until MIN_NOTICE_HOURS after the notice, by two durable commands written with it: the gateway
   * renews the period on time but keeps its invoice uncharged, and the held release charges it then (Stripe).
   * Razorpay debits only after its own pre-debit notification, so nothing is asked of it. Answers when the debit
   * will be asked for, or null.
   */
  private holdIfLate(
    tx: EntityManager,
    sub: BillingSubscription,
    debitAt: Date,
    now: Date,
    followUps: (() => Promise<void>)[],
  ): Date | null {
    const until = new Date(now.getTime() + MIN_NOTICE_HOURS * 3_600_000);
    const late = debitAt.getTime() < until.getTime() - NOTICE_SWEEP_TOLERANCE_MS;
    if (!late || debitAt <= now || sub.provider !== 'stripe') return null;
    const change = this.service.change(tx, sub);
    const key = `${sub.id}-${debitAt.getTime()}`;
    change.gatewayCommand(
      SubscriptionCommand.HOLD_RENEWAL,
      `Hold the renewal of ${debitAt.toISOString()}: announced less than ${MIN_NOTICE_HOURS} hours ahead`,
      { until: until.toISOString() },
      `hold-renewal-${key}`,
    );
    change.gatewayCommand(
      SubscriptionCommand.RELEASE_RENEWAL,
      `Charge the held renewal, ${MIN_NOTICE_HOURS} hours after its notice`,
      {},
      `release-renewal-${key}`,
      null,
      { until, now },
    );
    followUps.push(...change.followUps);
    return until;
  }

  /** Test-clock work: a merchant's test-mode notices, in time order, before the gateway's renewals they announce. */
  readonly dueWork: DueWork = {
    name: 'pre-debit notices',
    nextDue: (merchantId, until) => nextNoticeAt(this.pool, merchantId, until, PRE_DEBIT_LEAD_HOURS),
    runDue: async (merchantId, at) => {
      const tenant = { merchantId, mode: Mode.TEST };
      for (;;) {
        const due = await noticesDue(this.pool, PRE_DEBIT_LEAD_HOURS, PASS, { merchantId, at });
        let sent = 0;
        for (let i = 0; i < due.length; i += BATCH)
          sent += await this.sendBatch(
            tenant,
            due.slice(i, i + BATCH).map((d) => d.id),
            at,
          );
        // None sent: what is still due is another process's (a worker's sweep holds it) or no longer due.
        if (!sent) return;
      }
    },
  };

  /** One sweep of the worker: notices due now in merchant time, across tenants. Answers how many were sent. */
  async sweep(limit = BATCH): Promise<number> {
    const byTenant = new Map<string, { tenant: TenantParams; ids: string[] }>();
    for (const row of await noticesDue(this.pool, PRE_DEBIT_LEAD_HOURS, limit)) {
      const key = `${row.merchant_id}:${row.mode}`;
      const group = byTenant.get(key) ?? { tenant: { merchantId: row.merchant_id, mode: row.mode }, ids: [] };
      group.ids.push(row.id);
      byTenant.set(key, group);
    }
    let sent = 0;
    for (const { tenant, ids } of byTenant.values()) {
      try {
        sent += await this.sendBatch(tenant, ids, undefined, { skipLocked: true });
      } catch (err) {
        logger.warn({ err, subscriptions: ids.length }, 'pre-debit notices failed; they stay due');
      }
    }
    return sent;
  }
}

/**
 * The renewal debit a notice announced and the gateway has still to make (debit_at after `now`), not declined: what
 * the customer may decline (docs/india.md).
 */
export function announcedRenewal(em: EntityManager, subscriptionId: string, now: Date): Promise<PreDebitNotice | null> {
  return em.findOne(
    PreDebitNotice,
    { subscriptionId, kind: PreDebitKind.RENEWAL, debitAt: { $gt: now }, declinedAt: null },
    { orderBy: { debitAt: 'asc' } },
  );
}

import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantEntityManager } from '../../core/context';
import { make, Mode, TenantParams } from '../../core/entity';
import { recordEvent } from '../../core/events';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import { invoiceTaxFor } from '../../money';
import { Price, TrialEndAction } from '../catalog';
import { Invoice, type InvoiceService } from '../invoices';
import type { SubscriptionChange } from './subscription.lifecycle';
import type { DueWork } from '../test-clock';
import { discountLine, nextPeriodDiscount } from './subscription.discount';
import { BillingSubscription } from './subscription.entities';
import { SubscriptionStatus } from './subscription.machine';
import { PreDebitKind, PreDebitNotice } from './pre-debit.entities';
import type { SubscriptionService } from './subscription.service';
import { nextNoticeAt, noticesDue } from './subscription.store';
import { taxOf } from './subscription.terms';

/**
 * Pre-debit notices (docs/india.md): before the gateway debits a mandate for a renewal (or the charge at a trial's
 * end), the customer is told what and when by `invoice.upcoming`, sent to the merchant's webhooks with the draft
 * invoice as its object. It goes out PRE_DEBIT_LEAD_HOURS before the debit (at the period's start when the period is
 * shorter), so at least 24 hours ahead; one per subscription and debit (table pre_debit_notices), whichever process
 * sweeps. The test clock sends them in time order within an advance, before the gateway's renewal.
 */
export const PRE_DEBIT_LEAD_HOURS = 48;

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
  const { treatment, rateBps } = taxOf(sub);
  const { heads } = invoiceTaxFor(
    lines.map((l) => l.amount),
    treatment,
    rateBps,
  );
  const credit = Math.min(sub.creditBalance, heads.total);
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
    line_items: lines.map((l) => ({
      description: l.description,
      quantity: 1,
      unit_amount: l.amount,
      amount: l.amount,
    })),
    livemode: sub.mode === Mode.LIVE,
  };
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
  em.persist(
    make(PreDebitNotice, {
      subscriptionId: sub.id,
      kind: PreDebitKind.RETRY,
      debitAt,
      amountDue: invoice.amountDue,
      currency: invoice.currency,
      sentAt: now,
    }),
  );
  const object = { ...invoices.toRest(invoice), next_payment_attempt: debitAt.toISOString() };
  recordEvent(em, 'invoice.upcoming', object, sub.mode, now);
}

export class PreDebitNotices {
  constructor(
    private readonly service: SubscriptionService,
    private readonly pool: ServicePool,
  ) {}

  /** Sends one subscription's notice if it is still due at `at` (merchant time; default now), under its row lock. */
  async send(tenant: TenantParams, id: string, at?: Date, opts: { skipLocked?: boolean } = {}): Promise<boolean> {
    const now = at ?? (await this.service.now(tenant));
    return tenantEntityManager(this.service.root, tenant).transactional(async (tx) => {
      const lockMode = opts.skipLocked ? LockMode.PESSIMISTIC_PARTIAL_WRITE : LockMode.PESSIMISTIC_WRITE;
      const sub = await tx.findOne(BillingSubscription, { id }, { lockMode });
      if (!sub || !noticeDue(sub, now)) return false;
      const debitAt = sub.currentPeriodEnd!;
      if (await tx.count(PreDebitNotice, { subscriptionId: sub.id, debitAt })) return false;
      const draft = await upcomingInvoice(tx, sub, debitAt);
      tx.persist(
        make(PreDebitNotice, {
          subscriptionId: sub.id,
          kind: PreDebitKind.RENEWAL,
          debitAt,
          amountDue: draft.amount_due,
          currency: sub.currency,
          sentAt: now,
        }),
      );
      recordEvent(tx, 'invoice.upcoming', draft, tenant.mode, now);
      return true;
    });
  }

  /** Test-clock work: a merchant's test-mode notices, in time order, before the gateway's renewals they announce. */
  readonly dueWork: DueWork = {
    name: 'pre-debit notices',
    nextDue: (merchantId, until) => nextNoticeAt(this.pool, merchantId, until, PRE_DEBIT_LEAD_HOURS),
    runDue: async (merchantId, at) => {
      const tenant = { merchantId, mode: Mode.TEST };
      for (;;) {
        const due = await noticesDue(this.pool, PRE_DEBIT_LEAD_HOURS, 100, { merchantId, at });
        let sent = 0;
        for (const { id } of due) if (await this.send(tenant, id, at)) sent++;
        if (!sent) return;
      }
    },
  };

  /** One sweep of the worker: notices due now in merchant time, across tenants. Answers how many were sent. */
  async sweep(limit = 100): Promise<number> {
    let sent = 0;
    for (const row of await noticesDue(this.pool, PRE_DEBIT_LEAD_HOURS, limit)) {
      try {
        const tenant = { merchantId: row.merchant_id, mode: row.mode };
        if (await this.send(tenant, row.id, undefined, { skipLocked: true })) sent++;
      } catch (err) {
        logger.warn({ err, subscription_id: row.id }, 'pre-debit notice failed; it stays due');
      }
    }
    return sent;
  }
}

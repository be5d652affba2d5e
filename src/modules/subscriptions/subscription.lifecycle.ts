import { raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { make, Mode } from '../../core/entity';
import { announce, recordEvent } from '../../core/events';
import type { Serializer } from '../../core/serialize';
import { BillingReason, Invoice, InvoiceStatus, InvoiceType } from '../invoices';
import type { InvoiceLineDraft } from '../invoices';
import type { SubscriptionService } from './subscription.service';
import { billUsage } from './usage.billing';
import { releaseRedemption } from '../coupons';
import { taxOf } from './subscription.terms';
import { discountApplies, discountLine, nextPeriodDiscount } from './subscription.discount';
import { BillingSubscription, ScheduledAction, SubscriptionEvent } from './subscription.entities';
import { NONE, SUBSCRIPTIONS, SubscriptionMoveContext, SubscriptionStatus } from './subscription.machine';
import type { SubscriptionTrigger, TriggeredBy } from './subscription.machine';
import { MrrState, mrrStateOf, recordMrrMovement } from '../analytics';
import { testClockSql } from '../test-clock';
import type { GatewayCommands } from '../gateway-commands';

/** The first move of a subscription, as its insert statement writes it with its first audit row. */
export interface FirstMove {
  status: SubscriptionStatus;
  eventType: string;
  triggeredBy: TriggeredBy;
}

/**
 * One change of one subscription inside one transaction: every state move goes through `move` (the state table,
 * subscription.machine.ts, and the audit row), and `save` writes the outbox events and the live-update notice with the
 * change. Its creation (`create`), commands, gateway events and the scheduler all change subscriptions through this,
 * so none can skip the table or the audit trail.
 */
export class SubscriptionChange implements SubscriptionMoveContext {
  /** Each move's outbound event type, and its audit row when the change wrote one (the insert writes the first). */
  private readonly moves: { eventType: string; audit: SubscriptionEvent | null }[] = [];
  /** Calls leased by the scheduler's own action (it runs again when they get no answer), made after the commit. */
  private readonly leased: (() => Promise<void>)[] = [];
  /** Durable gateway commands written with the change, run after its commit (docs/durable-work.md). */
  private readonly commandIds: string[] = [];

  private readonly loadedUpdatedAt: number;
  /** A checkout that never completed (created -> cancelled): its coupon redemption is given back with the change. */
  private releasesCoupon = false;
  /** Whether the subscription counted in MRR, and its MRR, as loaded: `save` writes a ledger movement when this moved. */
  private mrrAtStart: MrrState;

  constructor(
    readonly em: EntityManager,
    readonly sub: BillingSubscription,
    private readonly serializer: () => Serializer,
    private readonly commands: GatewayCommands,
  ) {
    this.loadedUpdatedAt = sub.updatedAt.getTime();
    this.mrrAtStart = mrrStateOf(sub);
  }

  /**
   * A new subscription: the table's first move (`create`, from none, by the API). `insert` writes the subscription in
   * the state the move reaches, with the move's audit row, in one statement (subscription.store.ts); its outbox event
   * and the live-update notice are written by `save`, as every move's.
   */
  static async create(
    em: EntityManager,
    serializer: () => Serializer,
    commands: GatewayCommands,
    insert: (first: FirstMove) => Promise<BillingSubscription>,
  ): Promise<SubscriptionChange> {
    const first = SUBSCRIPTIONS.check(NONE, 'create', (t) => t.by.includes('api'));
    const sub = await insert({
      status: first.to as SubscriptionStatus,
      eventType: first.eventType,
      triggeredBy: 'api',
    });
    const change = new SubscriptionChange(em, sub, serializer, commands);
    change.moves.push({ eventType: first.eventType, audit: null });
    return change;
  }

  get status(): SubscriptionStatus {
    return this.sub.status;
  }

  /**
   * Moves the subscription by the state table (409 invalid_state_transition when it has no such row, or `by` may not
   * cause it), running the row's hooks, and writes the move's audit row; its outbox event is written by `save`.
   */
  move(trigger: SubscriptionTrigger, by: TriggeredBy, metadata: Record<string, unknown> = {}): void {
    const { from, to, transition: t } = SUBSCRIPTIONS.apply(this, trigger, (row) => row.by.includes(by));
    const row = make(SubscriptionEvent, {
      subscriptionId: this.sub.id,
      fromState: from === NONE ? null : from,
      toState: to as SubscriptionStatus,
      eventType: t.eventType,
      triggeredBy: by,
      metadataJson: metadata,
      createdAt: merchantTimeAtInsert(this.sub),
    });
    this.em.persist(row);
    this.moves.push({ eventType: t.eventType, audit: row });
  }

  /** The table's hook of a checkout that never completed: the coupon redemption is given back by `save`. */
  releaseCoupon(): void {
    this.releasesCoupon = true;
  }

  /**
   * A gateway call to make once the change has committed, durable: written as a command in the change's transaction,
   * run right after the commit and retried by the worker until the gateway has done it (subscription.commands.ts).
   */
  gatewayCommand(
    action: string,
    description: string,
    args: Record<string, unknown>,
    idempotencyKey: string,
    invoiceId: string | null = null,
    hold?: { until: Date; now: Date },
  ): void {
    const row = this.commands.queue(this.em, {
      action,
      description,
      connectionId: this.sub.connectionId,
      subscriptionId: this.sub.id,
      invoiceId,
      args: { provider_subscription_id: this.sub.providerSubscriptionId ?? null, ...args },
      idempotencyKey,
      hold,
    });
    // A held command is not run after the commit: its time comes later (GatewayCommands.queue).
    if (!hold) this.commandIds.push(row.id);
  }

  /** A command written in the change's transaction by another module (a refund): run with the change's own. */
  runAfterCommit(commandId: string): void {
    this.commandIds.push(commandId);
  }

  /**
   * A call after the commit that is not a command: the scheduler's dunning retry and checkout expiry, whose scheduled
   * action is leased and runs again when the call gets no answer (subscription.scheduler.ts).
   */
  afterLeased(call: () => Promise<void>): void {
    this.leased.push(call);
  }

  /** What to run once the change has committed: its commands, then the leased calls. */
  get followUps(): (() => Promise<void>)[] {
    const ids = [...this.commandIds];
    return [...(ids.length ? [() => this.commands.runNow(ids)] : []), ...this.leased];
  }

  schedule(action: ScheduledAction | null, at: Date | null = null): void {
    this.sub.nextAction = action;
    this.sub.nextActionAt = action ? at : null;
  }

  /** Flushes, writes one outbox event per move (the subscription as it ends up) and announces a change, if any. */
  async save(): Promise<void> {
    if (this.releasesCoupon) {
      // In the transaction of the move; releaseRedemption gives the count back once however often this runs.
      this.releasesCoupon = false;
      await releaseRedemption(this.em, this.sub.id);
    }
    await this.em.flush();
    // The MRR movement, in the change's transaction (analytics/mrr-ledger.ts); no statement when MRR did not move.
    await recordMrrMovement(this.em, this.sub, this.mrrAtStart, this.moves.at(-1)?.eventType ?? 'subscription.updated');
    this.mrrAtStart = mrrStateOf(this.sub);
    // Live subscribers hear of real changes only (a gateway's echo of a command, or a repeated event, changes nothing):
    // any flush that wrote the row, here or earlier in the change (issuing an invoice flushes), moved `updated_at`.
    if (!this.moves.length && this.sub.updatedAt.getTime() === this.loadedUpdatedAt) return;
    const mode = this.sub.mode as Mode;
    if (this.moves.length) {
      // After the flush above: the payload carries the `updated_at` it wrote. A change without moves (a renewal)
      // has nothing more to write.
      const object = {
        ...this.serializer().toRest(this.sub),
        scheduled_change: this.sub.scheduledChange
          ? this.serializer().toRest(this.sub.scheduledChange, 'ScheduledChange')
          : null,
      };
      // Each webhook is stamped with its audit row's instant, which the flush above read back (merchant time); the
      // creation's audit row is the insert's, and its event is stamped now.
      for (const { eventType, audit } of this.moves) {
        const at = audit?.createdAt;
        recordEvent(this.em, eventType, object, mode, at instanceof Date ? at : undefined);
      }
      await this.em.flush();
    }
    await announce(this.em, { topic: 'subscription', merchantId: this.sub.merchantId, mode, id: this.sub.id });
  }
}

/**
 * When an audit row happened: the merchant's time at the transition (docs/subscriptions.md). Live mode is the wall
 * clock; in test mode the insert itself reads the test clock (the test clock's offset at that instant), so a history
 * driven by test-clock advances reads as one timeline with its invoices and webhooks, at no extra statement.
 */
function merchantTimeAtInsert(sub: BillingSubscription): Date {
  if (sub.mode !== Mode.TEST) return new Date();
  return raw(`clock_timestamp() + ${testClockSql.offsetMs('?::uuid', '?::text')} * interval '1 millisecond'`, [
    Mode.TEST,
    sub.merchantId,
  ]);
}

/** A command that called the gateway and did not come back within this (wall time) is taken to have died. */
export const COMMAND_CLAIM_MS = 60_000;

/** The command at the gateway for this subscription right now (its claim is live), or null. */
export function commandInFlight(sub: BillingSubscription): string | null {
  // A command without an answer holds the subscription until its outcome is known (subscription.pending.ts).
  if (sub.pendingOutcome) return sub.pendingCommand ?? sub.pendingOutcome.command;
  return sub.pendingCommand && sub.pendingCommandAt && Date.now() - sub.pendingCommandAt.getTime() < COMMAND_CLAIM_MS
    ? sub.pendingCommand
    : null;
}

/**
 * Bills the period `[start, end)`: the subscription's period moves there, one more cycle counts (docs/subscriptions.md:
 * every billed period), and an invoice is issued (paid, or open while dunning runs) under the subscription's tax, with
 * the setup fee on the first and any credit from earlier credit notes taken off. Its total is what the gateway charged
 * for the period (gatewayAmounts). The period before closes with it: its usage, and any reported late for earlier
 * periods, gets an invoice of its own, in arrears (src/modules/usage/usage.billing.ts). Answers the period's invoice.
 */
export async function billPeriod(
  change: SubscriptionChange,
  service: SubscriptionService,
  p: { start: Date; end: Date; paid: boolean; at: Date; paymentId?: string | null },
): Promise<Invoice> {
  const { sub, em } = change;
  const invoices = service.invoices;
  const first = sub.cyclesCompleted === 0;
  sub.currentPeriodStart = p.start;
  sub.currentPeriodEnd = p.end;
  sub.cyclesCompleted += 1;
  const lines: InvoiceLineDraft[] = [
    {
      description: `Subscription (${sub.billingInterval > 1 ? `every ${sub.billingInterval} ` : ''}${sub.billingFrequency})`,
      quantity: 1,
      unitAmount: sub.amount,
      amount: sub.amount,
      periodStart: p.start,
      periodEnd: p.end,
    },
  ];
  // A coupon's discount: off the recurring amount only (not the setup fee), as a negative line naming the code.
  const covered = discountApplies(sub);
  const discount = nextPeriodDiscount(sub);
  if (discount > 0) lines.push(discountLine(sub, discount, p));
  if (first && sub.setupFee > 0) {
    lines.push({ description: 'Setup fee', quantity: 1, unitAmount: sub.setupFee, amount: sub.setupFee });
  }
  const invoice = await invoices.issue(em, {
    type: InvoiceType.INVOICE,
    billingReason: first ? BillingReason.SUBSCRIPTION_CREATE : BillingReason.SUBSCRIPTION_CYCLE,
    status: p.paid ? InvoiceStatus.PAID : InvoiceStatus.OPEN,
    customerId: sub.customerId,
    subscriptionId: sub.id,
    currency: sub.currency,
    lines,
    periodStart: p.start,
    periodEnd: p.end,
    issuedAt: p.at,
    paidAt: p.paid ? p.at : null,
    // The payment that collected it, recorded by the caller in the same transaction (payment.collections.ts).
    paymentId: p.paymentId ?? null,
    // The balance is gross (credit note totals): it is taken off the total, GST included (capped at the total).
    creditApplied: sub.creditBalance,
    tax: taxOf(sub),
    discountAmount: discount,
  });
  sub.creditBalance -= invoice.creditApplied;
  // The period used one of the coupon's periods (even when its amount left nothing to take off).
  if (covered) sub.discountCyclesUsed += 1;
  sub.periodDiscount = discount;
  // One statement (nothing more for a subscription without unbilled usage). A first charge closes only a trial's usage.
  if (!first || sub.trialStart) await billUsage(change, service, { closingAt: p.start, at: p.at });
  return invoice;
}

import { LockMode } from '@mikro-orm/core';
import { addHours } from 'date-fns';
import { Mode, TenantParams } from '../../core/entity';
import { backoffDelay } from '../../core/listener';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import { GatewayError } from '../../gateways/port';
import { ProviderConnection, fromGatewayError } from '../providers';
import type { DueWork } from '../test-clock';
import { BillingSubscription, ScheduledAction } from './subscription.entities';
import { SubscriptionStatus, transitionFor } from './subscription.machine';
import { reconcile } from './subscription.reconcile';
import { CHECKOUT_EXPIRY_CLAIM } from './subscription.gateway-events';
import { commandInFlight } from './subscription.lifecycle';
import { billFinalUsage } from './usage.billing';
import { tenantEntityManager } from '../../core/context';
import type { SubscriptionService } from './subscription.service';
import {
  actionsDueBy,
  dueActions,
  gatewaySyncedTo,
  nextActionAt,
  nextGatewayEventAt,
  overdueAtGateway,
  setGatewaySyncedTo,
  unansweredCommands,
} from './subscription.store';
import { settlePending } from './subscription.pending';
import { PreDebitNotices } from './pre-debit';

const S = SubscriptionStatus;

/** A dunning retry whose gateway answer never came is tried again after this (the gateway call is idempotent per attempt). */
const RETRY_LEASE_HOURS = 1;

/**
 * The service's own clock work on subscriptions (docs/subscriptions.md: scheduler): checkouts never completed
 * (docs/subscriptions.md: cancelled SUBSCRIPTION_CHECKOUT_EXPIRY_SECONDS after creation), trial ends with
 * trial_end_action=cancel_subscription, cancellations at period end, completion after max_cycles and dunning retries
 * (halting by the dunning policy happens when the last retry's failure is applied). Due work is a column (`next_action_at`, merchant time), so it survives restarts; each action runs in a
 * transaction holding the row lock and re-checks that it is still due, so several workers never run one twice.
 */
export class SubscriptionScheduler {
  /** Pre-debit notices before the gateway's renewals (pre-debit.ts): swept with the actions, and test-clock work. */
  readonly notices: PreDebitNotices;

  constructor(
    private readonly service: SubscriptionService,
    private readonly pool: ServicePool,
  ) {
    this.notices = new PreDebitNotices(service, pool);
  }

  /**
   * Runs the action of one subscription if it is still due at `at` (merchant time; default now), under its row lock:
   * a second process finds it no longer due (or, sweeping, skips the locked row), so an action runs once.
   */
  async runAction(tenant: TenantParams, id: string, at?: Date, opts: { skipLocked?: boolean } = {}): Promise<boolean> {
    const service = this.service;
    const root = tenantEntityManager(service.root, tenant);
    const now = at ?? (await service.now(tenant));
    const done = await root.transactional(async (tx) => {
      // Worker sweeps skip a row another process holds (it is running that action, or a command or event has it).
      const lockMode = opts.skipLocked ? LockMode.PESSIMISTIC_PARTIAL_WRITE : LockMode.PESSIMISTIC_WRITE;
      const sub = await tx.findOne(BillingSubscription, { id }, { lockMode });
      if (!sub || !sub.nextAction || !sub.nextActionAt || sub.nextActionAt.getTime() > now.getTime()) return null;
      const change = service.change(tx, sub);
      const action = sub.nextAction;
      const dueAt = sub.nextActionAt;
      change.schedule(null);
      switch (action) {
        case ScheduledAction.CHECKOUT_EXPIRY:
          if (sub.status !== S.CREATED) break;
          if (commandInFlight(sub)) {
            // A command (the merchant's cancel) is at the gateway: look again once it has ended.
            change.schedule(ScheduledAction.CHECKOUT_EXPIRY, addHours(now, RETRY_LEASE_HOURS));
            break;
          }
          // Claimed (its echo webhook is then the scheduler's, not a gateway cancellation) and leased: without an
          // answer from the gateway, tried again later. The gateway is called after this commits.
          sub.pendingCommand = CHECKOUT_EXPIRY_CLAIM;
          sub.pendingCommandAt = new Date(); // wall time: claims expire by the wall clock
          change.schedule(ScheduledAction.CHECKOUT_EXPIRY, addHours(now, RETRY_LEASE_HOURS));
          change.afterLeased(() => this.expireCheckout(tenant, sub, dueAt ?? now));
          break;
        case ScheduledAction.TRIAL_END_CANCEL:
          if (sub.status === S.TRIALING) {
            change.move('trial_end_cancel', 'scheduler');
            sub.cancelledAt = sub.trialEnd ?? now;
            sub.endedAt = sub.trialEnd ?? now;
          }
          break;
        case ScheduledAction.PERIOD_END_CANCEL:
          if (transitionFor(sub.status, 'period_end_cancel')) {
            change.move('period_end_cancel', 'scheduler');
            sub.cancelledAt = sub.currentPeriodEnd ?? now;
            sub.endedAt = sub.currentPeriodEnd ?? now;
            await billFinalUsage(change, service, now); // the last period's usage, in arrears (usage.billing.ts)
          } else if (sub.status === S.TRIALING) {
            change.move('trial_end_cancel', 'scheduler');
            sub.cancelledAt = sub.endedAt = sub.trialEnd ?? now;
          }
          break;
        case ScheduledAction.COMPLETE:
          if (transitionFor(sub.status, 'complete')) {
            change.move('complete', 'scheduler');
            sub.endedAt = sub.currentPeriodEnd ?? now;
            await billFinalUsage(change, service, now);
          }
          break;
        case ScheduledAction.RETRY:
          if (sub.status !== S.PAST_DUE || !sub.providerSubscriptionId) break;
          // Leased: the gateway's answer (its webhook) schedules what comes next; without one, try again later.
          change.schedule(ScheduledAction.RETRY, addHours(now, RETRY_LEASE_HOURS));
          // Keyed by the open invoice and attempt: a later dunning round (another invoice) is a new charge.
          change.afterLeased(() =>
            service.afterCommit(sub, 'dunning retry', (gw) =>
              gw.retrySubscriptionCharge(
                sub.providerSubscriptionId!,
                `retry-${sub.openInvoiceId ?? sub.id}-${sub.retryAttempt + 1}`,
              ),
            ),
          );
          break;
        default:
          break;
      }
      await change.save();
      return change.followUps;
    });
    if (!done) return false;
    for (const call of done) await call();
    return true;
  }

  /**
   * The end of a hosted checkout nobody completed (docs/subscriptions.md): ended at the gateway outside any
   * transaction, then, under the row lock, cancelled (`checkout_failed` by `scheduler`) if it is still `created`, which
   * gives a coupon redemption back in the same transaction. A checkout the customer completed first is left to its
   * event. A gateway that does not answer leaves the lease: the action runs again later.
   */
  private async expireCheckout(tenant: TenantParams, claimed: BillingSubscription, at: Date): Promise<void> {
    const service = this.service;
    const root = tenantEntityManager(service.root, tenant);
    let outcome: 'expired' | 'completed' | null = null;
    try {
      const connection = await service.connectionOf(root, claimed);
      outcome = await service.providers.gatewayFor(connection).expireSubscriptionCheckout({
        checkoutSessionId: claimed.checkoutSessionId ?? null,
        providerSubscriptionId: claimed.providerSubscriptionId ?? null,
      });
    } catch (err) {
      logger.warn(
        { err, subscription_id: claimed.id },
        'expiring a subscription checkout at the gateway failed; it is tried again later',
      );
    }
    await root.transactional(async (tx) => {
      const sub = await tx.findOne(BillingSubscription, { id: claimed.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!sub) return;
      const change = service.change(tx, sub);
      if (sub.pendingCommand === CHECKOUT_EXPIRY_CLAIM) {
        sub.pendingCommand = null;
        sub.pendingCommandAt = null;
      }
      if (outcome === null) {
        // The lease stays (unless the subscription moved meanwhile).
        if (sub.status !== S.CREATED && sub.nextAction === ScheduledAction.CHECKOUT_EXPIRY) change.schedule(null);
      } else {
        if (sub.nextAction === ScheduledAction.CHECKOUT_EXPIRY) change.schedule(null);
        if (outcome === 'expired' && sub.status === S.CREATED) {
          change.move('checkout_failed', 'scheduler', { reason: 'checkout_expired' });
          sub.cancelledAt = at;
          sub.endedAt = at;
        } else if (outcome === 'completed' && sub.status === S.CREATED) {
          logger.info(
            { subscription_id: sub.id },
            'checkout completed at the gateway before it expired; its event moves the subscription',
          );
        }
      }
      await change.save();
    });
  }

  /** Test-clock work (docs/sandbox.md): the scheduler's actions of a merchant's test mode, in time order. */
  readonly dueWork: DueWork = {
    name: 'subscription schedule',
    nextDue: (merchantId, until) => nextActionAt(this.pool, merchantId, until),
    runDue: async (merchantId, at) => {
      const tenant = { merchantId, mode: Mode.TEST };
      for (;;) {
        const due = await actionsDueBy(this.pool, merchantId, at, 100);
        if (!due.length) return;
        let ran = 0;
        for (const { id } of due) if (await this.runAction(tenant, id, at)) ran++;
        // Rows still due but not run: another process ran them meanwhile and moved them on, or holds them: look again.
        if (!ran) await new Promise((r) => setTimeout(r, 20));
      }
    },
  };

  /**
   * Test-clock work for the gateway sandbox: its clock follows the merchant's, so the renewals and trial ends it
   * charges, and the webhooks they cause, happen inside the advance, in time order. It is due at each time the gateway
   * next has something to report, and at the advance's end (later checkouts then start on the merchant's time).
   */
  readonly gatewayDueWork: DueWork = {
    name: 'gateway sandbox clock',
    nextDue: async (merchantId, until) => {
      const synced = (await gatewaySyncedTo(this.pool, merchantId)) ?? new Date(0);
      if (synced.getTime() >= until.getTime()) return null;
      return (await nextGatewayEventAt(this.pool, merchantId, synced, until)) ?? until;
    },
    runDue: async (merchantId, at) => {
      await this.syncGatewayClocks(merchantId, at);
    },
  };

  /** Moves the sandbox clock of each of the merchant's test-mode connections to `at`. */
  async syncGatewayClocks(merchantId: string, at: Date): Promise<void> {
    const em = tenantEntityManager(this.service.root, { merchantId, mode: Mode.TEST });
    const connections = await em.find(ProviderConnection, {}, { populate: ['credentialsSealed'] });
    for (const c of connections) {
      try {
        await this.service.providers.gatewayFor(c).advanceTestClock(at);
      } catch (err) {
        // A real gateway (SANDBOX=off) has no sandbox clock: its own test clocks are the merchant's business.
        if (err instanceof GatewayError && err.code === 'gateway_rejected') {
          logger.debug({ err, provider: c.provider }, 'gateway clock not advanced');
          continue;
        }
        // No answer within the advance's bound (transport.ts): the advance fails 502 gateway_unavailable and stays
        // unfinished (the next one resumes it).
        throw fromGatewayError(err);
      }
    }
    await setGatewaySyncedTo(this.pool, merchantId, at);
  }

  /** One sweep of the worker: the actions due in merchant time, across tenants (at most `limit`). Answers how many ran. */
  async sweep(limit = 100): Promise<number> {
    const due = await dueActions(this.pool, limit);
    let ran = await this.notices.sweep(limit);
    for (const row of due) {
      try {
        if (
          await this.runAction({ merchantId: row.merchant_id, mode: row.mode }, row.id, undefined, { skipLocked: true })
        )
          ran++;
      } catch (err) {
        logger.warn({ err, subscription_id: row.id }, 'scheduled subscription action failed; it stays due');
      }
    }
    return ran;
  }

  /**
   * Settles commands whose gateway call went unanswered `graceMs` ago and whose event has not come: each subscription
   * is read back from its gateway (outside any transaction), then, under its row lock, the command is applied if the
   * gateway shows it happened and dropped if not (subscription.pending.ts). A gateway that does not answer leaves it
   * for the next pass. Answers how many were settled.
   */
  async settleUnanswered(graceMs: number, limit = 50): Promise<number> {
    const service = this.service;
    let settled = 0;
    for (const row of await unansweredCommands(this.pool, graceMs, limit)) {
      const tenant = { merchantId: row.merchant_id, mode: row.mode };
      const em = tenantEntityManager(service.root, tenant);
      try {
        const sub = await em.findOne(BillingSubscription, { id: row.id });
        if (!sub?.pendingOutcome || !sub.providerSubscriptionId) continue;
        const state = await service.providers
          .gatewayFor(await service.connectionOf(em, sub))
          .getSubscription(sub.providerSubscriptionId);
        const now = await service.now(tenant);
        await em.fork().transactional(async (tx) => {
          const locked = await tx.findOne(
            BillingSubscription,
            { id: row.id },
            { lockMode: LockMode.PESSIMISTIC_WRITE },
          );
          if (!locked?.pendingOutcome) return;
          const change = service.change(tx, locked);
          settlePending(change, state, now, true);
          await change.save();
          settled++;
        });
      } catch (err) {
        logger.warn({ err, subscription_id: row.id }, 'an unanswered command could not be settled; tried again later');
      }
    }
    return settled;
  }

  /** One reconciliation pass: subscriptions whose gateway event is overdue are read back from the gateway. */
  async reconcileOverdue(graceMs: number, limit = 50): Promise<number> {
    const rows = await overdueAtGateway(this.pool, graceMs, limit);
    for (const row of rows) {
      try {
        await reconcile(this.service, this.pool, { merchantId: row.merchant_id, mode: row.mode }, row.id);
      } catch (err) {
        logger.warn({ err, subscription_id: row.id }, 'reconciliation failed; it is tried again later');
      }
    }
    return rows.length;
  }
}

/**
 * The scheduler's loop in a worker process: sweeps due actions every `pollMs` and reconciles overdue subscriptions
 * every `reconcileMs`. A database outage is logged and retried with backoff; the loop never ends the process.
 */
export class SchedulerLoop {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private failures = 0;
  private lastReconcile = 0;

  constructor(
    private readonly scheduler: SubscriptionScheduler,
    private readonly opts: {
      pollMs: number;
      reconcileMs: number;
      reconcileGraceMs: number;
      pendingOutcomeGraceMs: number;
    },
    /** Other modules' reconciliation passes run with the subscriptions' (one-off payments'), each given the grace. */
    private readonly reconcilers: ((graceMs: number) => Promise<unknown>)[] = [],
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.next(0);
  }

  private next(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick().finally(() => (this.running = null));
    }, delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      let ran = await this.scheduler.sweep();
      while (ran >= 100 && !this.stopped) ran = await this.scheduler.sweep();
      await this.scheduler.settleUnanswered(this.opts.pendingOutcomeGraceMs);
      if (Date.now() - this.lastReconcile >= this.opts.reconcileMs) {
        this.lastReconcile = Date.now();
        await this.scheduler.reconcileOverdue(this.opts.reconcileGraceMs);
        for (const pass of this.reconcilers) await pass(this.opts.reconcileGraceMs);
      }
      this.failures = 0;
      this.next(this.opts.pollMs);
    } catch (err) {
      const delay = backoffDelay(this.failures++, 100, 10_000);
      logger.warn({ err, retry_in_ms: delay }, 'subscription scheduler sweep failed; retrying');
      this.next(delay);
    }
  }

  /**
   * No new sweep starts; the one running may finish for up to `graceMs`. A sweep can wait on the database (the pool
   * already closed, or PostgreSQL gone: up to the pool's 60 s acquire timeout), and shutdown must not wait with it;
   * what it had not committed is swept again by the next process.
   */
  async stop(graceMs = 5_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    const running = this.running;
    if (!running) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([running.then(() => 'done' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late')
      logger.warn({ grace_ms: graceMs }, 'subscription scheduler stopped with a sweep still waiting on the database');
  }
}

import type { Ctx } from '../../core/context';
import { DomainError } from '../../core/errors';
import type { GatewayPort } from '../../gateways/port';
import { Plan, Price } from '../catalog';
import { BillingSubscription, ScheduledAction } from './subscription.entities';
import type { SubscriptionChange } from './subscription.lifecycle';
import { SubscriptionStatus } from './subscription.machine';
import type { SubscriptionService } from './subscription.service';
import { moveToPlan } from './subscription.terms';

/**
 * Scheduled changes (docs/subscriptions.md "Scheduled changes"): a plan change at the end of the current period (or
 * trial), and the removal of it or of a cancellation at the period's end. The gateway is told at once (through the
 * command path of SubscriptionService.command: claim, gateway call, write), so it is the gateway's own renewal that
 * charges the new price; the renewal's event then applies the change here (applyScheduledChange) before billing the
 * period. Each command is a row of the state table (subscription.machine.ts) with its audit row and outbound event.
 */

const S = SubscriptionStatus;

export const nothingScheduled = () =>
  new DomainError('invalid_state_transition', 'No plan change is scheduled for this subscription.');

const tookEffect = () =>
  new DomainError(
    'invalid_state_transition',
    'The scheduled plan change has taken effect at the gateway (the period ended meanwhile).',
  );

/** A change can be scheduled only on a subscription that is not set to end at the period's end. */
export function checkSchedulable(sub: BillingSubscription): void {
  if (sub.cancelAtPeriodEnd)
    throw new DomainError(
      'invalid_state_transition',
      'Cannot schedule a plan change on a subscription that is cancelling at the period end: remove the scheduled cancellation first.',
    );
}

/** Pausing would leave the gateway to apply the change while no renewal is billed: it is refused meanwhile. */
export function checkPausable(sub: BillingSubscription): void {
  if (sub.scheduledChangeData)
    throw new DomainError(
      'invalid_state_transition',
      'Cannot pause a subscription with a scheduled plan change: remove the scheduled change first.',
    );
}

/** When a change scheduled now takes effect, by Cadence's own reckoning: the end of the trial or of the period. */
export function periodEndOf(sub: BillingSubscription, now: Date): Date {
  return (sub.status === S.TRIALING ? sub.trialEnd : sub.currentPeriodEnd) ?? sub.currentPeriodEnd ?? now;
}

/**
 * The gateway side of dropping a scheduled change, for a command that drops it (its removal, a cancellation at the
 * period's end, an immediate plan change): nothing scheduled there answers done; when the gateway has already applied
 * it (the period ended meanwhile: its renewal event waits for this command), the command is refused with 409 and the
 * renewal bills the new plan.
 */
export async function dropAtGateway(gw: GatewayPort, sub: BillingSubscription): Promise<void> {
  const d = sub.scheduledChangeData;
  if (!d || !sub.providerSubscriptionId) return;
  const outcome = await gw.removeScheduledPriceChange({
    providerSubscriptionId: sub.providerSubscriptionId,
    providerPriceId: d.providerPriceId,
    idempotencyKey: `unschedule-${sub.id}-${sub.pendingCommandAt?.getTime() ?? Date.now()}`,
  });
  if (outcome === 'applied') throw tookEffect();
}

/** Drops the scheduled change as a move of its own (`subscription.scheduled_change_removed`), `reason` saying why. */
export function dropScheduledChange(change: SubscriptionChange, reason: string): void {
  const d = change.sub.scheduledChangeData;
  if (!d) return;
  change.move('remove_scheduled_change', 'api', {
    plan_id: d.planId,
    price_id: d.priceId,
    effective_at: d.effectiveAt,
    reason,
  });
  change.sub.scheduledChangeData = null;
}

/** DELETE /subscriptions/{id}/scheduled-change: the gateway keeps billing the current plan. */
export function removeScheduledChange(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
): Promise<BillingSubscription> {
  return service.command(
    ctx,
    id,
    'remove_scheduled_change',
    (gw, sub) => dropAtGateway(gw, sub),
    (change) => {
      if (!change.sub.scheduledChangeData) throw nothingScheduled();
      dropScheduledChange(change, 'removed');
    },
    undefined,
    undefined,
    (sub) => {
      if (!sub.scheduledChangeData) throw nothingScheduled();
    },
  );
}

/**
 * DELETE /subscriptions/{id}/scheduled-cancellation: `cancel_at_period_end` cleared on an active subscription, at the
 * gateway first (Stripe `cancel_at_period_end: false`; Razorpay's scheduled cancellation dropped), so it renews.
 */
export function removeScheduledCancellation(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
): Promise<BillingSubscription> {
  const none = () => new DomainError('invalid_state_transition', 'No cancellation is scheduled for this subscription.');
  return service.command(
    ctx,
    id,
    'remove_scheduled_cancellation',
    async (gw, sub) => {
      // Stripe, told to stop at the end of a max_cycles term, must still stop there.
      if (sub.provider === 'stripe' && termEnds(sub)) return;
      await gw.keepSubscription(
        sub.providerSubscriptionId!,
        `keep-${sub.id}-${sub.pendingCommandAt?.getTime() ?? Date.now()}`,
      );
    },
    (change) => {
      const sub = change.sub;
      if (!sub.cancelAtPeriodEnd) throw none();
      change.move('remove_scheduled_cancellation', 'api', { cancel_at_period_end: false });
      sub.cancelAtPeriodEnd = false;
      // What the period's end holds now: the end of a max_cycles term, or nothing (the gateway renews).
      if (termEnds(sub)) change.schedule(ScheduledAction.COMPLETE, sub.currentPeriodEnd ?? null);
      else change.schedule(null);
    },
    undefined,
    undefined,
    (sub) => {
      if (!sub.cancelAtPeriodEnd) throw none();
    },
  );
}

/** The current period is the last of a max_cycles term. */
function termEnds(sub: BillingSubscription): boolean {
  return sub.maxCycles != null && sub.cyclesCompleted >= sub.maxCycles;
}

/**
 * The renewal whose period starts at (or after) the scheduled change's `effectiveAt`: the subscription moves to the
 * new plan first (`subscription.plan_changed`, by the gateway's webhook), so the period is billed at its price, which
 * the gateway charged. A new cadence counts its periods from there. No proration: the old period was billed in full.
 */
export async function applyScheduledChange(change: SubscriptionChange, period: { start: Date }): Promise<void> {
  const { sub, em } = change;
  const d = sub.scheduledChangeData;
  if (!d || period.start.getTime() < new Date(d.effectiveAt).getTime()) return;
  const [plan, price] = await Promise.all([
    em.findOneOrFail(Plan, { id: d.planId }),
    em.findOneOrFail(Price, { id: d.priceId }),
  ]);
  change.move('change_plan', 'webhook', {
    from_plan_id: sub.planId,
    to_plan_id: plan.id,
    from_price_id: sub.priceId,
    to_price_id: price.id,
    effective: 'period_end',
    effective_at: d.effectiveAt,
  });
  const sameCadence = plan.billingFrequency === sub.billingFrequency && plan.billingInterval === sub.billingInterval;
  moveToPlan(sub, plan, price);
  Object.assign(sub, { gatewayDiscounted: d.gatewayDiscounted, scheduledChangeData: null });
  // A coupon that does not apply to the new plan ends with the old one (subscription.discount.ts).
  if (sub.couponId && !d.couponFollows) sub.discountCycles = sub.discountCyclesUsed;
  if (!sameCadence && sub.cyclesCompleted > 0) {
    // enterPeriod counts this period as cycle 0 of the new anchor.
    sub.billingAnchor = period.start;
    sub.anchorCycle = -1;
  }
}

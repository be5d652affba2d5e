import type { GatewaySubscription } from '../../gateways/port';
import { ScheduledAction } from './subscription.entities';
import type { SubscriptionChange } from './subscription.lifecycle';
import { SubscriptionStatus, transition, transitionFor } from './subscription.machine';

const S = SubscriptionStatus;

/**
 * What the pause, resume and cancel commands change once the gateway has done them: applied by the command itself
 * when the gateway answers, or later, when the gateway's event or the reconciliation pass shows an unanswered command
 * happened after all (late gateway outcomes, docs/durable-work.md).
 */
export function applyPause(change: SubscriptionChange, now: Date, metadata?: Record<string, unknown>): void {
  change.move('pause', 'api', metadata);
  change.sub.pausedAt = now;
}

export function applyResume(change: SubscriptionChange): void {
  change.move('resume', 'api');
  change.sub.pausedAt = null;
}

/** Only a running period (active) or a trial has an end to wait for; anything else is cancelled now. */
export function cancelDeferred(sub: { status: SubscriptionStatus }, atPeriodEnd: boolean): boolean {
  return atPeriodEnd && (sub.status === S.ACTIVE || sub.status === S.TRIALING);
}

export function applyCancel(change: SubscriptionChange, now: Date, atPeriodEnd: boolean): void {
  const sub = change.sub;
  if (cancelDeferred(sub, atPeriodEnd)) {
    transition(sub.status, 'cancel', 'api'); // the later cancellation must be one the table allows now
    sub.cancelAtPeriodEnd = true;
    const trial = sub.status === S.TRIALING;
    change.schedule(
      trial ? ScheduledAction.TRIAL_END_CANCEL : ScheduledAction.PERIOD_END_CANCEL,
      (trial ? sub.trialEnd : sub.currentPeriodEnd) ?? now,
    );
    return;
  }
  change.move('cancel', 'api', atPeriodEnd ? {} : { cancel_at_period_end: false });
  sub.cancelledAt = now;
  sub.endedAt = now;
  change.schedule(null);
}

/** The gateway's state as far as a pending command is concerned. */
export type ObservedState = Pick<GatewaySubscription, 'status' | 'cancelAtPeriodEnd'>;

/**
 * Settles an unanswered command against what the gateway shows: applied when it happened (and the state table still
 * allows it), dropped when it did not; either way the subscription is free for the next command. Answers whether it
 * was applied. `conclusive`: the state is the gateway's whole answer (reconciliation) rather than one event, so a
 * state that does not show the command means it did not happen.
 */
export function settlePending(
  change: SubscriptionChange,
  state: ObservedState,
  now: Date,
  conclusive: boolean,
): boolean | null {
  const sub = change.sub;
  const pending = sub.pendingOutcome;
  if (!pending) return null;
  const happened =
    pending.command === 'pause'
      ? state.status === 'paused'
      : pending.command === 'resume'
        ? state.status === 'active' || state.status === 'trialing' || state.status === 'past_due'
        : state.status === 'cancelled' ||
          state.status === 'completed' ||
          (!!pending.atPeriodEnd && state.cancelAtPeriodEnd);
  if (!happened && !conclusive) return null;
  sub.pendingOutcome = null;
  sub.pendingCommand = null;
  sub.pendingCommandAt = null;
  if (!happened || !transitionFor(sub.status, pending.command)) return false;
  if (pending.command === 'pause') applyPause(change, now);
  else if (pending.command === 'resume') applyResume(change);
  else applyCancel(change, now, !!pending.atPeriodEnd);
  return true;
}

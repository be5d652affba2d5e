import { DomainError } from '../../core/errors';
import { defineMachine, Transition } from '../../core/state-machine';

/**
 * The subscription state machine as one table (the API document's "States and transitions"), declared with
 * src/core/state-machine.ts: every move of the engine (its creation, commands, gateway webhooks, the scheduler) goes
 * through it in SubscriptionChange, and anything the table does not list is 409 `invalid_state_transition`, changing
 * nothing.
 */

export enum SubscriptionStatus {
  CREATED = 'created',
  TRIALING = 'trialing',
  ACTIVE = 'active',
  PAUSED = 'paused',
  PAST_DUE = 'past_due',
  HALTED = 'halted',
  CANCELLED = 'cancelled',
  COMPLETED = 'completed',
}

/** What moves a subscription. Conditions of the API document's table are resolved by the caller into the trigger. */
export type SubscriptionTrigger =
  // commands (triggered_by api)
  | 'create' // the subscription is written, its checkout open
  | 'pause'
  | 'resume'
  | 'cancel'
  | 'change_plan' // now; or, by a renewal's webhook, a change scheduled for the period's end taking effect
  | 'schedule_change' // change-plan effective at the period's (or trial's) end: nothing else changes now
  | 'remove_scheduled_change'
  | 'remove_scheduled_cancellation' // cancel_at_period_end cleared: the subscription renews
  | 'replace_mandate' // the customer authorised a new mandate (its setup page): later charges use it
  | 'revoke_mandate' // the gateway reports the mandate revoked or expired: nothing more can be debited from it
  // gateway events (triggered_by webhook)
  | 'mandate_authorized' // trial_period_days = 0
  | 'mandate_authorized_with_trial' // trial_period_days > 0
  | 'checkout_failed' // checkout abandoned or authorisation failed
  | 'charge_succeeded' // the charge at trial end, or a dunning retry
  | 'charge_failed' // a renewal (or the trial-end charge) failed: dunning starts
  | 'retry_failed' // a dunning retry failed, more retries left
  | 'halt' // retries exhausted or a hard decline (webhook when the gateway says so, else scheduler)
  // the service's own clock (triggered_by scheduler)
  | 'trial_end_cancel' // trial ended with trial_end_action=cancel_subscription, or cancel_at_period_end in a trial
  | 'period_end_cancel' // cancel_at_period_end reached the end of the period
  | 'complete'; // max_cycles billed, or the scheduled end date reached

export type TriggeredBy = 'api' | 'webhook' | 'scheduler' | 'system';

/** A row of the table: the move's outbound event, and who may cause it. */
export interface SubscriptionTransition extends Transition<SubscriptionState, SubscriptionTrigger> {
  /** The subscription event's `event_type` and the outbox event's type. */
  readonly eventType: string;
  /** Who may cause it; the first is the usual one. */
  readonly by: readonly TriggeredBy[];
}

/** What the table's state and hooks reach of a change (subscription.lifecycle.ts SubscriptionChange). */
export interface SubscriptionMoveContext {
  readonly sub: { status: SubscriptionStatus; couponId?: string | null };
  /** Gives the subscription's coupon redemption back with the change. */
  releaseCoupon(): void;
}

/** The state before a subscription exists: its creation is the table's first move (its audit row's from_state null). */
export const NONE = 'none';
export type SubscriptionState = SubscriptionStatus | typeof NONE;

const S = SubscriptionStatus;
/** A checkout that never completed (created -> cancelled) gives its coupon redemption back. */
const releaseCoupon = (c: SubscriptionMoveContext) => {
  if (c.sub.couponId) c.releaseCoupon();
};

/** One row: `on` moves from `from` to `to`, recorded as `eventType`, caused by one of `by`, with its hooks. */
function row(
  on: SubscriptionTrigger,
  from: SubscriptionState[],
  to: SubscriptionStatus,
  eventType: string,
  by: TriggeredBy[],
  hooks?: ((c: SubscriptionMoveContext) => void)[],
): SubscriptionTransition & { hooks?: ((c: SubscriptionMoveContext) => void)[] } {
  return { on, from, to, eventType, by, hooks };
}

// A cancellation made at the gateway (its dashboard, a revoked mandate) arrives as a webhook.
const CANCEL_BY: TriggeredBy[] = ['api', 'webhook'];
// The gateway reports a checkout that failed; the scheduler ends one nobody completed.
const CHECKOUT_END_BY: TriggeredBy[] = ['webhook', 'scheduler'];
const LIVE = [S.TRIALING, S.ACTIVE, S.PAUSED, S.PAST_DUE, S.HALTED];
const CHANGE_BY: TriggeredBy[] = ['api', 'webhook'];

export const SUBSCRIPTIONS = defineMachine<
  SubscriptionState,
  SubscriptionTrigger,
  SubscriptionTransition,
  SubscriptionMoveContext
>({
  states: [NONE, ...Object.values(S)],
  transitions: [
    row('create', [NONE], S.CREATED, 'subscription.created', ['api']),
    row('mandate_authorized', [S.CREATED], S.ACTIVE, 'subscription.activated', ['webhook']),
    row('mandate_authorized_with_trial', [S.CREATED], S.TRIALING, 'subscription.trial_started', ['webhook']),
    row('checkout_failed', [S.CREATED], S.CANCELLED, 'subscription.cancelled', CHECKOUT_END_BY, [releaseCoupon]),
    row('cancel', [S.CREATED], S.CANCELLED, 'subscription.cancelled', CANCEL_BY, [releaseCoupon]),
    row('cancel', LIVE, S.CANCELLED, 'subscription.cancelled', CANCEL_BY),
    row('charge_succeeded', [S.TRIALING], S.ACTIVE, 'subscription.activated', ['webhook']),
    row('charge_succeeded', [S.PAST_DUE], S.ACTIVE, 'subscription.payment_succeeded', ['webhook']),
    row('charge_failed', [S.TRIALING, S.ACTIVE], S.PAST_DUE, 'subscription.payment_failed', ['webhook']),
    row('retry_failed', [S.PAST_DUE], S.PAST_DUE, 'subscription.payment_failed', ['webhook']),
    row('halt', [S.PAST_DUE], S.HALTED, 'subscription.halted', ['webhook', 'scheduler']),
    row('trial_end_cancel', [S.TRIALING], S.CANCELLED, 'subscription.cancelled', ['scheduler', 'webhook']),
    row('period_end_cancel', [S.ACTIVE], S.CANCELLED, 'subscription.cancelled', ['scheduler', 'webhook']),
    row('complete', [S.ACTIVE], S.COMPLETED, 'subscription.completed', ['scheduler']),
    row('pause', [S.ACTIVE], S.PAUSED, 'subscription.paused', ['api']),
    row('resume', [S.PAUSED], S.ACTIVE, 'subscription.resumed', ['api']),
    // A change scheduled for the period's end takes effect with the renewal the gateway reports (by its webhook).
    row('change_plan', [S.TRIALING], S.TRIALING, 'subscription.plan_changed', CHANGE_BY),
    row('change_plan', [S.ACTIVE], S.ACTIVE, 'subscription.plan_changed', CHANGE_BY),
    // Scheduled changes (docs/subscriptions.md "Scheduled changes"): the state stays; the audit row says what changed.
    row('schedule_change', [S.TRIALING], S.TRIALING, 'subscription.plan_change_scheduled', ['api']),
    row('schedule_change', [S.ACTIVE], S.ACTIVE, 'subscription.plan_change_scheduled', ['api']),
    row('remove_scheduled_change', [S.TRIALING], S.TRIALING, 'subscription.scheduled_change_removed', ['api']),
    row('remove_scheduled_change', [S.ACTIVE], S.ACTIVE, 'subscription.scheduled_change_removed', ['api']),
    row('remove_scheduled_cancellation', [S.ACTIVE], S.ACTIVE, 'subscription.cancellation_removed', ['api']),
    // A new mandate (docs/subscriptions.md "Replacing the mandate"): the state stays, the gateway event says so.
    row('replace_mandate', [S.TRIALING], S.TRIALING, 'subscription.mandate_updated', ['webhook']),
    row('replace_mandate', [S.ACTIVE], S.ACTIVE, 'subscription.mandate_updated', ['webhook']),
    row('replace_mandate', [S.PAST_DUE], S.PAST_DUE, 'subscription.mandate_updated', ['webhook']),
    row('replace_mandate', [S.PAUSED], S.PAUSED, 'subscription.mandate_updated', ['webhook']),
    // The mandate revoked or expired at the gateway, or past its validity at the next debit's notice (docs/india.md
    // "Mandates"): the state stays until a debit fails.
    row('revoke_mandate', [S.TRIALING], S.TRIALING, 'subscription.mandate_revoked', ['webhook', 'scheduler']),
    row('revoke_mandate', [S.ACTIVE], S.ACTIVE, 'subscription.mandate_revoked', ['webhook', 'scheduler']),
    row('revoke_mandate', [S.PAST_DUE], S.PAST_DUE, 'subscription.mandate_revoked', ['webhook', 'scheduler']),
    row('revoke_mandate', [S.PAUSED], S.PAUSED, 'subscription.mandate_revoked', ['webhook', 'scheduler']),
    // None leaves cancelled or completed: a cancelled subscription cannot be resumed, a completed one has ended.
  ],
  refused: (from, on) =>
    new DomainError(
      'invalid_state_transition',
      `Cannot ${on.replace(/_/g, ' ')} a subscription that is ${from.replace(/_/g, ' ')}.`,
    ),
  state: {
    get: (c) => c.sub.status,
    set: (c, to) => {
      c.sub.status = to as SubscriptionStatus; // no row moves to NONE
    },
  },
});

export const TERMINAL: ReadonlySet<SubscriptionStatus> = new Set(
  Object.values(S).filter((s) => SUBSCRIPTIONS.isTerminal(s)),
);

/** The transition `trigger` makes from `from`, or null when the table has none. */
export function transitionFor(from: SubscriptionState, trigger: SubscriptionTrigger): SubscriptionTransition | null {
  return SUBSCRIPTIONS.find(from, trigger);
}

/**
 * The transition `trigger` makes from `from`, caused by `by`; otherwise 409 `invalid_state_transition` naming the
 * current status and the command (docs/api.md). Gateway events that do not apply are the caller's to ignore
 * (`transitionFor` first), since a gateway may repeat or reorder them.
 */
export function transition(
  from: SubscriptionState,
  trigger: SubscriptionTrigger,
  by: TriggeredBy,
): SubscriptionTransition {
  return SUBSCRIPTIONS.check(from, trigger, (t) => t.by.includes(by));
}

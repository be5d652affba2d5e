import { DomainError } from '../../core/errors';

/**
 * The subscription state machine as one table (the API document's "States and transitions" plus docs/subscriptions.md):
 * every transition of the engine (commands, gateway webhooks, the scheduler) is looked up here, and anything the table
 * does not list is 409 `invalid_state_transition`, changing nothing.
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
  | 'pause'
  | 'resume'
  | 'cancel'
  | 'change_plan'
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

export interface Transition {
  to: SubscriptionStatus;
  /** The subscription event's `event_type` and the outbox event's type (docs/subscriptions.md, docs/webhooks.md). */
  eventType: string;
  /** Who may cause it; the first is the usual one. */
  by: readonly TriggeredBy[];
}

const S = SubscriptionStatus;
// A cancellation made at the gateway (its dashboard, a revoked mandate) arrives as a webhook.
const cancelled: Transition = { to: S.CANCELLED, eventType: 'subscription.cancelled', by: ['api', 'webhook'] };

export const TRANSITIONS: Readonly<Record<SubscriptionStatus, Partial<Record<SubscriptionTrigger, Transition>>>> = {
  [S.CREATED]: {
    mandate_authorized: { to: S.ACTIVE, eventType: 'subscription.activated', by: ['webhook'] },
    mandate_authorized_with_trial: { to: S.TRIALING, eventType: 'subscription.trial_started', by: ['webhook'] },
    checkout_failed: { to: S.CANCELLED, eventType: 'subscription.cancelled', by: ['webhook', 'scheduler'] },
    cancel: cancelled,
  },
  [S.TRIALING]: {
    charge_succeeded: { to: S.ACTIVE, eventType: 'subscription.activated', by: ['webhook'] },
    charge_failed: { to: S.PAST_DUE, eventType: 'subscription.payment_failed', by: ['webhook'] },
    trial_end_cancel: { to: S.CANCELLED, eventType: 'subscription.cancelled', by: ['scheduler', 'webhook'] },
    cancel: cancelled,
    change_plan: { to: S.TRIALING, eventType: 'subscription.plan_changed', by: ['api'] },
  },
  [S.ACTIVE]: {
    pause: { to: S.PAUSED, eventType: 'subscription.paused', by: ['api'] },
    charge_failed: { to: S.PAST_DUE, eventType: 'subscription.payment_failed', by: ['webhook'] },
    cancel: cancelled,
    period_end_cancel: { to: S.CANCELLED, eventType: 'subscription.cancelled', by: ['scheduler', 'webhook'] },
    complete: { to: S.COMPLETED, eventType: 'subscription.completed', by: ['scheduler'] },
    change_plan: { to: S.ACTIVE, eventType: 'subscription.plan_changed', by: ['api'] },
  },
  [S.PAUSED]: {
    resume: { to: S.ACTIVE, eventType: 'subscription.resumed', by: ['api'] },
    cancel: cancelled,
  },
  [S.PAST_DUE]: {
    charge_succeeded: { to: S.ACTIVE, eventType: 'subscription.payment_succeeded', by: ['webhook'] },
    retry_failed: { to: S.PAST_DUE, eventType: 'subscription.payment_failed', by: ['webhook'] },
    halt: { to: S.HALTED, eventType: 'subscription.halted', by: ['webhook', 'scheduler'] },
    cancel: cancelled,
  },
  [S.HALTED]: {
    cancel: cancelled,
  },
  // Terminal: a cancelled subscription cannot be resumed, a completed one has ended.
  [S.CANCELLED]: {},
  [S.COMPLETED]: {},
};

export const TERMINAL: ReadonlySet<SubscriptionStatus> = new Set([S.CANCELLED, S.COMPLETED]);

/** The transition `trigger` makes from `from`, or null when the table has none. */
export function transitionFor(from: SubscriptionStatus, trigger: SubscriptionTrigger): Transition | null {
  return TRANSITIONS[from][trigger] ?? null;
}

/**
 * The transition `trigger` makes from `from`, caused by `by`; otherwise 409 `invalid_state_transition` naming the
 * current status and the command (docs/api.md). Gateway events that do not apply are the caller's to ignore
 * (`transitionFor` first), since a gateway may repeat or reorder them.
 */
export function transition(from: SubscriptionStatus, trigger: SubscriptionTrigger, by: TriggeredBy): Transition {
  const t = transitionFor(from, trigger);
  if (!t || !t.by.includes(by)) {
    throw new DomainError(
      'invalid_state_transition',
      `Cannot ${trigger.replace(/_/g, ' ')} a subscription that is ${from.replace(/_/g, ' ')}.`,
    );
  }
  return t;
}

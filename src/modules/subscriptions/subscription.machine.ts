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
// A cancellation made at the gateway (its dashboard, a revoked mandate) arrives as a webhook.
const CANCEL_BY: TriggeredBy[] = ['api', 'webhook'];
const CANCELLED = 'subscription.cancelled';

export const SUBSCRIPTIONS = defineMachine<SubscriptionState, SubscriptionTrigger, SubscriptionTransition, SubscriptionMoveContext>({
  states: [NONE, ...Object.values(S)],
  transitions: [
    { on: 'create', from: [NONE], to: S.CREATED, eventType: 'subscription.created', by: ['api'] },
    { on: 'mandate_authorized', from: [S.CREATED], to: S.ACTIVE, eventType: 'subscription.activated', by: ['webhook'] },
    { on: 'mandate_authorized_with_trial', from: [S.CREATED], to: S.TRIALING, eventType: 'subscription.trial_started', by: ['webhook'] },
    { on: 'checkout_failed', from: [S.CREATED], to: S.CANCELLED, eventType: CANCELLED, by: ['webhook', 'scheduler'], hooks: [releaseCoupon] },
    { on: 'cancel', from: [S.CREATED], to: S.CANCELLED, eventType: CANCELLED, by: CANCEL_BY, hooks: [releaseCoupon] },
    { on: 'charge_succeeded', from: [S.TRIALING], to: S.ACTIVE, eventType: 'subscription.activated', by: ['webhook'] },
    { on: 'charge_succeeded', from: [S.PAST_DUE], to: S.ACTIVE, eventType: 'subscription.payment_succeeded', by: ['webhook'] },
    { on: 'charge_failed', from: [S.TRIALING, S.ACTIVE], to: S.PAST_DUE, eventType: 'subscription.payment_failed', by: ['webhook'] },
    { on: 'retry_failed', from: [S.PAST_DUE], to: S.PAST_DUE, eventType: 'subscription.payment_failed', by: ['webhook'] },
    { on: 'halt', from: [S.PAST_DUE], to: S.HALTED, eventType: 'subscription.halted', by: ['webhook', 'scheduler'] },
    { on: 'trial_end_cancel', from: [S.TRIALING], to: S.CANCELLED, eventType: CANCELLED, by: ['scheduler', 'webhook'] },
    { on: 'period_end_cancel', from: [S.ACTIVE], to: S.CANCELLED, eventType: CANCELLED, by: ['scheduler', 'webhook'] },
    { on: 'cancel', from: [S.TRIALING, S.ACTIVE, S.PAUSED, S.PAST_DUE, S.HALTED], to: S.CANCELLED, eventType: CANCELLED, by: CANCEL_BY },
    { on: 'pause', from: [S.ACTIVE], to: S.PAUSED, eventType: 'subscription.paused', by: ['api'] },
    { on: 'resume', from: [S.PAUSED], to: S.ACTIVE, eventType: 'subscription.resumed', by: ['api'] },
    { on: 'complete', from: [S.ACTIVE], to: S.COMPLETED, eventType: 'subscription.completed', by: ['scheduler'] },
    { on: 'change_plan', from: [S.TRIALING], to: S.TRIALING, eventType: 'subscription.plan_changed', by: ['api'] },
    { on: 'change_plan', from: [S.ACTIVE], to: S.ACTIVE, eventType: 'subscription.plan_changed', by: ['api'] },
    // Terminal: a cancelled subscription cannot be resumed, a completed one has ended.
  ],
  refused: (from, on) =>
    new DomainError('invalid_state_transition', `Cannot ${on.replace(/_/g, ' ')} a subscription that is ${from.replace(/_/g, ' ')}.`),
  state: {
    get: (c) => c.sub.status,
    set: (c, to) => {
      c.sub.status = to as SubscriptionStatus; // no row moves to NONE
    },
  },
});

export const TERMINAL: ReadonlySet<SubscriptionStatus> = new Set(Object.values(S).filter((s) => SUBSCRIPTIONS.isTerminal(s)));

/** The transition `trigger` makes from `from`, or null when the table has none. */
export function transitionFor(from: SubscriptionState, trigger: SubscriptionTrigger): SubscriptionTransition | null {
  return SUBSCRIPTIONS.find(from, trigger);
}

/**
 * The transition `trigger` makes from `from`, caused by `by`; otherwise 409 `invalid_state_transition` naming the
 * current status and the command (contract 3). Gateway events that do not apply are the caller's to ignore
 * (`transitionFor` first), since a gateway may repeat or reorder them.
 */
export function transition(from: SubscriptionState, trigger: SubscriptionTrigger, by: TriggeredBy): SubscriptionTransition {
  return SUBSCRIPTIONS.check(from, trigger, (t) => t.by.includes(by));
}

import { DomainError } from '../../src/core/errors';
import {
  NONE,
  SubscriptionStatus as S,
  SubscriptionTrigger,
  SUBSCRIPTIONS,
  TERMINAL,
  transition,
  transitionFor,
  TriggeredBy,
} from '../../src/modules/subscriptions/subscription.machine';

/**
 * The API document's state table and the state rules (docs/subscriptions.md), written out independently of the module:
 * every (state, trigger, source) triple is checked against it, so a row added, dropped or changed in the module fails
 * here.
 */
const ALLOWED: [S, SubscriptionTrigger, TriggeredBy, S, string][] = [
  [S.CREATED, 'mandate_authorized', 'webhook', S.ACTIVE, 'subscription.activated'],
  [S.CREATED, 'mandate_authorized_with_trial', 'webhook', S.TRIALING, 'subscription.trial_started'],
  [S.CREATED, 'checkout_failed', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.CREATED, 'checkout_failed', 'scheduler', S.CANCELLED, 'subscription.cancelled'],
  [S.CREATED, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.CREATED, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.TRIALING, 'charge_succeeded', 'webhook', S.ACTIVE, 'subscription.activated'],
  [S.TRIALING, 'charge_failed', 'webhook', S.PAST_DUE, 'subscription.payment_failed'],
  [S.TRIALING, 'trial_end_cancel', 'scheduler', S.CANCELLED, 'subscription.cancelled'],
  [S.TRIALING, 'trial_end_cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.TRIALING, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.TRIALING, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.TRIALING, 'change_plan', 'api', S.TRIALING, 'subscription.plan_changed'],
  [S.TRIALING, 'change_plan', 'webhook', S.TRIALING, 'subscription.plan_changed'],
  [S.TRIALING, 'schedule_change', 'api', S.TRIALING, 'subscription.plan_change_scheduled'],
  [S.TRIALING, 'remove_scheduled_change', 'api', S.TRIALING, 'subscription.scheduled_change_removed'],
  [S.ACTIVE, 'pause', 'api', S.PAUSED, 'subscription.paused'],
  [S.ACTIVE, 'charge_failed', 'webhook', S.PAST_DUE, 'subscription.payment_failed'],
  [S.ACTIVE, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.ACTIVE, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.ACTIVE, 'period_end_cancel', 'scheduler', S.CANCELLED, 'subscription.cancelled'],
  [S.ACTIVE, 'period_end_cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.ACTIVE, 'complete', 'scheduler', S.COMPLETED, 'subscription.completed'],
  [S.ACTIVE, 'change_plan', 'api', S.ACTIVE, 'subscription.plan_changed'],
  [S.ACTIVE, 'change_plan', 'webhook', S.ACTIVE, 'subscription.plan_changed'],
  [S.ACTIVE, 'schedule_change', 'api', S.ACTIVE, 'subscription.plan_change_scheduled'],
  [S.ACTIVE, 'remove_scheduled_change', 'api', S.ACTIVE, 'subscription.scheduled_change_removed'],
  [S.ACTIVE, 'remove_scheduled_cancellation', 'api', S.ACTIVE, 'subscription.cancellation_removed'],
  [S.PAUSED, 'resume', 'api', S.ACTIVE, 'subscription.resumed'],
  [S.PAUSED, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.PAUSED, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.PAST_DUE, 'charge_succeeded', 'webhook', S.ACTIVE, 'subscription.payment_succeeded'],
  [S.PAST_DUE, 'retry_failed', 'webhook', S.PAST_DUE, 'subscription.payment_failed'],
  [S.PAST_DUE, 'halt', 'webhook', S.HALTED, 'subscription.halted'],
  [S.PAST_DUE, 'halt', 'scheduler', S.HALTED, 'subscription.halted'],
  [S.PAST_DUE, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.PAST_DUE, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  [S.HALTED, 'cancel', 'api', S.CANCELLED, 'subscription.cancelled'],
  [S.HALTED, 'cancel', 'webhook', S.CANCELLED, 'subscription.cancelled'],
  // A new mandate the customer authorised: the state stays (halted, cancelled and completed keep no mandate).
  [S.TRIALING, 'replace_mandate', 'webhook', S.TRIALING, 'subscription.mandate_updated'],
  [S.ACTIVE, 'replace_mandate', 'webhook', S.ACTIVE, 'subscription.mandate_updated'],
  [S.PAST_DUE, 'replace_mandate', 'webhook', S.PAST_DUE, 'subscription.mandate_updated'],
  [S.PAUSED, 'replace_mandate', 'webhook', S.PAUSED, 'subscription.mandate_updated'],
  [S.TRIALING, 'revoke_mandate', 'webhook', S.TRIALING, 'subscription.mandate_revoked'],
  [S.TRIALING, 'revoke_mandate', 'scheduler', S.TRIALING, 'subscription.mandate_revoked'],
  [S.ACTIVE, 'revoke_mandate', 'webhook', S.ACTIVE, 'subscription.mandate_revoked'],
  [S.ACTIVE, 'revoke_mandate', 'scheduler', S.ACTIVE, 'subscription.mandate_revoked'],
  [S.PAST_DUE, 'revoke_mandate', 'webhook', S.PAST_DUE, 'subscription.mandate_revoked'],
  [S.PAST_DUE, 'revoke_mandate', 'scheduler', S.PAST_DUE, 'subscription.mandate_revoked'],
  [S.PAUSED, 'revoke_mandate', 'webhook', S.PAUSED, 'subscription.mandate_revoked'],
  [S.PAUSED, 'revoke_mandate', 'scheduler', S.PAUSED, 'subscription.mandate_revoked'],
];

const STATES = Object.values(S);
const TRIGGERS: SubscriptionTrigger[] = [
  'pause',
  'resume',
  'cancel',
  'change_plan',
  'schedule_change',
  'remove_scheduled_change',
  'remove_scheduled_cancellation',
  'replace_mandate',
  'revoke_mandate',
  'mandate_authorized',
  'mandate_authorized_with_trial',
  'checkout_failed',
  'charge_succeeded',
  'charge_failed',
  'retry_failed',
  'halt',
  'trial_end_cancel',
  'period_end_cancel',
  'complete',
];
const SOURCES: TriggeredBy[] = ['api', 'webhook', 'scheduler', 'system'];

describe('subscription state machine', () => {
  const pairs = STATES.flatMap((from) =>
    TRIGGERS.flatMap((trigger) => SOURCES.map((by) => [from, trigger, by] as const)),
  );

  it.each(pairs)('%s + %s by %s', (from, trigger, by) => {
    const row = ALLOWED.find(([f, t, b]) => f === from && t === trigger && b === by);
    if (row) {
      expect(transition(from, trigger, by)).toMatchObject({ to: row[3], eventType: row[4] });
      return;
    }
    let err: unknown;
    try {
      transition(from, trigger, by);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject({ code: 'invalid_state_transition', status: 409 });
    // The message names the current status and the command (docs/api.md).
    expect((err as Error).message).toContain(from.replace(/_/g, ' '));
    expect((err as Error).message).toContain(trigger.replace(/_/g, ' '));
  });

  it('lists every trigger the module knows, and no row beyond the expected ones', () => {
    const inModule = STATES.flatMap((from) => SUBSCRIPTIONS.events(from).map((t) => `${from}:${t}`)).sort();
    const expected = [...new Set(ALLOWED.map(([f, t]) => `${f}:${t}`))].sort();
    expect(inModule).toEqual(expected);
    for (const from of STATES) for (const t of SUBSCRIPTIONS.events(from)) expect(TRIGGERS).toContain(t);
  });

  it('creation is the first move: from none to created, by the API only, and nothing else leaves none', () => {
    expect(transition(NONE, 'create', 'api')).toMatchObject({ to: S.CREATED, eventType: 'subscription.created' });
    expect(SUBSCRIPTIONS.events(NONE)).toEqual(['create']);
    for (const by of SOURCES.filter((b) => b !== 'api')) {
      expect(() => transition(NONE, 'create', by)).toThrow(DomainError);
    }
    for (const from of STATES) expect(transitionFor(from, 'create')).toBeNull();
  });

  it('terminal states have no way out: a cancelled subscription cannot be resumed', () => {
    expect([...TERMINAL].sort()).toEqual([S.CANCELLED, S.COMPLETED].sort());
    for (const from of TERMINAL) for (const t of TRIGGERS) expect(transitionFor(from, t)).toBeNull();
    expect(() => transition(S.CANCELLED, 'resume', 'api')).toThrow(/Cannot resume a subscription that is cancelled/);
  });
});

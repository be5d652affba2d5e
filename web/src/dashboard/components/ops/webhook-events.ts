/** The event kinds Cadence sends (docs/webhooks.md): the choices for an endpoint's events and for a test event. */
export const EVENT_TYPES = [
  'payment.succeeded',
  'payment.failed',
  'payment.refunded',
  'subscription.created',
  'subscription.activated',
  'subscription.trial_started',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'subscription.cancellation_removed',
  'subscription.payment_failed',
  'subscription.payment_succeeded',
  'subscription.halted',
  'subscription.completed',
  'subscription.plan_changed',
  'subscription.plan_change_scheduled',
  'subscription.scheduled_change_removed',
  'invoice.created',
  'invoice.paid',
  'invoice.upcoming',
  'invoice.payment_action_required',
  'credit_note.created',
  'webhook_endpoint.disabled',
];

/** Endpoint filters: every event, a family by prefix, or one kind. */
export const EVENT_FILTERS = ['*', 'payment.*', 'subscription.*', 'invoice.*', ...EVENT_TYPES];

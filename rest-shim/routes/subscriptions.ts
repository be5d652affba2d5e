import type { Route } from '../routes';

const PAGE = 'pageInfo { hasNextPage endCursor }';
const SUB = '...BillingSubscriptionFields scheduledChange { ...ScheduledChangeFields }';
const COMMAND: Pick<Route, 'tag' | 'conflicts' | 'gateway'> = {
  tag: 'Subscriptions',
  conflicts: ['invalid_state_transition'],
  gateway: true,
};

/** Subscriptions (src/modules/subscriptions): create, read, the lifecycle commands and the audit trail. */
export const SUBSCRIPTION_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/subscriptions',
    tag: 'Subscriptions',
    status: 201,
    idempotent: true,
    conflicts: ['provider_not_connected'],
    gateway: true,
    summary:
      "Create a subscription: registers the plan's price at the gateway (once) and answers the hosted mandate checkout_url.",
    document: `mutation($input: CreateSubscriptionInput!, $idempotencyKey: String) { createSubscription(input: $input, idempotencyKey: $idempotencyKey) { ${SUB} } }`,
  },
  {
    method: 'get',
    path: '/subscriptions',
    tag: 'Subscriptions',
    summary: 'List subscriptions, newest first (filters: status, customer_id, plan_id).',
    document: `query($first: Int, $after: String, $status: SubscriptionStatus, $customerId: ID, $planId: ID) {
      subscriptions(first: $first, after: $after, status: $status, customerId: $customerId, planId: $planId) { edges { node { ${SUB} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/subscriptions/{id}',
    tag: 'Subscriptions',
    summary: 'Retrieve a subscription: status, billing periods, trial, gateway references.',
    document: `query($id: ID!) { subscription(id: $id) { ${SUB} } }`,
  },
  {
    method: 'get',
    path: '/subscriptions/{id}/events',
    tag: 'Subscriptions',
    summary: "The subscription's state transitions: a bare JSON array, oldest first.",
    document: 'query($id: ID!) { subscriptionEvents(id: $id) { ...SubscriptionEventFields } }',
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/pause',
    ...COMMAND,
    summary: 'Pause an active subscription (the gateway stops charging; the mandate stays).',
    document: `mutation($id: ID!) { pauseSubscription(id: $id) { ${SUB} } }`,
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/resume',
    ...COMMAND,
    summary: 'Resume a paused subscription.',
    document: `mutation($id: ID!) { resumeSubscription(id: $id) { ${SUB} } }`,
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/cancel',
    ...COMMAND,
    summary: 'Cancel now, or with cancel_at_period_end=true (query or body) at the end of the current period or trial.',
    document: `mutation($id: ID!, $cancelAtPeriodEnd: Boolean) { cancelSubscription(id: $id, cancelAtPeriodEnd: $cancelAtPeriodEnd) { ${SUB} } }`,
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/change-plan',
    ...COMMAND,
    summary:
      'Move to another plan or price mid-cycle (prorated credit and debit, an adjustment invoice or a credit note, the gateway synced), or with effective=period_end at the end of the current period (shown as scheduled_change; proration null).',
    document: `mutation($id: ID!, $input: ChangePlanInput!) { changeSubscriptionPlan(id: $id, input: $input) {
      subscription { ${SUB} } proration { ...ProrationFields }
      invoice { ...InvoiceFields supplier { ...InvoiceSupplierFields } recipient { ...InvoiceRecipientFields } lineItems { ...InvoiceLineItemFields } } creditNote { ...InvoiceFields supplier { ...InvoiceSupplierFields } recipient { ...InvoiceRecipientFields } lineItems { ...InvoiceLineItemFields } } } }`,
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/change-plan/preview',
    tag: 'Subscriptions',
    conflicts: ['invalid_state_transition'],
    summary:
      'What change-plan with the same body would do now (proration, GST, the total collected or credited), with nothing changed and no gateway called.',
    document: `query($id: ID!, $input: ChangePlanInput!) { previewPlanChange(id: $id, input: $input) { ...PlanChangePreviewFields proration { ...ProrationFields } } }`,
  },
  {
    method: 'delete',
    path: '/subscriptions/{id}/scheduled-change',
    ...COMMAND,
    summary: 'Remove the plan change scheduled for the period end: the renewal bills the current plan.',
    document: `mutation($id: ID!) { removeScheduledChange(id: $id) { ${SUB} } }`,
  },
  {
    method: 'delete',
    path: '/subscriptions/{id}/scheduled-cancellation',
    ...COMMAND,
    summary: 'Clear cancel_at_period_end on an active subscription: it renews at the period end.',
    document: `mutation($id: ID!) { removeScheduledCancellation(id: $id) { ${SUB} } }`,
  },
  {
    method: 'post',
    path: '/subscriptions/{id}/mandate-setup',
    tag: 'Subscriptions',
    status: 201,
    conflicts: ['invalid_state_transition', 'mandate_update_unsupported'],
    gateway: true,
    summary:
      "The gateway's page where the customer of a running subscription authorises a new mandate (Stripe; Razorpay answers 409 mandate_update_unsupported). Once completed the subscription records subscription.mandate_updated and charges the new mandate.",
    document:
      'mutation($id: ID!, $input: MandateSetupInput!) { createMandateSetup(id: $id, input: $input) { ...MandateSetupFields } }',
  },
  {
    method: 'post',
    path: '/merchant/billing-settings',
    tag: 'Merchant',
    summary:
      "Update the merchant's billing settings: max_retries (0 to 10, default 3) of the dunning policy; mandate_afa_limit (paise, default 1500000: INR 15,000), the largest recurring INR mandate debit made without the customer's authentication.",
    document:
      'mutation($maxRetries: Int, $mandateAfaLimit: Int) { updateBillingSettings(maxRetries: $maxRetries, mandateAfaLimit: $mandateAfaLimit) { ...BillingSettingsFields } }',
  },
];

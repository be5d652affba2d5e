import type { Route } from '../routes';

const TAG = 'Usage';
const EVENT = '...UsageEventFields';

/** Metered usage (src/modules/usage): report events one by one or in batches, read the sums per billing period. */
export const USAGE_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/usage/events',
    tag: TAG,
    status: 201,
    idempotent: true,
    conflicts: ['subscription_not_billable'],
    summary:
      "Report a usage event: subscription_id, event_type, quantity (exact decimal, >= 0), unit, optional metadata, timestamp (default: the merchant's now) and idempotency_key. Answers the event with the billing period it was counted in.",
    document: `mutation($input: ReportUsageInput!, $idempotencyKey: String) { reportUsage(input: $input, idempotencyKey: $idempotencyKey) { ${EVENT} } }`,
  },
  {
    method: 'post',
    path: '/usage/events/batch',
    tag: TAG,
    status: 201,
    idempotent: true,
    conflicts: ['subscription_not_billable'],
    summary:
      'Report up to 1,000 usage events ({"events": [...]}), all or nothing; answers {"object": "list", "data": [...]} in input order.',
    document: `mutation($input: ReportUsageBatchInput!, $idempotencyKey: String) { reportUsageBatch(input: $input, idempotencyKey: $idempotencyKey) { object data { ${EVENT} } } }`,
  },
  {
    method: 'get',
    path: '/usage/summary',
    tag: TAG,
    summary:
      "A subscription's usage (query: subscription_id): one aggregation per billing period and event type, newest period first.",
    document:
      'query($subscriptionId: ID!) { usageSummary(subscriptionId: $subscriptionId) { object subscriptionId aggregations { ...UsageAggregationFields } } }',
  },
];

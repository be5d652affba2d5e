import type { Route } from '../routes';

const TAG = 'Analytics';

/**
 * Autopay (mandate attempts) and retention cohorts (src/modules/analytics autopay.* and cohorts.*; docs/analytics.md).
 * Query parameters: currency, from / to (ISO 8601; windows are (from, to]), cohorts also granularity (month | week).
 */
export const ANALYTICS_RETENTION_ROUTES: Route[] = [
  {
    method: 'get',
    path: '/analytics/autopay',
    tag: TAG,
    summary:
      "Mandate attempts over from..to (default the 30 days ending at the merchant's now): every subscription mandate checkout completed or failed at the gateway, with attempts, authorized, failed and success_rate, by_method (upi, card, emandate), failure_reasons and banks (issuer, UPI PSP or e-mandate bank). With currency, only the attempts of subscriptions billed in it (default: every currency).",
    document:
      'query($currency: String, $from: String, $to: String) { autopay(currency: $currency, from: $from, to: $to) { ...AutopayReportFields byMethod { ...AutopayMethodStatsFields } failureReasons { ...AutopayFailureReasonFields } banks { ...AutopayBankStatsFields } preDebitNotices { ...PreDebitNoticeStatsFields } authentication { ...AutopayAuthenticationStatsFields } } }',
  },
  {
    method: 'get',
    path: '/analytics/cohorts',
    tag: TAG,
    summary:
      'Retention cohorts: customers grouped by the month or week (granularity, from Monday 00:00 UTC) they first became paying in currency; for each period since, the customers with a subscription counted in MRR at its end, and the rate. Cohorts: the periods overlapping from..to, default the last 12 ending now.',
    document:
      'query($granularity: AnalyticsInterval, $currency: String, $from: String, $to: String) { cohorts(granularity: $granularity, currency: $currency, from: $from, to: $to) { ...CohortAnalyticsFields cohorts { ...CohortFields retention { ...CohortPeriodFields } } } }',
  },
];

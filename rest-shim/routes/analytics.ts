import type { Route } from '../routes';

const TAG = 'Analytics';
const WINDOW = '$currency: String, $from: String, $to: String, $interval: AnalyticsInterval';
const WINDOW_ARGS = 'currency: $currency, from: $from, to: $to, interval: $interval';

/**
 * MRR, churn, LTV and quick ratio (src/modules/analytics; docs/analytics.md). Query parameters:
 * currency (default the merchant's reporting currency), from / to (ISO 8601; default the 30 days ending at the
 * merchant's now, 90 for LTV), interval (month | week; not LTV).
 */
export const ANALYTICS_ROUTES: Route[] = [
  {
    method: 'get',
    path: '/analytics/mrr',
    tag: TAG,
    summary:
      "MRR, ARR, active subscriptions, paying customers and ARPU at `to` (as_of), the MRR movements over from..to (new, expansion, contraction, churn, reactivation, net_new) and a series by interval (month | week) with each bucket's MRR at its end.",
    document: `query(${WINDOW}) { mrr(${WINDOW_ARGS}) { ...MrrAnalyticsFields movements { ...MrrMovementsFields } series { ...MrrSeriesPointFields } } }`,
  },
  {
    method: 'get',
    path: '/analytics/churn',
    tag: TAG,
    summary:
      'Logo churn (churned subscriptions / subscriptions at from) and revenue churn ((churned + contraction MRR) / MRR at from) over from..to, with a series by interval.',
    document: `query(${WINDOW}) { churn(${WINDOW_ARGS}) { ...ChurnAnalyticsFields series { ...ChurnSeriesPointFields } } }`,
  },
  {
    method: 'get',
    path: '/analytics/ltv',
    tag: TAG,
    summary:
      "ARPU at `to`, the monthly logo churn rate (the logo churn over from..to x 30 days / the window's length; default the 90 days ending at the merchant's now, so x 30 / 90), LTV = ARPU / that rate and the expected lifetime in months (null when the rate is 0).",
    document:
      'query($currency: String, $from: String, $to: String) { ltv(currency: $currency, from: $from, to: $to) { ...LtvAnalyticsFields } }',
  },
  {
    method: 'get',
    path: '/analytics/quick-ratio',
    tag: TAG,
    summary:
      'Quick ratio = (new + expansion MRR) / (contraction + churn MRR) over from..to (null when nothing was lost); healthy when above 4. With a series by interval.',
    document: `query(${WINDOW}) { quickRatio(${WINDOW_ARGS}) { ...QuickRatioAnalyticsFields series { ...QuickRatioSeriesPointFields } } }`,
  },
];

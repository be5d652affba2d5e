/**
 * Reporting (MRR, cohorts, autopay): the ledgers subscriptions write and the reports read from them.
 * The module's public surface: other modules import it only through this file.
 */
export { analyticsResolvers } from './analytics.resolver';
export { AnalyticsService } from './analytics.service';
export { customerMrrSql } from './analytics.store';
export { autopayResolvers } from './autopay.resolver';
export { recordMandateAttempt } from './autopay.service';
export type { SubscriptionInCurrencySql } from './autopay.store';
export { cohortsResolvers } from './cohorts.resolver';
export { mrrStateOf, recordMrrMovement } from './mrr-ledger';
export type { MrrState } from './mrr-ledger';

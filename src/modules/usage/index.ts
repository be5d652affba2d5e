/**
 * Usage events, their aggregates, and the close that hands them to billing.
 * The module's public surface: other modules import it only through this file.
 */
export { closeUnbilledUsage } from './usage.billing.store';
export type { ClosedUsage } from './usage.billing.store';
export { monthOf } from './usage.partitions';
export { usageResolvers } from './usage.resolver';
export { UsageService } from './usage.service';
export { createPartition } from './usage.store';
export type { SubscriptionPeriodColumn, SubscriptionPeriodsSql } from './usage.store';

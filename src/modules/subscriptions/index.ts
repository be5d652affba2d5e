/**
 * Subscriptions: their lifecycle, gateway events, scheduler and usage billing.
 * The module's public surface: other modules import it only through this file.
 */
export { subscriptionChanges } from './subscription.catchup';
export { BillingSubscription, GatewayClockSync, SubscriptionEvent } from './subscription.entities';
export { PreDebitNotice, PreDebitKind } from './pre-debit.entities';
export { subscriptionResolvers } from './subscription.resolver';
export { SchedulerLoop, SubscriptionScheduler } from './subscription.scheduler';
export { SubscriptionService } from './subscription.service';
export { ChangePlanInput } from './subscription.inputs';
export { SubscriptionStatus } from './subscription.machine';
export { ChangePlanResult, PlanChangePreview } from './change-plan';
export { MandateSetup, MandateSetupInput } from './mandate-setup';
export { dueActionCount, openSubscriptionsOfConnection, subscriptionSql } from './subscription.store';

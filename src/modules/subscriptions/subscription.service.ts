/** Subscriptions: create, commands, gateway events and the scheduler's actions (stub, being written). */
export class SubscriptionService {}

/**
 * Webhook endpoints and the delivery of events to them.
 * The module's public surface: other modules import it only through this file.
 */
export { leaseMsFor } from './delivery.policy';
export { pendingDeliveryCount } from './delivery.store';
export { WebhookDispatcher } from './dispatcher';
export { LIVE_EVENTS_BUFFER, LiveEvents } from './live-events';
export { DeliveryRuntime } from './runtime';
export { deliveryHeaders, newWebhookSecret } from './signing';
export { TEST_EVENT_TYPES } from './test-events';
export { WebhookDelivery, WebhookEndpoint } from './webhook.entities';
export { webhookResolvers } from './webhook.resolver';
export { WebhookService } from './webhook.service';

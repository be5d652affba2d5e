/**
 * Webhook endpoints and the delivery of events to them.
 * The module's public surface: other modules import it only through this file.
 */
export { leaseMsFor } from './delivery.policy';
export { WebhookDispatcher } from './dispatcher';
export { DeliveryRuntime } from './runtime';
export { WebhookDelivery, WebhookEndpoint } from './webhook.entities';
export { webhookResolvers } from './webhook.resolver';
export { WebhookService } from './webhook.service';

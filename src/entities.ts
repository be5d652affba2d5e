import { TenantEntity } from './core/entity';
import { OutboxEvent } from './core/events';
import { IdempotencyKey } from './modules/idempotency/idempotency.entities';
import { CatalogVersion } from './modules/catalog/catalog.entities';
import { Plan, Price, Product, ProductFamily } from './modules/catalog/catalog.entities';
import { Customer } from './modules/customers/customer.entities';
import { ApiKey, Merchant } from './modules/merchants/merchant.entities';
import { GatewayEventRecord, Payment, Refund } from './modules/payments/payment.entities';
import { ProviderConnection } from './modules/providers/provider-connection.entities';
import { BillingSubscription, GatewayClockSync, SubscriptionEvent } from './modules/subscriptions/subscription.entities';
import { Invoice, InvoiceSequence } from './modules/invoices/invoice.entities';
import { TestClock } from './modules/test-clock/test-clock.entities';
import { WebhookDelivery, WebhookEndpoint } from './modules/webhooks/webhook.entities';

/**
 * Every entity of the service; each later feature adds its own here. The gateway sandbox keeps its own
 * (src/gateways/sandbox/database.ts).
 */
export const entities = [
  Merchant,
  ApiKey,
  IdempotencyKey,
  CatalogVersion,
  OutboxEvent,
  ProductFamily,
  Product,
  Plan,
  Price,
  Customer,
  ProviderConnection,
  Payment,
  Refund,
  GatewayEventRecord,
  WebhookEndpoint,
  WebhookDelivery,
  TestClock,
  BillingSubscription,
  SubscriptionEvent,
  GatewayClockSync,
  Invoice,
  InvoiceSequence,
];

/** Names of the entities scoped by the tenant filter: all that extend TenantEntity. */
export const tenantEntityNames = entities.filter((e) => e.prototype instanceof TenantEntity).map((e) => e.name);

import { TenantEntity } from './core/entity';
import { OutboxEvent } from './core/events';
import { IdempotencyKey } from './core/idempotency';
import { CatalogVersion } from './core/read-cache';
import { Plan, Price, Product, ProductFamily } from './modules/catalog/catalog.entities';
import { Customer } from './modules/customers/customer.entity';
import { ApiKey, Merchant } from './modules/merchants/merchant.entity';
import { GatewayEventRecord, Payment, Refund } from './modules/payments/payment.entities';
import { ProviderConnection } from './modules/providers/provider-connection.entity';
import { sandboxEntities } from './gateways/sandbox/sandbox.entities';
import { TestClock } from './modules/testclock/test-clock.entity';
import { WebhookDelivery, WebhookEndpoint } from './modules/webhooks/webhook.entities';

/** Every entity of the service; each later feature adds its own here. */
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
  ...sandboxEntities,
  WebhookEndpoint,
  WebhookDelivery,
  TestClock,
];

/** Names of the entities scoped by the tenant filter: all that extend TenantEntity. */
export const tenantEntityNames = entities.filter((e) => e.prototype instanceof TenantEntity).map((e) => e.name);

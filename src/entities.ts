import { TenantEntity } from './core/entity';
import { OutboxEvent } from './core/events';
import { IdempotencyKey } from './modules/idempotency/idempotency.entities';
import { CatalogVersion } from './modules/catalog/catalog.entities';
import { Plan, Price, Product, ProductFamily, UsageRate } from './modules/catalog/catalog.entities';
import { Customer } from './modules/customers/customer.entities';
import { ApiKey, Merchant } from './modules/merchants/merchant.entities';
import { GatewayEventRecord, Payment, Refund } from './modules/payments/payment.entities';
import { ProviderConnection } from './modules/providers/provider-connection.entities';
import { BillingSubscription, GatewayClockSync, GatewayPrice, SubscriptionEvent } from './modules/subscriptions/subscription.entities';
import { Invoice, InvoiceSequence } from './modules/invoices/invoice.entities';
import { TestClock } from './modules/test-clock/test-clock.entities';
import { WebhookDelivery, WebhookEndpoint } from './modules/webhooks/webhook.entities';
import { Experiment, ExperimentEnrolment, ExperimentVariant } from './modules/experiments/experiment.entities';
import { Entitlement, EntitlementProduct, EntitlementVersion } from './modules/entitlements/entitlement.entities';
import { Offering, OfferingPackageLink, Package, PackageProductLink, Paywall } from './modules/offerings/offering.entities';
import { Coupon, CouponRedemption } from './modules/coupons/coupon.entities';
import { GatewayCommand } from './modules/gateway-commands/gateway-command.entities';

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
  UsageRate,
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
  GatewayPrice,
  Invoice,
  InvoiceSequence,
  Entitlement,
  EntitlementProduct,
  EntitlementVersion,
  Experiment,
  ExperimentVariant,
  ExperimentEnrolment,
  Offering,
  Package,
  OfferingPackageLink,
  PackageProductLink,
  Paywall,
  Coupon,
  CouponRedemption,
  GatewayCommand,
];

/** Names of the entities scoped by the tenant filter: all that extend TenantEntity. */
export const tenantEntityNames = entities.filter((e) => e.prototype instanceof TenantEntity).map((e) => e.name);

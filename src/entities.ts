import { TenantEntity } from './core/entity';
import { OutboxEvent } from './core/events';
import { IdempotencyKey } from './modules/idempotency';
import { CatalogVersion, GatewayPrice, Plan, Price, Product, ProductFamily, UsageRate } from './modules/catalog';
import { Customer } from './modules/customers';
import { PortalSession } from './modules/portal';
import { ApiKey, Merchant } from './modules/merchants';
import { GatewayEventRecord, Payment, Refund } from './modules/payments';
import { ProviderConnection } from './modules/providers';
import { BillingSubscription, GatewayClockSync, PreDebitNotice, SubscriptionEvent } from './modules/subscriptions';
import { Invoice, InvoiceSequence } from './modules/invoices';
import { TestClock } from './modules/test-clock';
import { WebhookDelivery, WebhookEndpoint } from './modules/webhooks';
import { Experiment, ExperimentEnrolment, ExperimentVariant } from './modules/experiments';
import { Entitlement, EntitlementProduct, EntitlementVersion } from './modules/entitlements';
import { Offering, OfferingPackageLink, Package, PackageProductLink, Paywall } from './modules/offerings';
import { Coupon, CouponRedemption } from './modules/coupons';
import { GatewayCommand } from './modules/gateway-commands';

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
  PortalSession,
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
  PreDebitNotice,
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

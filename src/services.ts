import type { Pool } from 'pg';
import type { Config } from './config';
import type { Ctx } from './core/context';
import type { IdempotencyStore } from './core/idempotency';
import type { CatalogReadCache } from './core/read-cache';
import type { Serializer } from './core/serialize';
import type { CatalogService } from './modules/catalog/catalog.service';
import type { CustomerService } from './modules/customers/customer.service';
import type { MerchantService } from './modules/merchants/merchant.service';
import type { PaymentService } from './modules/payments/payment.service';
import type { ProviderService } from './modules/providers/provider.service';
import type { Clock } from './core/clock';
import type { DeliveryRuntime } from './modules/webhooks/runtime';
import type { WebhookService } from './modules/webhooks/webhook.service';

/** The service singletons of one process; resolvers reach them through the request context. */
export interface Services {
  config: Config;
  /** Plain pg pool for hot-path statements (core/rows.ts), beside the ORM's. */
  plainPool: Pool;
  merchants: MerchantService;
  catalog: CatalogService;
  customers: CustomerService;
  providers: ProviderService;
  payments: PaymentService;
  idempotency: IdempotencyStore;
  catalogCache: CatalogReadCache;
  serializer: Serializer;
  /** Merchant time: the wall clock, or the merchant's test clock in test mode (contract 8, 14). */
  clock: Clock;
  webhooks: WebhookService;
  /** Outbound delivery: dispatcher, worker loop, their pg pool. */
  delivery: DeliveryRuntime;
}

export const services = (ctx: Ctx): Services => ctx.services;

import type { ServicePool } from './core/orm-pool';
import type { Config } from './config';
import type { Ctx } from './core/context';
import type { IdempotencyStore } from './modules/idempotency';
import type { CatalogReadCache } from './core/read-cache';
import type { Serializer } from './core/serialize';
import type { CatalogService } from './modules/catalog';
import type { CustomerService } from './modules/customers';
import type { PortalService } from './modules/portal';
import type { MerchantService } from './modules/merchants';
import type { PaymentService } from './modules/payments';
import type { ProviderService } from './modules/providers';
import type { Clock } from './modules/test-clock';
import type { DeliveryRuntime, LiveEvents, WebhookService } from './modules/webhooks';
import type { InvoiceService, InvoiceDocuments } from './modules/invoices';
import type { SubscriptionService, SchedulerLoop, SubscriptionScheduler } from './modules/subscriptions';
import type { ExperimentService } from './modules/experiments';
import type { EntitlementService } from './modules/entitlements';
import type { OfferingService } from './modules/offerings';
import type { CouponService } from './modules/coupons';
import type { UsageService } from './modules/usage';
import type { AnalyticsService } from './modules/analytics';
import type { GatewayCommands } from './modules/gateway-commands';
import type { SharedLimits } from './core/limits';

/** The service singletons of one process, built by src/container.ts; resolvers reach them through `services(ctx)`. */
export interface Services {
  config: Config;
  /** The process's one pool, the ORM's connections (src/core/orm-pool.ts): also plain statements, catalog version lookups, webhook delivery, test clock. */
  plainPool: ServicePool;
  /** Per-key rate limits and WebSocket caps, shared by every process (src/core/limits; started by the API). */
  limits: SharedLimits;
  merchants: MerchantService;
  catalog: CatalogService;
  customers: CustomerService;
  portal: PortalService;
  providers: ProviderService;
  payments: PaymentService;
  idempotency: IdempotencyStore;
  catalogCache: CatalogReadCache;
  serializer: Serializer;
  /** Merchant time: the wall clock, or the merchant's test clock in test mode (docs/sandbox.md). */
  clock: Clock;
  webhooks: WebhookService;
  /** The merchant's outbound events as they are recorded (the events subscription; `cadence listen`). */
  liveEvents: LiveEvents;
  invoices: InvoiceService;
  /** Issued documents' PDFs: rendered once on worker threads, then kept (src/modules/invoices/invoice.documents.ts). */
  documents: InvoiceDocuments;
  subscriptions: SubscriptionService;
  /** Subscriptions' own clock work (trial and period ends, dunning) and the gateway sandbox's clock. */
  scheduler: SubscriptionScheduler;
  /** The scheduler's loop, run by worker processes (npm start unless WORKER=off; npm run worker). */
  schedulerLoop: SchedulerLoop;
  /** Outbound delivery: dispatcher and worker loop (on the service pool). */
  delivery: DeliveryRuntime;
  /** Feature gates and their evaluation per customer, with its cache (src/modules/entitlements). */
  entitlements: EntitlementService;
  /** Experiments and the assignment engine resolve serves offerings through (src/modules/experiments). */
  experiments: ExperimentService;
  /** Offerings, packages, paywalls and resolve, with resolve's offering tree cache (src/modules/offerings). */
  offerings: OfferingService;
  /** Coupons: create, read, validate (src/modules/coupons); subscriptions redeem them at creation. */
  coupons: CouponService;
  /** Metered usage: events in, sums per billing period out (src/modules/usage). */
  usage: UsageService;
  /** MRR, churn, LTV and quick ratio over the MRR movements ledger (src/modules/analytics). */
  analytics: AnalyticsService;
  /** Durable gateway calls after commits: written with their change, run now and retried by the worker (src/modules/gateway-commands). */
  commands: GatewayCommands;
}

/** The request's services (the context holds them opaquely, so src/core imports no module). */
export const services = (ctx: Ctx): Services => ctx.services as Services;

import cluster from 'node:cluster';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServicePool } from './core/orm-pool';
import type { GraphQLSchema } from 'graphql';
import type { Config } from './config';
import { logger } from './core/logger';
import { newPubSub, type PubSub } from './core/pubsub';
import { SecretBox } from './core/secrets';
import { sessionLockPool } from './core/session-locks';
import { Serializer } from './core/serialize';
import { openServicePool, type Queryable } from './core/sql';
import { createGateway } from './gateways';
import { CatalogReadCache } from './core/read-cache';
import { SharedLimits } from './core/limits';
import { catalogVersion, CatalogService } from './modules/catalog';
import { CustomerService } from './modules/customers';
import { PortalService } from './modules/portal';
import { IdempotencyStore } from './modules/idempotency';
import { MerchantService } from './modules/merchants';
import { PaymentService } from './modules/payments';
import { InvoiceDocuments, InvoiceService, invoiceSql, IrpClient } from './modules/invoices';
import {
  SubscriptionService,
  openSubscriptionsOfConnection,
  subscriptionSql,
  SchedulerLoop,
  SubscriptionScheduler,
} from './modules/subscriptions';
import { ProviderService } from './modules/providers';
import { Clock } from './modules/test-clock';
import { leaseMsFor, LiveEvents, WebhookDispatcher, DeliveryRuntime, WebhookService } from './modules/webhooks';
import { ExperimentService } from './modules/experiments';
import { EntitlementCache, EntitlementEvaluator, EntitlementService } from './modules/entitlements';
import { OfferingService, existingOfferingIds } from './modules/offerings';
import { CouponService } from './modules/coupons';
import { UsageService } from './modules/usage';
import { AnalyticsService } from './modules/analytics';
import { GatewayCommands } from './modules/gateway-commands';
import type { Services } from './services';

/**
 * The composition root: every service of a process is built here, once, and handed to the transports (src/app.ts)
 * or the worker (src/worker.ts). Requests reach them through `services(ctx)` (src/services.ts); src/core never
 * imports a module. A new module's service is constructed here and added to `Services`.
 */
export function createServices(
  config: Config,
  orm: MikroORM,
  schema: GraphQLSchema,
  /** The gateway sandbox's URL when SANDBOX is on (gateways are then created against it). */
  sandboxUrl: string | null = null,
  /** The service's public URL (gateway webhook addresses), known once the server listens. */
  publicUrl: () => string = () => config.publicUrl ?? '',
  /** The process's pub/sub (live changes for GraphQL subscriptions); a process that serves none needs none. */
  pubsub: PubSub = newPubSub(),
  /**
   * The read replica's pool (DATABASE_READ_URL, src/core/read-pool.ts) the analytics reports read, opened by the API
   * process (src/app.ts); null: they read the primary (and a worker serves no reports).
   */
  replica: Queryable | null = null,
): Services {
  const serializer = new Serializer(schema);
  const customers = new CustomerService();
  if (config.databaseUrl && !process.env.ENCRYPTION_KEY && cluster.isPrimary) {
    // Every process sharing the database must seal and open credentials with the same key. API processes of one
    // supervisor (API_PROCESSES) share its DATA_DIR: the supervisor warns when it applies, they need not.
    logger.warn(
      { dataDir: config.dataDir },
      'ENCRYPTION_KEY unset: using the key file in DATA_DIR; set ENCRYPTION_KEY when several hosts share the database',
    );
  }
  const secrets = SecretBox.fromEnv(config.dataDir);
  const providers = new ProviderService(
    secrets,
    (provider, credentials) =>
      createGateway(provider, credentials, { sandboxUrl: sandboxUrl ?? undefined, timeoutMs: config.gatewayTimeoutMs }),
    publicUrl,
    openSubscriptionsOfConnection,
  );
  // The process's one pool (the ORM's connections): plain statements, the catalog's version lookups, webhook delivery,
  // the test clock.
  const pool = openServicePool(orm);
  const webhooks = webhookServices(config, orm, pool, secrets, () => serializer);
  const coupons = new CouponService(webhooks.clock);
  const commands = new GatewayCommands(orm.em, pool, providers, () => serializer, {
    retrySeconds: config.gatewayCommandRetrySeconds,
    firstRetryMs: config.gatewayCommandFirstRetryMs,
    gatewayTimeoutMs: config.gatewayTimeoutMs,
    concurrency: config.workerConcurrency,
    pollMs: config.workerPollMs,
  });
  const irpUrl = config.irpUrl ?? (sandboxUrl ? `${sandboxUrl}/irp/v1` : null);
  const invoices = new InvoiceService(() => serializer, {
    irp: new IrpClient(irpUrl, config.gatewayTimeoutMs),
    commands,
  });
  const payments = new PaymentService(providers, () => serializer, invoices, commands, orm.em, pool);
  const subscriptions = new SubscriptionService(
    orm.em,
    providers,
    invoices,
    webhooks.clock,
    () => serializer,
    coupons,
    commands,
  );
  // Registered after the webhook dispatcher: at equal times the service's own actions (a period-end cancellation) run
  // before the gateway sandbox's clock moves (which would renew).
  const scheduler = new SubscriptionScheduler(subscriptions, pool);
  webhooks.clock.register(scheduler.notices.dueWork);
  webhooks.clock.register(scheduler.dueWork);
  webhooks.clock.register(scheduler.gatewayDueWork);
  webhooks.clock.register(commands.heldDueWork);
  return {
    config,
    plainPool: pool,
    limits: new SharedLimits(pool, config.redis),
    merchants: new MerchantService(orm.em),
    catalog: new CatalogService(),
    customers,
    portal: new PortalService(orm.em, publicUrl),
    providers,
    payments,
    idempotency: new IdempotencyStore(orm.em),
    catalogCache: new CatalogReadCache(
      (merchantId, mode) => catalogVersion(pool, { merchantId, mode }),
      config.readCacheBytes,
    ),
    invoices,
    documents: new InvoiceDocuments(config.documentRenderThreads),
    subscriptions,
    scheduler,
    schedulerLoop: new SchedulerLoop(
      scheduler,
      {
        pollMs: config.schedulerPollMs,
        reconcileMs: config.reconcileIntervalMs,
        reconcileGraceMs: config.reconcileGraceMs,
        pendingOutcomeGraceMs: config.pendingOutcomeGraceMs,
      },
      [(graceMs) => payments.reconcilePending(graceMs)],
    ),
    serializer,
    entitlements: new EntitlementService(
      new EntitlementEvaluator(pool, new EntitlementCache(config.entitlementCacheBytes)),
    ),
    experiments: new ExperimentService(webhooks.clock, existingOfferingIds),
    offerings: new OfferingService(),
    coupons,
    // Usage and analytics read subscriptions through its SQL pieces: they may not import it (it imports them).
    usage: new UsageService(pool, webhooks.clock, subscriptionSql.periods),
    analytics: new AnalyticsService(
      subscriptionSql.inCurrency,
      { notices: subscriptionSql.preDebitCounts, authentications: invoiceSql.authenticationCounts },
      replica,
    ),
    commands,
    liveEvents: new LiveEvents(pubsub),
    ...webhooks,
  };
}

/**
 * Outbound webhooks and the test clock, on the service pool: the dispatcher (outbox -> deliveries), the merchant
 * clock that runs its due work when a test clock advances, the webhook service, and the worker runtime.
 */
function webhookServices(
  config: Config,
  orm: MikroORM,
  pool: ServicePool,
  secrets: SecretBox,
  serializer: () => Serializer,
) {
  // Advances hold a session lock across transactions: on DATABASE_SESSION_URL when set (docs/production.md, "PgBouncer").
  const clock = new Clock(pool, config.databaseSessionUrl ? sessionLockPool(config.databaseSessionUrl) : pool);
  const timeoutMs = config.webhookTimeoutMs;
  const allowPrivateNetworks = config.webhookAllowPrivateNetworks;
  if (allowPrivateNetworks && config.databaseUrl) {
    logger.warn(
      'WEBHOOK_ALLOW_PRIVATE_NETWORKS is on with DATABASE_URL set: webhook endpoints may reach loopback, private and ' +
        'link-local addresses, cloud metadata included',
    );
  }
  const dispatcher = new WebhookDispatcher(pool, orm, secrets, serializer, {
    schedule: config.webhookRetrySchedule,
    timeoutMs,
    leaseMs: leaseMsFor(timeoutMs),
    allowPrivateNetworks,
  });
  clock.register(dispatcher.dueWork);
  return {
    clock,
    webhooks: new WebhookService(secrets, clock, serializer, allowPrivateNetworks),
    delivery: new DeliveryRuntime(config, dispatcher, pool),
  };
}

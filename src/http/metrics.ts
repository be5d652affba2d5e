import cluster from 'node:cluster';
import type { Request, RequestHandler, Response } from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config';
import { DomainError } from '../core/errors';
import { logger } from '../core/logger';
import { collectProcessMetrics, processRegistry } from '../core/metrics';
import type { ServicePool } from '../core/orm-pool';
import type { ReadPool } from '../core/read-pool';
import { commandQueueDepth } from '../modules/gateway-commands';
import { recentRenewalInvoices } from '../modules/invoices';
import { dueActionCount } from '../modules/subscriptions';
import { pendingDeliveryCount } from '../modules/webhooks';
import { bearerToken, sameSecret } from './auth';
import { memberMetrics } from './metrics-cluster';
import { sendError } from './request';
import { operationOf, routeOf } from './route-label';

/**
 * GET /metrics, Prometheus's text format (docs/production.md, "Metrics"). No label carries a merchant, a customer or
 * an id: routes are patterns written in code (src/http/route-label.ts), GraphQL is counted by operation type, queues
 * by status and mode. Access is the METRICS setting's: the operator token (ADMIN_TOKEN) by default.
 */

/** Request latency buckets, seconds: most API answers take a few milliseconds, a gateway call up to GATEWAY_TIMEOUT_MS. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A request's route label when nothing named it and express matched no route: a 404, or a path no route owns. */
export const UNMATCHED = 'unmatched';

function routeLabelOf(req: Request, res: Response): string {
  const named = routeOf(res);
  if (named) return named;
  // An express route's own pattern (/healthz, /v1/openapi.json, the gateway webhook route, ...).
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return req.baseUrl + path;
  if (Array.isArray(path)) return req.baseUrl + path.join(',');
  return UNMATCHED;
}

/** The HTTP metrics of one app: requests by route, method, status (and GraphQL operation type), and their latency. */
function httpRegistry(): { registry: Registry; measure: RequestHandler } {
  const registry = new Registry();
  const requests = new Counter({
    name: 'cadence_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern, status, and GraphQL operation type at /graphql.',
    labelNames: ['method', 'route', 'status', 'operation'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cadence_http_request_duration_seconds',
    help: 'Time from the request reaching the app to the last byte of its answer, by method and route pattern.',
    labelNames: ['method', 'route', 'operation'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const measure: RequestHandler = (req, res, next) => {
    const started = process.hrtime.bigint();
    // Answered requests only: one whose client left first has no status to count.
    res.once('finish', () => {
      const route = routeLabelOf(req, res);
      const operation = operationOf(res);
      const labels = operation ? { method: req.method, route, operation } : { method: req.method, route };
      requests.inc({ ...labels, status: String(res.statusCode) });
      latency.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
  return { registry, measure };
}

/** The process's database pool (src/core/orm-pool.ts), read at scrape time. */
export function poolRegistry(pool: ServicePool): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'cadence_db_pool_connections',
    help: "The process's database pool: connections in use, idle, being opened, and requests waiting for one.",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const u = pool.use?.();
      if (!u) return;
      this.set({ state: 'used' }, u.used);
      this.set({ state: 'free' }, u.free);
      this.set({ state: 'opening' }, u.creating);
      this.set({ state: 'waiting' }, u.pending);
    },
  });
  new Gauge({
    name: 'cadence_db_pool_max',
    help: "The database pool's size (max(4, DB_POOL_MAX)).",
    registers: [registry],
    collect() {
      this.set(pool.options.max);
    },
  });
  return registry;
}

/** The read replica's pool (DATABASE_READ_URL, src/core/read-pool.ts), read at scrape time. */
export function readPoolRegistry(read: ReadPool): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'cadence_db_read_pool_connections',
    help: "The read replica's pool (analytics reports): connections in use, idle, and reports waiting for one.",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const { totalCount, idleCount, waitingCount } = read.pool;
      this.set({ state: 'used' }, totalCount - idleCount);
      this.set({ state: 'free' }, idleCount);
      this.set({ state: 'waiting' }, waitingCount);
    },
  });
  new Gauge({
    name: 'cadence_db_read_pool_max',
    help: "The read replica pool's size.",
    registers: [registry],
    collect() {
      this.set(read.max);
    },
  });
  return registry;
}

interface Queues {
  commands: { pending: number; failed: number };
  deliveries: number;
  dueActions: number;
  renewals: { mode: string; status: string; n: number }[];
}

/**
 * Work waiting in PostgreSQL, across tenants (the worker's own view: system statements), read at scrape time by a few
 * counts on partial indexes, and renewal invoices of the last hour. The same whichever process serves the scrape,
 * so a group of processes reads them once (the supervisor). The gauges of one scrape (prom-client collects them
 * together) share one reading.
 */
export function queueRegistry(pool: ServicePool): Registry {
  const registry = new Registry();
  let reading: Promise<Queues | null> | null = null;
  const read = (): Promise<Queues | null> =>
    (reading ??= (async () => {
      const [commands, deliveries, dueActions, renewals] = await Promise.all([
        commandQueueDepth(pool),
        pendingDeliveryCount(pool),
        dueActionCount(pool),
        recentRenewalInvoices(pool, new Date(Date.now() - 3_600_000)),
      ]);
      return { commands, deliveries, dueActions, renewals };
    })()
      .catch((err: unknown) => {
        logger.warn({ err }, 'metrics: the queue depths could not be read');
        return null; // the gauges say NaN: unknown, not zero
      })
      .finally(() => (reading = null)));
  const gauge = (name: string, help: string, value: (q: Queues) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const q = await read();
        this.set(q ? value(q) : NaN);
      },
    });
  gauge(
    'cadence_gateway_commands_pending',
    'Gateway commands not yet done at the gateway (due or waiting for a retry), all merchants.',
    (q) => q.commands.pending,
  );
  gauge(
    'cadence_gateway_commands_failed',
    'Gateway commands given up (event gateway_command.failed), all merchants, all time.',
    (q) => q.commands.failed,
  );
  gauge(
    'cadence_webhook_deliveries_pending',
    'Outbound webhook deliveries not yet sent or waiting for a retry, all merchants.',
    (q) => q.deliveries,
  );
  gauge(
    'cadence_subscription_actions_due',
    "Scheduled subscription actions (trial and period ends, dunning) due now on their merchant's clock, not yet run.",
    (q) => q.dueActions,
  );
  new Gauge({
    name: 'cadence_renewal_invoices_last_hour',
    help: 'Renewal invoices (billing reason subscription_cycle) made in the last hour, by mode and current status.',
    labelNames: ['mode', 'status'] as const,
    registers: [registry],
    async collect() {
      const q = await read();
      this.reset();
      for (const r of q?.renewals ?? []) this.set({ mode: r.mode, status: r.status }, r.n);
    },
  });
  return registry;
}

/** Why a scrape is refused under the METRICS setting, or null when it is served. */
function refusal(config: Config, req: Request): DomainError | null {
  const notFound = () =>
    new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`);
  if (config.metrics === 'off') return notFound();
  if (config.metrics === 'open') return null;
  // `operator`: as the operator API, it does not exist without ADMIN_TOKEN.
  if (!config.adminToken) return notFound();
  const token = bearerToken(req.headers.authorization);
  if (token && sameSecret(token, config.adminToken)) return null;
  return new DomainError(
    'invalid_api_key',
    'GET /metrics needs the operator token: Authorization: Bearer <ADMIN_TOKEN>.',
  );
}

export interface AppMetrics {
  /** Times and counts every request: the app's first middleware (and the REST lane's); null with METRICS=off. */
  measure: RequestHandler | null;
  /** GET /metrics. */
  serve: RequestHandler;
  stop(): void;
}

/**
 * One app's metrics: its requests and pool, the process's own, and the queue depths. In an API process of a group
 * (API_PROCESSES > 1) a scrape answers for the whole group, through the supervisor (src/http/metrics-cluster.ts).
 */
export function appMetrics(config: Config, pool: ServicePool, read: ReadPool | null = null): AppMetrics {
  const off = config.metrics === 'off';
  const http = off ? null : httpRegistry();
  const local = off
    ? null
    : Registry.merge([
        collectProcessMetrics(),
        http!.registry,
        poolRegistry(pool),
        ...(read ? [readPoolRegistry(read)] : []),
      ]);
  const member = local && cluster.isWorker ? memberMetrics(() => local.getMetricsAsJSON()) : null;
  const all = local && !member ? Registry.merge([local, queueRegistry(pool)]) : null;
  const serve: RequestHandler = async (req, res) => {
    const refused = refusal(config, req);
    if (refused) return sendError(req, res, refused);
    try {
      const text = member ? await member.scrape() : await all!.metrics();
      res.setHeader('Cache-Control', 'no-store');
      res.type(processRegistry.contentType).send(text);
    } catch (err) {
      req.log.warn({ err }, 'metrics scrape failed');
      sendError(
        req,
        res,
        new DomainError('service_unavailable', 'Metrics could not be gathered. Retry shortly.', null, {
          'Retry-After': '1',
        }),
      );
    }
  };
  return { measure: http?.measure ?? null, serve, stop: () => member?.stop() };
}

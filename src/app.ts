import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import express from 'express';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Config, sessionDatabaseUrl } from './config';
import { DomainError } from './core/errors';
import { logger } from './core/logger';
import { newPubSub } from './core/pubsub';
import { errorHandler, lazyRequestLog, requestContext, RequestSignals, sendError } from './http/request';
import { mountGraphQL } from './http/graphql';
import { GraphQLIde } from './http/ide';
import { webApps } from './http/web-apps';
import { ChangeListener } from './core/events';
import { PgListener } from './core/listener';
import { ping } from './core/sql';
import { openReadPool, type ReadPool } from './core/read-pool';
import type { RunningSandbox } from './gateways/sandbox';
import { runSandboxAsTimePasses, startConfiguredSandbox } from './startup';
import { providerWebhooks } from './http/provider-webhooks';
import { bodyLimits, utf8Body } from './http/body-limits';
import { answerClientErrors } from './http/client-errors';
import { expressClasses, restLane } from './http/rest-lane';
import { appMetrics } from './http/metrics';
import { routeLabel } from './http/route-label';
import { retiredKeyChanges } from './modules/merchants';
import { paymentChanges } from './modules/payments';
import { subscriptionChanges } from './modules/subscriptions';
import { createSchema } from './schema';
import type { Services } from './services';
import { createServices } from './container';
import { restRouter } from '../rest-shim/router';
import { openApiTemplate } from '../rest-shim/openapi';
import { EXAMPLE_VALUES, fillExamples } from '../rest-shim/examples';
import { demoExampleValues, DocsDemo } from '../rest-shim/demo-examples';

export interface RunningApp {
  server: http.Server;
  services: Services;
  url: string;
  /** The gateway sandbox's base URL, when SANDBOX is on (SANDBOX_URL when it runs as its own process). */
  sandboxUrl: string | null;
  /** The in-process gateway sandbox, when SANDBOX is on and SANDBOX_URL unset (tests stop and restart it). */
  sandbox: RunningSandbox | null;
  /** The process's one LISTEN connection (live changes and webhook wake-ups). */
  listener: PgListener;
  /** The read replica's pool the analytics reports read (DATABASE_READ_URL), or null: they read the primary. */
  readPool: ReadPool | null;
  /** The GraphQL IDE at /graphql: in the demo setting, given the demo merchant's test key (src/startup.ts). */
  ide: GraphQLIde;
  /**
   * The demo merchant /docs tries the API as (docs/api.md "Trying the API in /docs"): its test key pre-filled in
   * Authorize and its newest objects in the examples. Set by `npm start` on the embedded database; null: none.
   */
  docsDemo: DocsDemo | null;
  close(): Promise<void>;
}

/** Builds the HTTP server (REST shim, GraphQL, IDE, docs, health) on an open database and starts listening. */
export async function startApp(config: Config, orm: MikroORM, listenPort = config.port): Promise<RunningApp> {
  const pubsub = newPubSub();
  const schema = await createSchema(pubsub);
  // The sandbox stands in for both gateways on its own port (docs/sandbox.md); with SANDBOX_URL it runs as its
  // own process (`npm run sandbox`), which keeps its CPU off the API's.
  const external = config.sandbox && config.sandboxUrl ? config.sandboxUrl : null;
  // LISTEN and the in-process sandbox need sessions of their own (docs/production.md, "PgBouncer").
  const sessionUrl = sessionDatabaseUrl(config, orm.config.get('clientUrl')!);
  const sandbox = config.sandbox && !external ? await startConfiguredSandbox(config, sessionUrl) : null;
  const sandboxUrl = external ?? sandbox?.url ?? null;
  let url = config.publicUrl ?? '';
  // Analytics reports read the replica when there is one (docs/production.md, "A read replica for analytics").
  const readPool = config.databaseReadUrl ? await openReadPool(config.databaseReadUrl) : null;
  const services = createServices(
    config,
    orm,
    schema,
    sandboxUrl,
    () => config.publicUrl ?? url,
    pubsub,
    readPool?.pool ?? null,
  );
  // One LISTEN connection for the process; after it reconnects, subscribers re-read the payments changed meanwhile.
  const listener = new PgListener(sessionUrl);
  const changes = new ChangeListener(listener, pubsub);
  changes.catchUp(paymentChanges(services.plainPool));
  changes.catchUp(subscriptionChanges(services.plainPool));
  changes.catchUp(retiredKeyChanges(services.plainPool)); // keys rolled meanwhile: their sockets are cut
  await changes.start();
  const stopEntitlementCache = await services.entitlements.listen(listener); // evictions (src/modules/entitlements)
  await services.limits.start(); // Redis, when REDIS_URL is set: at most 2 s (docs/operations.md, "Shared limits")
  await listener.start();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const server = http.createServer(expressClasses(app)); // its request listener is set below, once the REST shim exists
  // Node's default (5 s) is shorter than a proxy's idle timeout: the API would close connections the proxy reuses.
  server.keepAliveTimeout = config.httpKeepAliveSeconds * 1000;
  answerClientErrors(server); // Node's own 431/400 refusals, in the API's error shape

  lazyRequestLog(app.request);
  // Requests counted and timed by route pattern for GET /metrics (src/http/metrics.ts); none with METRICS=off.
  const metrics = appMetrics(config, services.plainPool, readPool);
  if (metrics.measure) app.use(metrics.measure);
  app.use(requestContext);
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (req, res) => {
    try {
      await ping(orm.em);
      res.json({ status: 'ready' });
    } catch (err) {
      req.log.warn({ err }, 'database not ready');
      res.status(503).json({ status: 'unavailable' });
    }
  });
  app.get('/metrics', metrics.serve); // access: the METRICS setting (docs/production.md, "Metrics")

  // The examples' tokens (rest-shim/examples.ts): fixed example ids, or the demo merchant's newest objects.
  const openapiTemplate = openApiTemplate(schema);
  const openapi = fillExamples(openapiTemplate, EXAMPLE_VALUES, 'demo');
  let docsDemo: DocsDemo | null = null;
  app.get('/v1/openapi.json', async (req, res, next) => {
    try {
      const demo = docsDemo;
      const text = demo
        ? fillExamples(
            openapiTemplate,
            await demoExampleValues(schema, orm, services, demo),
            crypto.randomBytes(3).toString('hex'),
          )
        : openapi;
      res.type('application/json').send(text);
    } catch (err) {
      next(err);
    }
  });
  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  app.use('/docs/assets', routeLabel('/docs/assets/*'), express.static(swaggerDir, { index: false }));
  app.get('/docs', (_req, res) => void res.type('html').send(docsPage(docsDemo?.testKey ?? null)));

  app.use(providerWebhooks(orm, services)); // raw bodies: before the JSON parser
  const jsonBody = express.json({ limit: '1mb', type: () => true, strict: false, verify: utf8Body }); // bytes that are not UTF-8: 400
  app.use(jsonBody);
  app.use(bodyLimits); // nesting depth, before anything walks the body (src/core/input-limits.ts)

  // Each request's ctx.signal: aborted when its client leaves unanswered, or when close() begins (src/core/context.ts).
  const signals = new RequestSignals();
  // REST first: its paths and GraphQL's (/graphql, the IDE's assets) are disjoint, and /v1 requests, the most
  // numerous, then skip the GraphQL router's layers.
  const rest = restRouter({ schema, orm, services, signals });
  app.use('/v1', rest.router);
  const ide = new GraphQLIde();
  app.use(webApps(() => ide.demoKey)); // /dashboard, /portal and their assets (the demo key as the IDE has it)
  const graph = await mountGraphQL({ app, httpServer: server, schema, orm, services, pubsub, signals, ide });
  app.use((req, res) =>
    sendError(
      req,
      res,
      new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`),
    ),
  );
  app.use(errorHandler);
  // API calls the route table answers skip express's layers; they run the same middleware (src/http/rest-lane.ts).
  const before = [...(metrics.measure ? [metrics.measure] : []), requestContext, jsonBody, bodyLimits];
  server.on('request', restLane(app, rest, before, errorHandler));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, config.host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  logger.info({ url }, 'http server listening');

  // Expired idempotency keys are purged periodically (a claim already ignores them).
  const purge = setInterval(
    () => void services.idempotency.purgeExpired().catch((err) => logger.warn({ err }, 'purge failed')),
    10 * 60_000,
  );
  purge.unref();
  // The sandbox charges subscription renewals as real time passes, like the gateways (test clocks advance them too),
  // and sends again the events the service did not acknowledge.
  const stopRenewals =
    sandbox && config.worker ? runSandboxAsTimePasses(sandbox, config.sandboxRedeliverySeconds) : () => undefined;
  // Outbound webhook delivery and gateway commands run in this process unless WORKER=off (then `npm run worker` does it).
  if (config.worker) await services.delivery.startWorker(listener);
  if (config.worker) await services.commands.startWorker(listener);
  // So does the subscriptions scheduler (trial and period ends, dunning, reconciliation).
  if (config.worker) services.schedulerLoop.start();

  return {
    server,
    services,
    url,
    sandboxUrl,
    sandbox,
    listener,
    readPool,
    ide,
    get docsDemo() {
      return docsDemo;
    },
    set docsDemo(demo: DocsDemo | null) {
      docsDemo = demo;
    },
    // Apollo's drain plugin stops accepting connections and waits for requests in flight; websockets are disposed.
    // Long commands in flight (a test-clock advance) are told to stop first: they end at their next step and answer.
    close: async () => {
      signals.stop();
      const timer = setTimeout(() => server.closeAllConnections(), 10_000);
      timer.unref();
      await graph.stop();
      clearTimeout(timer);
      clearInterval(purge);
      stopRenewals();
      await changes.stop();
      await stopEntitlementCache();
      await services.schedulerLoop.stop();
      await services.commands.stopWorker();
      await services.delivery.close();
      await services.documents.close();
      await listener.stop();
      await services.limits.close(); // after the sockets closed: their leases go with them
      metrics.stop();
      await readPool?.close();
      await sandbox?.close(); // the service pool is the ORM's: the caller closes it with the ORM
    },
  };
}

/** Swagger UI over /v1/openapi.json; with a demo key, Authorize holds it already (a JSON literal in the script). */
function docsPage(demoKey: string | null): string {
  const authorize = demoKey
    ? `, onComplete: () => window.ui.preauthorizeApiKey('secretKey', ${JSON.stringify(demoKey).replace(/</g, '\\u003c')})`
    : '';
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Cadence REST API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#ui', deepLinking: true, validatorUrl: null${authorize} });</script>
</body></html>`;
}

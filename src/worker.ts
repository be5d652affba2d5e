import 'reflect-metadata';
import { loadConfig, sessionDatabaseUrl, sessionSettings } from './config';
import { openDatabase } from './core/db';
import { entities } from './entities';
import { runProcess } from './core/lifecycle';
import { logger } from './core/logger';
import { connectionBudget, sessionServer } from './core/pool';
import { servicePoolSize } from './core/sql';
import { createServices } from './container';
import { createSchema } from './schema';
import { startBackgroundWork } from './startup';
import { serveWorkerMetrics } from './http/worker-metrics';

/**
 * `npm run worker`: outbound webhook delivery and the subscriptions scheduler alone, for scaled-out deployments (run the API with WORKER=off, or
 * not: any number of API and worker processes share the work through PostgreSQL). Needs DATABASE_URL, and the
 * same ENCRYPTION_KEY as the API processes (endpoint secrets are stored sealed).
 */
async function main() {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('npm run worker needs DATABASE_URL (the database the API uses)');
  // One pool, the ORM's: delivery claims, attempts and the test clock run on its connections.
  const orm = await openDatabase(
    config.databaseUrl,
    entities,
    servicePoolSize(config.dbPoolMax),
    sessionSettings(config),
  );
  const schema = await createSchema();
  // The same composition root as the API (src/container.ts); the worker runs only its background work.
  const services = createServices(config, orm, schema);
  const background = await startBackgroundWork(services, sessionDatabaseUrl(config, config.databaseUrl));
  const connections = connectionBudget([
    { what: 'pool', n: services.plainPool.options.max },
    { what: 'LISTEN', n: background.connections, on: sessionServer(config) },
  ]);
  logger.info({ connections: connections.byServer }, `database: ${connections.text}`);
  const metrics =
    config.workerMetricsPort === undefined
      ? null
      : await serveWorkerMetrics(config, services.plainPool, config.workerMetricsPort);
  process.stdout.write(
    `Cadence webhook worker running (concurrency ${config.workerConcurrency}; database: ${connections.text})` +
      `${metrics ? `; metrics at ${metrics.url}/metrics` : ''}\n`,
  );

  return {
    forceAfterMs: config.webhookTimeoutMs + 5_000,
    stop: async () => {
      await metrics?.close();
      await background.stop(); // attempts in flight finish and are recorded
      await orm.close(true); // its pool is the process's one pool
    },
  };
}

runProcess('Cadence worker', main);

import 'reflect-metadata';
import { loadConfig } from './config';
import { openDatabase } from './core/db';
import { runProcess } from './core/lifecycle';
import { PgListener } from './core/listener';
import { Serializer } from './core/serialize';
import { DeliveryRuntime } from './modules/webhooks/runtime';
import { createSchema } from './schema';

/**
 * `npm run worker`: outbound webhook delivery alone, for scaled-out deployments (run the API with WORKER=off, or
 * not: any number of API and worker processes share the work through PostgreSQL). Needs DATABASE_URL, and the
 * same ENCRYPTION_KEY as the API processes (endpoint secrets are stored sealed).
 */
async function main() {
  const config = loadConfig();
  if (!config.databaseUrl) throw new Error('npm run worker needs DATABASE_URL (the database the API uses)');
  const orm = await openDatabase(config.databaseUrl, 2);
  const schema = await createSchema();
  const serializer = new Serializer(schema);
  const runtime = new DeliveryRuntime(config, orm, () => serializer);
  const listener = new PgListener(config.databaseUrl);
  await listener.start();
  await runtime.startWorker(listener);
  process.stdout.write(`Cadence webhook worker running (concurrency ${config.workerConcurrency})\n`);

  return {
    forceAfterMs: config.webhookTimeoutMs + 5_000,
    stop: async () => {
      await runtime.close(); // attempts in flight finish and are recorded
      await listener.stop();
      await orm.close(true);
    },
  };
}

runProcess('Cadence worker', main);

import 'reflect-metadata';
import { loadConfig } from './config';
import { EmbeddedDatabase, openDatabase, startEmbeddedPostgres } from './core/db';
import { entities } from './entities';
import { runProcess } from './core/lifecycle';
import { logger } from './core/logger';
import { connectionBudget } from './core/pool';
import { servicePoolSize } from './core/sql';
import { startApp } from './app';
import { connectDemoGateways, ensureDemoMerchant } from './modules/merchants/demo';

/** `npm start`: the API (REST, GraphQL, IDE, docs) on PORT, with an embedded PostgreSQL unless DATABASE_URL is set. */
async function main() {
  const config = loadConfig();
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    logger.info({ dataDir: config.dataDir }, 'DATABASE_URL unset: starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.dataDir);
    url = embedded.url;
  }
  // The process's one pool: the ORM's, also running the plain statements, webhook delivery and the test clock.
  const orm = await openDatabase(url, entities, servicePoolSize(config.dbPoolMax));
  const app = await startApp(config, orm);
  const connections = connectionBudget({
    pool: app.services.plainPool.options.max,
    LISTEN: 1,
    sandbox: app.sandbox?.connections ?? 0,
  });
  logger.info({ connections: connections.total }, `database: ${connections.text}`);

  const banner: string[] = [
    '',
    `Cadence is running at ${app.url}`,
    `  REST API      ${app.url}/v1`,
    `  GraphQL + IDE ${app.url}/graphql`,
    `  REST docs     ${app.url}/docs`,
    `  Sandbox       ${app.sandboxUrl ? `${app.sandboxUrl}${app.sandbox ? '' : ' (SANDBOX_URL: its own process)'}` : 'off (SANDBOX=off: real gateways)'}`,
    `  Database      ${embedded ? `embedded PostgreSQL (data in ${config.dataDir})` : 'DATABASE_URL'}; ${connections.text}`,
  ];
  if (embedded) {
    const demo = await ensureDemoMerchant(orm, config.dataDir);
    if (app.sandboxUrl) {
      try {
        await connectDemoGateways(orm, app.services, demo.merchantId);
      } catch (err) {
        // An external sandbox (SANDBOX_URL) may not be up yet: serve anyway; the next start connects the demo merchant.
        if (app.sandbox) throw err;
        logger.warn({ err, sandboxUrl: app.sandboxUrl }, 'demo merchant not connected: the sandbox did not answer');
      }
    }
    banner.push(
      `  Demo merchant ${demo.merchantId}${demo.created ? ' (created now)' : ''}`,
      `    test key    ${demo.keys.test}`,
      `    live key    ${demo.keys.live}`,
    );
  }
  process.stdout.write(banner.join('\n') + '\n\n');

  return {
    forceAfterMs: 15_000,
    // Drain HTTP and websockets, then the pool, then the embedded server.
    stop: async () => {
      await app.close();
      await orm.close(true);
      if (embedded) await embedded.stop();
    },
  };
}

runProcess('Cadence', main);

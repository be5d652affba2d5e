import 'reflect-metadata';
import { loadConfig } from './config';
import { groupMember } from './core/cluster';
import { runProcess } from './core/lifecycle';
import { missingApiFlags } from './core/heap';
import { logger } from './core/logger';
import { connectionBudget, replicaServer, sessionServer } from './core/pool';
import { SESSION_LOCKS_MAX } from './core/session-locks';
import { servicePoolSize } from './core/sql';
import { startApp } from './app';
import { API_STOP_MS, openServiceDatabase, printBanner } from './startup';
import { superviseApiProcesses } from './supervisor';

/**
 * `npm start`: the API (REST, GraphQL, IDE, docs) on PORT, with an embedded PostgreSQL unless DATABASE_URL is set.
 * API_PROCESSES > 1: a supervisor and that many API processes (src/supervisor.ts), each of which runs this with 1.
 */
async function main() {
  const config = loadConfig();
  const missing = missingApiFlags(process.execArgv);
  if (missing.length)
    logger.warn(
      { missing },
      `started without ${missing.join(' ')}: expect a longer latency tail (npm start passes it; src/core/heap.ts)`,
    );
  if (config.apiProcesses > 1) return superviseApiProcesses(config); // its processes inherit these flags
  const member = groupMember(); // one of a supervisor's API processes, or null
  // The process's one pool: the ORM's, also running the plain statements, webhook delivery and the test clock.
  const db = await openServiceDatabase(config, servicePoolSize(config.dbPoolMax));
  const app = await startApp(config, db.orm);
  // Counted on the server each goes to (docs/production.md, "Connections and pool sizing").
  const session = sessionServer(config);
  const connections = connectionBudget([
    { what: 'pool', n: app.services.plainPool.options.max },
    { what: 'LISTEN', n: 1, on: session },
    { what: 'sandbox', n: app.sandbox?.connections ?? 0, on: session },
    { what: 'test-clock locks', n: config.databaseSessionUrl ? SESSION_LOCKS_MAX : 0, on: session },
    { what: 'reports', n: app.readPool?.max ?? 0, on: replicaServer(config) },
  ]);
  logger.info({ connections: connections.byServer }, `database: ${connections.text}`);
  // The supervisor prints the banner once all its API processes listen.
  if (member) member.listening(app.url, connections.byServer);
  else {
    const demo = await printBanner(config, db, app.services, {
      url: app.url,
      sandboxUrl: app.sandboxUrl,
      sandboxHere: app.sandbox !== null,
      connections: connections.text,
    });
    // The demo setting: the IDE and /docs work as the demo merchant, with the test key the banner shows
    // (docs/api.md, "The GraphQL IDE" and "Trying the API in /docs").
    if (demo) {
      app.ide.demoKey = demo.keys.test;
      app.docsDemo = { merchantId: demo.merchantId, testKey: demo.keys.test };
    }
  }

  return {
    forceAfterMs: API_STOP_MS,
    // Drain HTTP and websockets, then the pool, then the embedded server.
    stop: async () => {
      await app.close();
      await db.close();
    },
  };
}

runProcess('Cadence', main);

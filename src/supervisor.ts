import type { Config } from './config';
import { ClusterGroup } from './core/cluster';
import { freePort } from './core/embedded-postgres';
import { logger } from './core/logger';
import { collectProcessMetrics } from './core/metrics';
import { connectionBudget, sessionServer, type ServerSetting } from './core/pool';
import { poolRegistry, queueRegistry } from './http/metrics';
import { GroupMetrics } from './http/metrics-cluster';
import { servicePoolSize } from './core/sql';
import { createServices } from './container';
import { createSchema } from './schema';
import { API_STOP_MS, openServiceDatabase, printBanner, startBackgroundWork, startConfiguredSandbox } from './startup';

/** The supervisor serves no request: its pool holds migrations, the demo merchant and the background work (4: the least). */
const SUPERVISOR_POOL = servicePoolSize(0);

/**
 * `npm start` with API_PROCESSES = N > 1: this process supervises N API processes sharing PORT (node:cluster hands
 * them connections in turn). It does once what the group shares: the embedded PostgreSQL (DATABASE_URL unset), the
 * migrations, the in-process gateway sandbox (SANDBOX on, SANDBOX_URL unset), the background work WORKER controls
 * (webhook delivery, the subscriptions scheduler, sandbox renewals) and the demo merchant; the API processes run
 * startApp alone, on its database and sandbox with WORKER=off. One that dies is replaced (src/core/cluster.ts).
 * SIGINT/SIGTERM: the API processes drain, then the background work, the sandbox, the pool and the embedded server stop.
 */
export async function superviseApiProcesses(
  config: Config,
): Promise<{ stop: () => Promise<void>; forceAfterMs: number }> {
  logger.setBindings({ pid: process.pid }); // the group shares stdout: each line says whose it is
  // What has started, stopped newest first: on SIGINT/SIGTERM, or when the start fails half-way.
  const started: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (let stop = started.pop(); stop; stop = started.pop()) {
      await stop().catch((err) => logger.error({ err }, 'error during shutdown'));
    }
  };
  try {
    const db = await openServiceDatabase(config, SUPERVISOR_POOL);
    started.push(() => db.close());
    const sandbox = config.sandbox && !config.sandboxUrl ? await startConfiguredSandbox(config, db.sessionUrl) : null;
    if (sandbox) started.push(() => sandbox.close());
    const sandboxUrl = config.sandbox ? (config.sandboxUrl ?? sandbox!.url) : null;
    let apiUrl = '';
    // Its own services: for the background work and the demo merchant's gateway connections (their webhook URLs are
    // the API's).
    const services = createServices(config, db.orm, await createSchema(), sandboxUrl, () => config.publicUrl ?? apiUrl);
    const background = config.worker ? await startBackgroundWork(services, db.sessionUrl, sandbox) : null;
    if (background) started.push(() => background.stop());

    // PORT=0 (any free port) is chosen here: a replacement must listen where the others do even when none is left
    // listening (the cluster's shared socket closes with its last member, and a new port 0 would be another port).
    const port = config.port || (await freePort());
    // GET /metrics on any API process answers for the group: its own metrics, every API process's, and the queue
    // depths read once, on this pool (src/http/metrics-cluster.ts).
    const own =
      config.metrics === 'off'
        ? []
        : [collectProcessMetrics(), poolRegistry(services.plainPool), queueRegistry(services.plainPool)];
    const metrics = new GroupMetrics(
      () => Promise.all(own.map((r) => r.getMetricsAsJSON())),
      () => group.workers(),
    );
    const group: ClusterGroup = new ClusterGroup({
      name: 'API process',
      size: config.apiProcesses,
      // API_PROCESSES=1: each runs `npm start`'s single-process path (src/main.ts), serving HTTP only.
      env: {
        PORT: String(port),
        DATABASE_URL: db.url,
        ...(sandboxUrl ? { SANDBOX_URL: sandboxUrl } : {}),
        WORKER: 'off',
        API_PROCESSES: '1',
      },
      onMessage: (worker, message) => metrics.onMessage(worker, message),
    });
    started.push(() => group.stop(API_STOP_MS + 1_000)); // each drains within its own bound
    await group.start();
    const members = group.listening();
    apiUrl = members[0].url;

    // The API processes' connections on each server they use, then the supervisor's own.
    const each = members[0].connections;
    const servers = Object.keys(each) as ServerSetting[];
    const session = sessionServer(config);
    const connections = connectionBudget([
      ...servers.map((on) => ({
        what: `${members.length} API processes × ${each[on]} =`,
        n: members.reduce((sum, m) => sum + (m.connections[on] ?? 0), 0),
        on,
      })),
      { what: 'supervisor pool', n: services.plainPool.options.max },
      { what: 'LISTEN', n: background?.connections ?? 0, on: session },
      { what: 'sandbox', n: sandbox?.connections ?? 0, on: session },
    ]);
    logger.info({ connections: connections.byServer }, `database: ${connections.text}`);
    const supervisorRuns = [sandbox && 'sandbox', background && 'webhook delivery, scheduler']
      .filter(Boolean)
      .join(', ');
    await printBanner(config, db, services, {
      url: apiUrl,
      sandboxUrl,
      sandboxHere: sandbox !== null,
      connections: connections.text,
      processes: `${members.length} API processes (pids ${members.map((m) => m.pid).join(', ')}) under supervisor ${process.pid}${supervisorRuns ? ` (${supervisorRuns})` : ''}`,
    });
    // The API processes' drain, then the rest of what stops.
    return { forceAfterMs: API_STOP_MS * 2, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

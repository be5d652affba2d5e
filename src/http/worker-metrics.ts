import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Config } from '../config';
import { DomainError } from '../core/errors';
import type { ServicePool } from '../core/orm-pool';
import { appMetrics } from './metrics';
import { lazyRequestLog, requestContext, sendError } from './request';

/**
 * `npm run worker`'s own `GET /metrics` (docs/production.md, "Metrics"), on WORKER_METRICS_PORT: what only the
 * worker counts (its webhook delivery attempts), its pool, Node's process metrics and the queue depths, under the same
 * access rule as the API's (METRICS, ADMIN_TOKEN). Nothing else is served there: `/healthz` for a liveness probe, 404
 * for the rest.
 */
export async function serveWorkerMetrics(
  config: Config,
  pool: ServicePool,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.disable('x-powered-by');
  lazyRequestLog(app.request);
  const metrics = appMetrics(config, pool);
  app.use(requestContext);
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/metrics', metrics.serve);
  app.use((req, res) =>
    sendError(req, res, new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.path}).`)),
  );
  const server = http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${bound}`,
    close: async () => {
      metrics.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/**
 * The process's own metrics (docs/production.md, "Metrics"): Node's defaults and the counters of work the process
 * does outside requests. Labels never name a merchant, a customer or any id: every label value comes from a fixed
 * set written in code.
 *
 * One registry per process. With API_PROCESSES > 1 the supervisor adds up its own and every API process's
 * (src/http/metrics-cluster.ts); `npm run worker` serves its own on WORKER_METRICS_PORT (src/http/worker-metrics.ts).
 */
export const processRegistry = new Registry();

let defaults = false;

/** Node's default metrics (CPU, memory, event loop lag, GC, handles), registered once: only when metrics are served. */
export function collectProcessMetrics(): Registry {
  if (!defaults) {
    defaults = true;
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** Outbound webhook attempts this process made, by result: succeeded, retry (pending again) or failed (given up). */
export const webhookAttempts = new Counter({
  name: 'cadence_webhook_delivery_attempts_total',
  help: 'Outbound webhook delivery attempts made by this process, by result (succeeded, retry, failed: given up).',
  labelNames: ['result'] as const,
  registers: [processRegistry],
});

import path from 'node:path';
import type { PoolMode, SessionSettings } from './core/db';

/** Everything the service reads from the environment, parsed once. */
export interface Config {
  port: number;
  host: string;
  /**
   * HTTP_KEEP_ALIVE_SECONDS (default 65): how long the API keeps an idle keep-alive connection open. Longer than a
   * load balancer's or proxy's idle timeout (60 s at AWS ALB and nginx), so the proxy, never the API, closes an idle
   * connection first: otherwise a request it sends just as the API closes fails (docs/production.md).
   */
  httpKeepAliveSeconds: number;
  /** Unset: the service starts an embedded PostgreSQL with its data in `dataDir`. */
  databaseUrl: string | undefined;
  /**
   * DATABASE_READ_URL: a streaming replica of DATABASE_URL's database that the analytics reports read (MRR, churn,
   * LTV, quick ratio, cohorts, autopay) through a small pool of their own (src/core/read-pool.ts), so their figures lag
   * by the replication delay. Unset: everything reads the primary. Needs DATABASE_URL (docs/production.md, "A read
   * replica for analytics").
   */
  databaseReadUrl: string | undefined;
  /**
   * DATABASE_SESSION_URL: where the connections that need a session of their own go (the LISTEN connection, the
   * migration lock, test-clock advance locks), e.g. PostgreSQL directly when DATABASE_URL is a PgBouncer in transaction
   * mode. Unset: DATABASE_URL (docs/production.md, "PgBouncer").
   */
  databaseSessionUrl: string | undefined;
  /**
   * DATABASE_POOL_MODE: `session` (default) when DATABASE_URL's connections are sessions of their own (PostgreSQL, or a
   * PgBouncer in session mode); `transaction` when it is a transaction-mode pooler: statements are then sent unnamed
   * (no prepared statements), and DATABASE_SESSION_URL is required.
   */
  databasePoolMode: PoolMode;
  dataDir: string;
  adminToken: string | undefined;
  /**
   * GET /metrics (METRICS): `operator` (default) serves it to the operator token (ADMIN_TOKEN; without one it answers
   * 404), `open` to anyone who reaches the port (a private network), `off` never (docs/production.md, "Metrics").
   */
  metrics: MetricsAccess;
  rateLimitPerSecond: number;
  /**
   * Where per-key rate limits and WebSocket caps are shared by every process (docs/operations.md, "Shared limits"):
   * this Redis (REDIS_URL), its keys under REDIS_KEY_PREFIX (default `cadence:`); unset: the service's PostgreSQL.
   */
  redis: { url: string; keyPrefix: string } | undefined;
  logLevel: string;
  /** Public base URL used in links the service hands out (gateway webhook URLs); default: where it listens. */
  publicUrl: string | undefined;
  worker: boolean;
  /**
   * HTTP API processes on PORT (API_PROCESSES, 1 to 64; default 1). Over 1, `npm start` is a supervisor that runs the
   * shared work once and forks that many API processes sharing the port (src/supervisor.ts).
   */
  apiProcesses: number;
  dbPoolMax: number;
  /** On (default): every gateway call goes to the local gateway sandbox instead of Stripe/Razorpay. */
  sandbox: boolean;
  sandboxPort: number;
  /**
   * SANDBOX_URL: a sandbox already running as its own process (`npm run sandbox`); the service then starts none and
   * sends gateway calls there. Unset: the sandbox runs inside this process on `sandboxPort`.
   */
  sandboxUrl: string | undefined;
  /** Base URL of the sandbox as customers' browsers reach it (hosted checkout pages); default: where it listens. */
  sandboxPublicUrl: string | undefined;
  gatewayTimeoutMs: number;
  /** SANDBOX_FAULTS (off): the sandbox serves /_faults, failing chosen requests on demand (tests only). */
  sandboxFaults: boolean;
  /**
   * SANDBOX_REDELIVERY_SECONDS (60; 0: off): as the gateways do, the sandbox sends an event the service did not
   * acknowledge again, this long after it was made, then after twice as long each time, for about three days
   * (docs/sandbox.md, "Event delivery").
   */
  sandboxRedeliverySeconds: number;
  /**
   * IRP_URL: the invoice registration portal's API root for GST e-invoicing (docs/india.md). Unset: the sandbox's
   * portal when SANDBOX is on, else none (registrations fail with that reason).
   */
  irpUrl: string | undefined;
  /** How long a gateway command is retried before it is given up (GATEWAY_COMMAND_RETRY_SECONDS; 3 days). */
  gatewayCommandRetrySeconds: number;
  /** The wait after a gateway command's first failed attempt, doubling up to an hour (GATEWAY_COMMAND_FIRST_RETRY_MS; 30 s). */
  gatewayCommandFirstRetryMs: number;
  /** Outbound webhooks: seconds between attempts (WEBHOOK_RETRY_SCHEDULE, comma-separated; docs/webhooks.md). */
  webhookRetrySchedule: number[];
  /** An attempt that has not answered by then fails (WEBHOOK_TIMEOUT_MS, default 10 s). */
  webhookTimeoutMs: number;
  /**
   * WEBHOOK_ALLOW_PRIVATE_NETWORKS (on/off): webhook endpoints, of either mode, may be on loopback, private, link-local
   * and internal addresses (docs/webhooks.md). Default: on only on the embedded database (DATABASE_URL unset).
   */
  webhookAllowPrivateNetworks: boolean;
  /** How often a worker looks for due subscription work: trial ends, period ends, dunning (SCHEDULER_POLL_MS). */
  schedulerPollMs: number;
  /** How often a worker reads back subscriptions whose gateway event is overdue (RECONCILE_INTERVAL_MS). */
  reconcileIntervalMs: number;
  /** A renewal or trial end is overdue when its gateway event is this late (RECONCILE_GRACE_MS). */
  reconcileGraceMs: number;
  /** A pause, resume or cancel whose gateway call went unanswered is read back from the gateway this long after (PENDING_OUTCOME_GRACE_MS; 30 s). */
  pendingOutcomeGraceMs: number;
  /** Deliveries one worker process sends at once (WORKER_CONCURRENCY). */
  workerConcurrency: number;
  /** `npm run worker` serves GET /metrics on this port (docs/production.md, "Metrics"); unset: none. */
  workerMetricsPort: number | undefined;
  /** How often an idle worker looks for due retries (WORKER_POLL_MS); new events wake it at once. */
  workerPollMs: number;
  /** Finished webhook deliveries, dispatched events and inbound gateway events older than this are pruned (0: never). */
  historyRetentionDays: number;
  /** Byte budget of the catalog read cache (READ_CACHE_MB, default 16; 0 turns it off): src/core/read-cache.ts. */
  readCacheBytes: number;
  /** Byte budget of the entitlement evaluation cache (ENTITLEMENT_CACHE_MB, default 16; 0 turns it off). */
  entitlementCacheBytes: number;
  /** GraphQL WebSocket caps (per process): subscriptions open on one socket, sockets open with one key. */
  wsMaxSubscriptionsPerSocket: number;
  wsMaxSocketsPerKey: number;
  /** Worker threads rendering invoice PDFs off the event loop (DOCUMENT_RENDER_THREADS, default 1). */
  documentRenderThreads: number;
  /** A subscription's hosted checkout not completed by then is expired and the subscription cancelled (default 24 h, as Stripe's sessions). */
  subscriptionCheckoutExpirySeconds: number;
}

export type MetricsAccess = 'operator' | 'open' | 'off';

function metricsAccess(raw: string | undefined): MetricsAccess {
  const v = (raw ?? '').trim().toLowerCase();
  if (v === '') return 'operator';
  if (v === 'operator' || v === 'open' || v === 'off') return v;
  throw new Error(`METRICS must be operator, open or off, got "${raw}"`);
}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

const MAX_API_PROCESSES = 64;

function apiProcesses(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || n < 1 || n > MAX_API_PROCESSES) {
    throw new Error(`API_PROCESSES must be a whole number from 1 to ${MAX_API_PROCESSES}, got "${raw}"`);
  }
  return n;
}

/** The outbound event rules (docs/webhooks.md): retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then failed. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

function retrySchedule(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return DEFAULT_WEBHOOK_RETRY_SCHEDULE;
  const parts = raw.split(',').map((s) => Number(s.trim()));
  if (parts.some((n) => !Number.isFinite(n) || n < 0)) {
    throw new Error(`WEBHOOK_RETRY_SCHEDULE must be comma-separated non-negative seconds, got "${raw}"`);
  }
  return parts;
}

function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (['on', 'true', '1'].includes(raw)) return true;
  if (['off', 'false', '0'].includes(raw)) return false;
  throw new Error(`${name} must be on or off (or true/false, 1/0), got "${env[name]}"`);
}

/** DATABASE_READ_URL, only beside DATABASE_URL: the embedded database has no replica. */
function databaseReadUrl(env: NodeJS.ProcessEnv): string | undefined {
  const url = env.DATABASE_READ_URL?.trim() || undefined;
  if (url && !env.DATABASE_URL) {
    throw new Error('DATABASE_READ_URL needs DATABASE_URL: it names a replica of that database');
  }
  return url;
}

/** DATABASE_SESSION_URL and DATABASE_POOL_MODE (docs/production.md, "PgBouncer"). */
function databaseSession(env: NodeJS.ProcessEnv): { url: string | undefined; mode: PoolMode } {
  const url = env.DATABASE_SESSION_URL?.trim() || undefined;
  const raw = (env.DATABASE_POOL_MODE ?? '').trim().toLowerCase();
  if (raw !== '' && raw !== 'session' && raw !== 'transaction') {
    throw new Error(`DATABASE_POOL_MODE must be session or transaction, got "${env.DATABASE_POOL_MODE}"`);
  }
  const mode: PoolMode = raw === 'transaction' ? 'transaction' : 'session';
  if ((url || mode === 'transaction') && !env.DATABASE_URL) {
    throw new Error(
      `${url ? 'DATABASE_SESSION_URL' : 'DATABASE_POOL_MODE=transaction'} needs DATABASE_URL: the embedded database has no pooler`,
    );
  }
  if (mode === 'transaction' && !url) {
    throw new Error(
      'DATABASE_POOL_MODE=transaction needs DATABASE_SESSION_URL: LISTEN and session advisory locks (migrations, ' +
        'test-clock advances) do not work through a transaction-mode pooler. Point it at PostgreSQL directly (or a ' +
        'session-mode pooler); see docs/production.md, "PgBouncer"',
    );
  }
  return { url, mode };
}

/** What `openDatabase` needs to know of the pool and the session connections, for every process that opens it. */
export function sessionSettings(config: Config): SessionSettings {
  return { sessionUrl: config.databaseSessionUrl, poolMode: config.databasePoolMode };
}

/** Where the connections that need a session go: DATABASE_SESSION_URL, else the pool's own URL `poolUrl`. */
export function sessionDatabaseUrl(config: Config, poolUrl: string): string {
  return config.databaseSessionUrl ?? poolUrl;
}

export function loadConfig(env = process.env): Config {
  const port = int(env, 'PORT', 4000);
  const host = env.HOST || '127.0.0.1';
  const session = databaseSession(env);
  return {
    port,
    host,
    httpKeepAliveSeconds: Math.max(1, int(env, 'HTTP_KEEP_ALIVE_SECONDS', 65)),
    databaseUrl: env.DATABASE_URL || undefined,
    databaseReadUrl: databaseReadUrl(env),
    databaseSessionUrl: session.url,
    databasePoolMode: session.mode,
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    adminToken: env.ADMIN_TOKEN || undefined,
    metrics: metricsAccess(env.METRICS),
    rateLimitPerSecond: int(env, 'RATE_LIMIT_PER_SECOND', 100),
    redis: env.REDIS_URL ? { url: env.REDIS_URL, keyPrefix: env.REDIS_KEY_PREFIX ?? 'cadence:' } : undefined,
    logLevel: env.LOG_LEVEL || 'info',
    publicUrl: env.PUBLIC_URL ? env.PUBLIC_URL.replace(/\/$/, '') : undefined,
    worker: (env.WORKER || 'on') !== 'off',
    apiProcesses: apiProcesses(env.API_PROCESSES),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10),
    sandbox: (env.SANDBOX || 'on') !== 'off',
    sandboxPort: int(env, 'SANDBOX_PORT', port === 0 ? 0 : port + 1),
    sandboxUrl: env.SANDBOX_URL ? env.SANDBOX_URL.replace(/\/$/, '') : undefined,
    sandboxPublicUrl: env.SANDBOX_PUBLIC_URL ? env.SANDBOX_PUBLIC_URL.replace(/\/$/, '') : undefined,
    gatewayTimeoutMs: int(env, 'GATEWAY_TIMEOUT_MS', 10_000),
    sandboxFaults: onOff(env, 'SANDBOX_FAULTS', false),
    sandboxRedeliverySeconds: Math.max(0, int(env, 'SANDBOX_REDELIVERY_SECONDS', 60)),
    irpUrl: env.IRP_URL ? env.IRP_URL.replace(/\/$/, '') : undefined,
    gatewayCommandRetrySeconds: Math.max(1, int(env, 'GATEWAY_COMMAND_RETRY_SECONDS', 3 * 86_400)),
    gatewayCommandFirstRetryMs: Math.max(10, int(env, 'GATEWAY_COMMAND_FIRST_RETRY_MS', 30_000)),
    webhookRetrySchedule: retrySchedule(env.WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
    webhookAllowPrivateNetworks: onOff(env, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', !env.DATABASE_URL),
    historyRetentionDays: int(env, 'HISTORY_RETENTION_DAYS', 30),
    readCacheBytes: int(env, 'READ_CACHE_MB', 16) * 2 ** 20,
    entitlementCacheBytes: int(env, 'ENTITLEMENT_CACHE_MB', 16) * 2 ** 20,
    schedulerPollMs: Math.max(10, int(env, 'SCHEDULER_POLL_MS', 1_000)),
    reconcileIntervalMs: Math.max(1_000, int(env, 'RECONCILE_INTERVAL_MS', 60_000)),
    reconcileGraceMs: Math.max(0, int(env, 'RECONCILE_GRACE_MS', 15 * 60_000)),
    pendingOutcomeGraceMs: Math.max(0, int(env, 'PENDING_OUTCOME_GRACE_MS', 30_000)),
    workerConcurrency: Math.max(1, int(env, 'WORKER_CONCURRENCY', 64)),
    workerMetricsPort: env.WORKER_METRICS_PORT ? int(env, 'WORKER_METRICS_PORT', 0) : undefined,
    workerPollMs: Math.max(10, int(env, 'WORKER_POLL_MS', 250)),
    wsMaxSubscriptionsPerSocket: int(env, 'WS_MAX_SUBSCRIPTIONS_PER_SOCKET', 100),
    wsMaxSocketsPerKey: int(env, 'WS_MAX_SOCKETS_PER_KEY', 50),
    documentRenderThreads: Math.max(1, int(env, 'DOCUMENT_RENDER_THREADS', 1)),
    subscriptionCheckoutExpirySeconds: Math.max(60, int(env, 'SUBSCRIPTION_CHECKOUT_EXPIRY_SECONDS', 86_400)),
  };
}

import type { MikroORM } from '@mikro-orm/postgresql';
import { type Config, sessionDatabaseUrl, sessionSettings } from './config';
import { EmbeddedDatabase, openDatabase, startEmbeddedPostgres } from './core/db';
import { PgListener } from './core/listener';
import { logger } from './core/logger';
import { repeatWithoutOverlap } from './core/periodic';
import { SecretBox } from './core/secrets';
import { entities } from './entities';
import { RunningSandbox, startSandbox } from './gateways/sandbox';
import { connectDemoGateways, DemoMerchant, ensureDemoMerchant } from './demo';
import type { Services } from './services';

/**
 * The start-up steps the entry points share: `npm start` (src/main.ts) in one process, its supervisor with
 * API_PROCESSES > 1 (src/supervisor.ts), `npm run worker` and `npm run sandbox`.
 */

/** How long an API process may take to drain on SIGINT/SIGTERM before it exits anyway. */
export const API_STOP_MS = 15_000;

export interface ServiceDatabase {
  url: string;
  /** Where the connections that need a session go (LISTEN, locks, the in-process sandbox): DATABASE_SESSION_URL, else `url`. */
  sessionUrl: string;
  orm: MikroORM;
  /** The embedded server started for this process, when DATABASE_URL is unset. */
  embedded: EmbeddedDatabase | undefined;
  /** The pool, then the embedded server. */
  close(): Promise<void>;
}

/** The service's database, migrated: DATABASE_URL, or an embedded PostgreSQL started now with its data in DATA_DIR. */
export async function openServiceDatabase(config: Config, poolMax: number): Promise<ServiceDatabase> {
  let embedded: EmbeddedDatabase | undefined;
  let url = config.databaseUrl;
  if (!url) {
    logger.info({ dataDir: config.dataDir }, 'DATABASE_URL unset: starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres(config.dataDir);
    url = embedded.url;
  }
  try {
    const orm = await openDatabase(url, entities, poolMax, sessionSettings(config));
    return {
      url,
      sessionUrl: sessionDatabaseUrl(config, url),
      orm,
      embedded,
      close: async () => {
        await orm.close(true);
        if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
}

/**
 * The gateway sandbox in this process, as configured (SANDBOX_PORT unless `port`, HOST, SANDBOX_PUBLIC_URL).
 * `databaseUrl`: the session URL (ServiceDatabase.sessionUrl): its migration lock and named statements need sessions.
 */
export function startConfiguredSandbox(
  config: Config,
  databaseUrl: string,
  opts: { port?: number; poolMax?: number } = {},
): Promise<RunningSandbox> {
  return startSandbox({
    databaseUrl,
    poolMax: opts.poolMax,
    port: opts.port ?? config.sandboxPort,
    host: config.host,
    publicUrl: config.sandboxPublicUrl,
    secrets: SecretBox.fromEnv(config.dataDir),
    faults: config.sandboxFaults,
  });
}

const RENEWALS_EVERY_MS = 30_000;

/**
 * The gateways charge subscription renewals as real time passes; so does the sandbox, every 30 s: each account by
 * its own clock (wall time plus what test-clock advances added), so a test clock far ahead is not charged by the
 * wall clock, nor the others by its. And as they do, it sends again the events the service did not acknowledge
 * (Sandbox.redeliverDue; `redeliverySeconds` 0: never), looking every half of that wait, at most every 30 s. Answers a
 * function that stops both.
 */
export function runSandboxAsTimePasses(sandbox: RunningSandbox, redeliverySeconds: number): () => void {
  const renewals = setInterval(
    () => void sandbox.chargeDueRenewals(new Date()).catch((err) => logger.warn({ err }, 'sandbox renewals failed')),
    RENEWALS_EVERY_MS,
  );
  renewals.unref();
  const redelivery =
    redeliverySeconds > 0
      ? repeatWithoutOverlap(
          Math.min(RENEWALS_EVERY_MS, Math.max(100, (redeliverySeconds * 1000) / 2)),
          () => sandbox.redeliverDue(redeliverySeconds),
          (err) => logger.warn({ err }, 'sandbox redelivery failed'),
        )
      : null;
  return () => {
    clearInterval(renewals);
    // A round in flight is waited for by the sandbox's close().
    void redelivery?.stop();
  };
}

export interface BackgroundWork {
  /** Connections it opens beside the pool: its LISTEN connection. */
  connections: number;
  /** Attempts in flight finish and are recorded; then the LISTEN connection closes (the pool is the caller's). */
  stop(): Promise<void>;
}

/**
 * The work WORKER controls, on this process's services: outbound webhook delivery and gateway commands (woken through
 * a LISTEN connection of its own, on `sessionUrl`: DATABASE_SESSION_URL, else DATABASE_URL), the subscriptions
 * scheduler and, given the sandbox running in this process, its renewals.
 */
export async function startBackgroundWork(
  services: Services,
  sessionUrl: string,
  sandbox: RunningSandbox | null = null,
): Promise<BackgroundWork> {
  const listener = new PgListener(sessionUrl);
  await listener.start();
  await services.delivery.startWorker(listener);
  await services.commands.startWorker(listener);
  services.schedulerLoop.start();
  const stopRenewals = sandbox
    ? runSandboxAsTimePasses(sandbox, services.config.sandboxRedeliverySeconds)
    : () => undefined;
  return {
    connections: 1,
    stop: async () => {
      stopRenewals();
      await services.schedulerLoop.stop();
      await services.commands.stopWorker();
      await services.delivery.close();
      await listener.stop();
    },
  };
}

export interface BannerFacts {
  /** Where the API answers. */
  url: string;
  /** The gateway sandbox's base URL (null: SANDBOX=off), and whether this process runs it (else SANDBOX_URL's). */
  sandboxUrl: string | null;
  sandboxHere: boolean;
  /** The connection budget's text (src/core/pool.ts connectionBudget). */
  connections: string;
  /** Which processes serve, when more than this one. */
  processes?: string;
}

/**
 * What `npm start` prints once the API answers. On the embedded database it first makes sure of the demo merchant
 * (connected to the sandbox's gateways) and prints its keys: that is the demo setting, and the demo merchant is
 * answered (null outside it), for the GraphQL IDE to open with its test key (src/http/ide.ts).
 */
export async function printBanner(
  config: Config,
  db: ServiceDatabase,
  services: Services,
  facts: BannerFacts,
): Promise<DemoMerchant | null> {
  const { url, sandboxUrl } = facts;
  const banner: string[] = [
    '',
    `Cadence is running at ${url}`,
    `  REST API      ${url}/v1`,
    `  GraphQL + IDE ${url}/graphql`,
    `  REST docs     ${url}/docs`,
    `  Dashboard     ${url}/dashboard`,
    `  Sandbox       ${sandboxUrl ? `${sandboxUrl}${facts.sandboxHere ? '' : ' (SANDBOX_URL: its own process)'}` : 'off (SANDBOX=off: real gateways)'}`,
    ...(facts.processes ? [`  Processes     ${facts.processes}`] : []),
    `  Database      ${db.embedded ? `embedded PostgreSQL (data in ${config.dataDir})` : 'DATABASE_URL'}; ${facts.connections}`,
  ];
  let demo: DemoMerchant | null = null;
  if (db.embedded) {
    demo = await ensureDemoMerchant(db.orm, config.dataDir);
    if (sandboxUrl) {
      try {
        await connectDemoGateways(db.orm, services, demo.merchantId);
      } catch (err) {
        // An external sandbox (SANDBOX_URL) may not be up yet: serve anyway; the next start connects the demo merchant.
        if (facts.sandboxHere) throw err;
        logger.warn({ err, sandboxUrl }, 'demo merchant not connected: the sandbox did not answer');
      }
    }
    banner.push(
      `  Demo merchant ${demo.merchantId}${demo.created ? ' (created now)' : ''}`,
      `    test key    ${demo.keys.test}`,
      `    live key    ${demo.keys.live}`,
    );
  }
  process.stdout.write(banner.join('\n') + '\n\n');
  return demo;
}

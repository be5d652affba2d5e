import 'reflect-metadata';
import { loadConfig, sessionDatabaseUrl } from './config';
import { runProcess } from './core/lifecycle';
import { runSandboxAsTimePasses, startConfiguredSandbox } from './startup';

/**
 * `npm run sandbox`: the gateway sandbox alone, on SANDBOX_PORT (default 4001). Point API processes at it with
 * SANDBOX_URL so its CPU is not theirs. Needs DATABASE_URL (its state lives in the sandbox_* tables, which it
 * migrates itself: its own migrations, recorded in sandbox_migrations).
 */
async function main() {
  const config = loadConfig();
  if (!config.databaseUrl)
    throw new Error('npm run sandbox needs DATABASE_URL (the database the sandbox keeps its state in)');
  // Not PORT + 1: PORT belongs to the API, the sandbox has its own fixed default.
  const port = process.env.SANDBOX_PORT ? config.sandboxPort : 4001;
  // The sandbox opens its own ORM and applies its own migrations (src/gateways/sandbox/database.ts), under a session
  // lock and with named statements: on DATABASE_SESSION_URL when set.
  const sandbox = await startConfiguredSandbox(config, sessionDatabaseUrl(config, config.databaseUrl), {
    port,
    poolMax: config.dbPoolMax,
  });
  // Renewals and redeliveries as real time passes, like the gateways (the in-process sandbox does the same).
  const stopRenewals = runSandboxAsTimePasses(sandbox, config.sandboxRedeliverySeconds);
  process.stdout.write(`Cadence gateway sandbox running at ${sandbox.url}\n`);
  // The official SDKs reach it with public options only (docs/sandbox.md, "Pointing the official SDKs at the sandbox").
  process.stdout.write(
    `  Stripe SDK:   new Stripe(key, { host, port, protocol: 'http' }) of ${sandbox.url}\n` +
      `  Razorpay SDK: HTTPS_PROXY=${sandbox.url} NODE_EXTRA_CA_CERTS=<file of ${sandbox.url}/_sandbox/certificates/api.razorpay.com.pem>\n`,
  );

  return {
    forceAfterMs: 15_000,
    // Stop the timer, wait for webhook deliveries in flight, close the server, then the pool.
    stop: async () => {
      stopRenewals();
      await sandbox.close();
    },
  };
}

runProcess('Cadence sandbox', main);

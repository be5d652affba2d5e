import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { Express, Request } from 'express';
import { authenticationRouter } from './authentication';
import { irpRouter } from './irp';
import { checkoutRouter } from './checkout';
import { notEmulated, requestChecks, sandboxErrorHandler } from './http';
import { razorpayRouter } from './razorpay.routes';
import { openSandboxDatabase } from './database';
import { Sandbox, SandboxOptions } from './sandbox';
import { stripeRouter } from './stripe.routes';
import { Faults } from './faults';
import { loadTlsIdentity } from './tls-identity';
import { acceptGatewayTunnels, RAZORPAY_API_HOST, routeGatewayHosts } from './tunnel';

export { Sandbox } from './sandbox';
export type { SandboxOptions, RenewalFilter, RenewalResult, AdvanceResult } from './sandbox';
export { sandboxAccountKey } from './ids';
export { sandboxEntities } from './sandbox.entities';
export { openSandboxDatabase } from './database';

/**
 * The gateway sandbox (docs/sandbox.md): a Stripe-compatible API at /v1, a Razorpay-compatible API at
 * /razorpay/v1, and the hosted checkout pages at /checkout/{id}. State lives in the service's database.
 * Extensions (test mode): a clock per account (POST /v1/test_helpers/sandbox/advance,
 * /razorpay/v1/test_helpers/advance) and a dunning retry for Razorpay
 * (/razorpay/v1/test_helpers/subscriptions/{id}/retry_charge); with `faults`, injected failures (faults.ts).
 */
export function createSandbox(opts: SandboxOptions): Sandbox & { app: Express } {
  const sb = new Sandbox(opts) as Sandbox & { app: Express };
  const app = express();
  app.disable('x-powered-by');
  // Stripe's SDK sends nested parameters (expand[]=..., metadata[k]=...) in query strings too.
  app.set('query parser', 'extended');
  app.use(requestChecks); // path and query; each router checks its bodies after parsing them (bodyChecks)
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true });
  });
  // The certificate the sandbox shows for a gateway host it stands in for as a proxy (tunnel.ts): what a merchant's
  // process trusts through NODE_EXTRA_CA_CERTS.
  app.get('/_sandbox/certificates/:file', (req, res) => {
    const cert = sb.certificates.get(String(req.params.file).replace(/\.pem$/, ''));
    if (!cert) {
      res.status(404).type('text/plain').send('No such certificate\n');
      return;
    }
    res.type('application/x-pem-file').send(cert);
  });
  if (opts.faults) {
    // Tests only (SANDBOX_FAULTS=on): requests that fail, time out or lose their answer on demand (faults.ts).
    const faults = new Faults();
    app.use(faults.router());
    app.use(faults.apply);
  }
  app.use('/v1', stripeRouter(sb));
  app.use('/razorpay/v1', razorpayRouter(sb));
  app.use(checkoutRouter(sb));
  app.use(authenticationRouter(sb));
  app.use('/irp/v1', irpRouter(sb.pool, sb.secrets));
  app.use((req: Request) => {
    throw notEmulated(req.method, req.path);
  });
  app.use(sandboxErrorHandler);
  sb.app = app;
  return sb;
}

/** Just the express app (mount it anywhere; checkout URLs are built from publicUrl). */
export function createSandboxApp(opts: SandboxOptions & { publicUrl: string }): Express {
  return createSandbox(opts).app;
}

export interface RunningSandbox {
  url: string;
  sandbox: Sandbox;
  chargeDueRenewals: Sandbox['chargeDueRenewals'];
  advanceClock: Sandbox['advanceClock'];
  retryCharge: Sandbox['retryCharge'];
  redeliverPending: Sandbox['redeliverPending'];
  redeliverDue: Sandbox['redeliverDue'];
  /** The most database connections it opens: its ORM's pool and its plain pool. */
  connections: number;
  close(): Promise<void>;
}

export type StartSandboxOptions = Omit<SandboxOptions, 'orm'> & {
  port: number;
  host?: string;
  /** The database its state lives in; it opens its own ORM there and applies its own migrations. */
  databaseUrl: string;
};

/**
 * Starts the sandbox on its own port (0: any free one): opens its own ORM and migrates its tables
 * (src/gateways/sandbox/database.ts). `publicUrl` defaults to the address it listens on.
 */
export async function startSandbox(opts: StartSandboxOptions): Promise<RunningSandbox> {
  const orm = await openSandboxDatabase(opts.databaseUrl);
  const sb = createSandbox({ ...opts, orm });
  await sb.sealStoredSecrets();
  // The sandbox is also the HTTPS proxy the Razorpay SDK can be pointed at (tunnel.ts, docs/sandbox.md).
  const identity = await loadTlsIdentity(sb.pool, opts.secrets, RAZORPAY_API_HOST);
  sb.certificates.set(identity.host, identity.cert);
  const server = http.createServer(routeGatewayHosts(sb.app));
  const closeTunnels = acceptGatewayTunnels(server, identity);
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (!opts.publicUrl) sb.publicUrl = url;
  return {
    url,
    sandbox: sb,
    chargeDueRenewals: sb.chargeDueRenewals.bind(sb),
    advanceClock: sb.advanceClock.bind(sb),
    retryCharge: sb.retryCharge.bind(sb),
    redeliverPending: sb.redeliverPending.bind(sb),
    redeliverDue: sb.redeliverDue.bind(sb),
    connections: (orm.config.get('pool') as { max: number }).max + (sb.pool.options.max ?? 0),
    async close() {
      await sb.settle();
      server.closeAllConnections();
      closeTunnels();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sb.close(); // its pools last: nothing can use them once the server is closed
      if (await orm.isConnected()) await orm.close(true); // tests close a stopped sandbox once more
    },
  };
}

import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MikroORM } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { ensureDatabase, openDatabase } from '../../src/core/db';
import { SecretBox } from '../../src/core/secrets';
import { startSandbox, RunningSandbox } from '../../src/gateways/sandbox';

/** The key the adapter tests' sandboxes seal registered webhook secrets with (one per test process). */
export const SANDBOX_SECRETS = SecretBox.fromEnv('', { ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') });

/** A fresh migrated database and the sandbox on a free port: one per test file. */
export interface SandboxEnv {
  orm: MikroORM;
  sandbox: RunningSandbox;
  receiver: Receiver;
  close(): Promise<void>;
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A local webhook endpoint recording what gateways send it; `failNext` answers 500 that many times. */
export interface Receiver {
  url: string;
  received: Received[];
  failNext: number;
  /** Everything received since the last take(). */
  take(): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const state = { received: [] as Received[], cursor: 0, failNext: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.failNext > 0) {
        state.failNext--;
        res.statusCode = 500;
        res.end('nope');
        return;
      }
      state.received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.setHeader('content-type', 'application/json');
      res.end('{"received":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: state.received,
    get failNext() {
      return state.failNext;
    },
    set failNext(n: number) {
      state.failNext = n;
    },
    take() {
      const out = state.received.slice(state.cursor);
      state.cursor = state.received.length;
      return out;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

export async function startSandboxEnv(): Promise<SandboxEnv> {
  const adminUrl = process.env.TEST_PG_ADMIN_URL;
  if (!adminUrl) throw new Error('TEST_PG_ADMIN_URL missing: run the tests through jest (global setup)');
  const name = `cadence_test_gw_${crypto.randomBytes(6).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const orm = await openDatabase(u.toString(), 5);
  const sandbox = await startSandbox({ orm, port: 0, delivery: { retryDelaysMs: [20, 50], timeoutMs: 5000 }, secrets: SANDBOX_SECRETS });
  const receiver = await startReceiver();
  return {
    orm,
    sandbox,
    receiver,
    async close() {
      await sandbox.close();
      await receiver.close();
      await orm.close(true);
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}

export const randomKey = (prefix: string) => `${prefix}${crypto.randomBytes(12).toString('hex')}`;

/** Submits the hosted checkout form as a browser would (form-encoded) and returns the 303 target. */
export async function submitCheckout(checkoutUrl: string, fields: Record<string, string>, json = false): Promise<{ status: number; location: string | null }> {
  const res = await fetch(checkoutUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
  });
  await res.text();
  return { status: res.status, location: res.headers.get('location') };
}

/** A port nothing listens on. */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

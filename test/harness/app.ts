import path from 'node:path';
import os from 'node:os';
import crypto from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { startApp, RunningApp } from '../../src/app';
import { observeStatements, servicePoolSize } from '../../src/core/sql';
import { Config, loadConfig } from '../../src/config';
import { openDatabase } from '../../src/core/db';
import { entities } from '../../src/entities';
import { RunningSandbox, startSandbox } from '../../src/gateways/sandbox';
import { freshDatabase } from './database';
import { checkAnswer, checkAnswersOf, forgetService } from './openapi-check';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function request<T = any>(
  url: string,
  init: { method?: string; key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const method = init.method ?? (body !== undefined ? 'POST' : 'GET');
  const res = await fetch(url, {
    method,
    headers,
    body,
    redirect: 'manual',
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON */
  }
  // A REST answer of the service must be what its OpenAPI document says (test/harness/openapi-check.ts).
  await checkAnswer(method, url, res.status, { contentType: res.headers.get('content-type'), body: parsed, text });
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** A merchant's REST and GraphQL clients, bound to one secret key (so to one mode). */
export class Client_ {
  constructor(
    readonly baseUrl: string,
    readonly key: string,
  ) {}
  get<T = any>(path: string, headers?: Record<string, string>) {
    return request<T>(`${this.baseUrl}/v1${path}`, { key: this.key, headers });
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return request<T>(`${this.baseUrl}/v1${path}`, { method: 'POST', key: this.key, body: body ?? {}, headers });
  }
  delete<T = any>(path: string) {
    return request<T>(`${this.baseUrl}/v1${path}`, { method: 'DELETE', key: this.key });
  }
  async gql<T = any>(query: string, variables?: Record<string, unknown>) {
    const r = await request<{ data: T; errors?: any[] }>(`${this.baseUrl}/graphql`, {
      key: this.key,
      body: { query, variables },
    });
    return r.body;
  }
}

export interface TestMerchant {
  id: string;
  /** REST clients (and `gql`) of the test and live keys. */
  test: Client_;
  live: Client_;
  keys: { test: string; live: string };
}

export interface TestApp {
  url: string;
  app: RunningApp;
  orm: MikroORM;
  databaseUrl: string;
  /** Statements the service ran since the last reset: how many, and their text (the first 1,000). */
  sql: { count: number; texts: string[]; reset(): void };
  createMerchant(body?: Record<string, unknown>): Promise<TestMerchant>;
  /** The gateway sandbox: stop it (gateway down: connections refused) and start it again on the same address. */
  sandbox: { stop(): Promise<void>; start(): Promise<void>; readonly running: boolean };
  close(): Promise<void>;
}

/** Where the test database is made, when not on the test PostgreSQL (global setup). */
export interface TestServers {
  /** A superuser URL of the server the fresh database is created on. */
  adminUrl: string;
  /** A replica of that server (a URL of any of its databases): DATABASE_READ_URL names the fresh database there. */
  replicaUrl?: string;
}

/** A fresh database (migrated by the service itself) and the real HTTP server on a free port. */
export async function startTestApp(overrides: Partial<Config> = {}, servers?: TestServers): Promise<TestApp> {
  const db = await freshDatabase('cadence_test', servers?.adminUrl);
  const databaseUrl = db.url;
  let databaseReadUrl: string | undefined;
  if (servers?.replicaUrl) {
    const u = new URL(servers.replicaUrl);
    u.pathname = `/${db.name}`;
    databaseReadUrl = u.toString();
  }
  // Sized as src/main.ts does: the ORM's pool is the process's one pool.
  const orm = await openDatabase(databaseUrl, entities, servicePoolSize(overrides.dbPoolMax ?? 10));
  const config: Config = {
    ...loadConfig({}),
    port: 0,
    host: '127.0.0.1',
    databaseUrl,
    adminToken: ADMIN_TOKEN,
    rateLimitPerSecond: 10_000,
    sandbox: true,
    dataDir: path.join(os.tmpdir(), 'cadence-test-data'),
    sandboxPort: 0,
    gatewayTimeoutMs: 3000,
    // Tests inject gateway failures through the sandbox's /_faults (src/gateways/sandbox/faults.ts).
    sandboxFaults: true,
    // Tests deliver what they need themselves (Sandbox.settle, redeliverPending): no redelivery behind their backs.
    sandboxRedeliverySeconds: 0,
    // As in development (embedded database): test endpoints are local receivers on 127.0.0.1. SSRF tests turn it off.
    webhookAllowPrivateNetworks: true,
    databaseReadUrl,
    ...overrides,
  };
  const app = await startApp(config, orm, 0);
  checkAnswersOf(app.url);
  const sql = {
    count: 0,
    /** The statements counted, their text (bounded: the first 1,000 since the last reset). */
    texts: [] as string[],
    reset() {
      this.count = 0;
      this.texts.length = 0;
    },
    /** The last statement was a key's lookup: the merchant read next is its other half. */
    afterKey: false,
    note(text: string) {
      // A key's own lookup (its key_hash, then its merchant) runs when the key's 5-second cache has run out, as on a
      // busy machine between two requests: that is authentication, not the work a test counts.
      if (/from "api_keys"/.test(text) && /key_hash/.test(text)) {
        this.afterKey = true;
        return;
      }
      if (this.afterKey && /from "merchants"/.test(text)) {
        this.afterKey = false;
        return;
      }
      this.afterKey = false;
      this.count++;
      if (this.texts.length < 1000) this.texts.push(text);
    },
  };
  const knex = (
    orm.em.getConnection() as unknown as { getKnex(): { on(e: string, f: (q: { sql?: string }) => void): void } }
  ).getKnex();
  knex.on('query', (q) => sql.note(String(q?.sql ?? '')));
  // Hot paths bypass knex's query builder (src/core/sql.ts): a request's plain statements count too.
  observeStatements(app.services.plainPool, (text) => sql.note(text));

  // The service keeps talking to app.sandboxUrl; a restarted sandbox listens there again.
  let sandbox: RunningSandbox | null = app.sandbox;
  const sandboxControl = {
    get running() {
      return sandbox !== null;
    },
    async stop() {
      if (!sandbox) return;
      const s = sandbox;
      sandbox = null;
      await s.close();
    },
    async start() {
      if (sandbox || !app.sandboxUrl) return;
      const u = new URL(app.sandboxUrl);
      sandbox = await startSandbox({
        databaseUrl,
        port: Number(u.port),
        host: u.hostname,
        publicUrl: app.sandboxUrl,
        secrets: app.sandbox!.sandbox.secrets,
        faults: config.sandboxFaults,
      });
    },
  };

  return {
    url: app.url,
    app,
    orm,
    databaseUrl,
    sql,
    sandbox: sandboxControl,
    async createMerchant(body = {}) {
      const r = await request(`${app.url}/v1/admin/merchants`, {
        key: ADMIN_TOKEN,
        body: { name: `Merchant ${crypto.randomBytes(3).toString('hex')}`, ...body },
      });
      if (r.status !== 201) throw new Error(`createMerchant failed: ${r.status} ${r.text}`);
      const keys = r.body.api_keys;
      return { id: r.body.id, keys, test: new Client_(app.url, keys.test), live: new Client_(app.url, keys.live) };
    },
    async close() {
      forgetService(app.url);
      await app.close();
      if (sandbox && sandbox !== app.sandbox) await sandbox.close();
      await orm.close(true);
      await db.drop();
    },
  };
}

import crypto from 'node:crypto';
import { Client } from 'pg';
import { onCleanup } from './processes';

export interface BenchDatabase {
  name: string;
  /** The URL the service gets as DATABASE_URL. */
  url: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A fresh, empty database `cadence_bench_<random>` on the server behind `serverUrl` (the service migrates it on
 * start). `drop()` removes it, terminating any connection left.
 */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `cadence_bench_${crypto.randomBytes(5).toString('hex')}`;
  await withClient(serverUrl, (c) => c.query(`create database "${name}"`));
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return {
    name,
    url: u.toString(),
    drop: () =>
      withClient(serverUrl, (c) => c.query(`drop database if exists "${name}" with (force)`)).then(() => undefined),
  };
}

/**
 * `n` connected clients of `url` for a bench's own statements, closed once: by `close()`, or by the bench's cleanup
 * (`label` names them there) when it fails or is interrupted first.
 */
export async function benchClients(
  url: string,
  n: number,
  label: string,
): Promise<{ clients: Client[]; close(): Promise<void> }> {
  const clients = await Promise.all(
    Array.from({ length: n }, async () => {
      const c = new Client({ connectionString: url });
      await c.connect();
      return c;
    }),
  );
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  };
  onCleanup(label, close);
  return { clients, close };
}

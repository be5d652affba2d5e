import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { TENANT_FILTER } from '../../src/core/entity';
import { recordEvent } from '../../src/core/events';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** A real HTTP receiver on 127.0.0.1 that records every request; `respond` decides the status (default 200). */
export class Receiver {
  readonly received: Received[] = [];
  respond: (r: Received, index: number) => number | Promise<number> = () => 200;
  private waiters: (() => void)[] = [];

  private constructor(readonly server: http.Server, readonly url: string) {}

  static async start(): Promise<Receiver> {
    let self: Receiver;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const r: Received = {
          path: req.url ?? '/',
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        const index = self.received.length;
        self.received.push(r);
        for (const w of self.waiters.splice(0)) w();
        let status = 200;
        try {
          status = await self.respond(r, index);
        } catch {
          status = 500;
        }
        res.statusCode = status;
        res.setHeader('content-type', 'text/plain');
        res.end(status >= 200 && status < 300 ? 'ok' : `nope ${status}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new Receiver(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Waits until at least `n` requests arrived (not necessarily answered) (fails after `timeoutMs`). */
  async waitFor(n: number, timeoutMs = 15_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < n) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: expected ${n} requests, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.received;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Verifies a request with the standardwebhooks verifier; returns the parsed event or throws. */
export function verify(secret: string, r: Received): any {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.headers['webhook-id'],
    'webhook-timestamp': r.headers['webhook-timestamp'],
    'webhook-signature': r.headers['webhook-signature'],
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** Writes an outbox event for a merchant and mode, as any feature does in the transaction of its change. */
export async function emitEvent(
  t: { orm: import('@mikro-orm/postgresql').MikroORM },
  merchantId: string,
  mode: 'test' | 'live',
  type: string,
  object: Record<string, unknown> = { id: 'obj_1', object: 'thing' },
): Promise<string> {
  const em = t.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { merchantId, mode });
  const ev = recordEvent(em as never, type, object, mode as never);
  await em.flush();
  return ev.id;
}

/** Writes `n` outbox events in one transaction. Returns their ids. */
export async function emitMany(
  t: { orm: import('@mikro-orm/postgresql').MikroORM },
  merchantId: string,
  mode: 'test' | 'live',
  n: number,
  type = 'payment.succeeded',
): Promise<string[]> {
  const em = t.orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { merchantId, mode });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(recordEvent(em as never, type, { id: `obj_${i}`, object: 'thing', n: i }, mode as never).id);
  await em.flush();
  return ids;
}

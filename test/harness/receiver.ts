import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: Record<string, string>;
  /** The body as text (webhook payloads are JSON). */
  body: string;
  /** The body as received, for verifiers that sign bytes (gateway adapters' parseEvent). */
  raw: Buffer;
  at: number;
}

/**
 * A real HTTP endpoint on 127.0.0.1 that records every request, for the service's webhooks and the sandbox's
 * gateway events alike. `respond` decides the status (default 200); `failNext` answers 500 to that many requests
 * without recording them (a sender's retry is then the one recorded).
 */
export class Receiver {
  readonly received: Received[] = [];
  respond: (r: Received, index: number) => number | Promise<number> = () => 200;
  failNext = 0;
  private cursor = 0;
  private waiters: (() => void)[] = [];

  private constructor(
    readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Receiver> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (self.failNext > 0) {
          self.failNext--;
          res.statusCode = 500;
          res.end('nope 500');
          return;
        }
        const raw = Buffer.concat(chunks);
        const r: Received = {
          path: req.url ?? '/',
          headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
          body: raw.toString('utf8'),
          raw,
          at: Date.now(),
        };
        const index = self.received.length;
        self.received.push(r);
        for (const w of self.waiters.splice(0)) w();
        let status: number;
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
    const self = new Receiver(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Everything received since the last take(). */
  take(): Received[] {
    const out = this.received.slice(this.cursor);
    this.cursor = this.received.length;
    return out;
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

/** A URL on a port nothing listens on (a gateway that is down). */
export async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

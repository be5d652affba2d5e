import http from 'node:http';
import https from 'node:https';
import { guardedLookup, LookupAll, urlProblem } from './address';

export interface SendResult {
  /** HTTP status of the answer; null when none came (refused, timed out, blocked). */
  status: number | null;
  ok: boolean;
  latencyMs: number;
  error: string | null;
  /** The start of the answer's body (at most RESPONSE_BODY_CHARS characters). */
  body: string | null;
}

export const RESPONSE_BODY_CHARS = 1000;
const MAX_READ_BYTES = 64 * 1024;

export interface SenderOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: attempts may connect to loopback, private and link-local addresses. */
  allowPrivateNetworks?: boolean;
  /** Host resolution (tests stand in a resolver); default: the system resolver. */
  lookupAll?: LookupAll;
}

/**
 * POSTs signed event bodies. Redirects are never followed (a 3xx is a failed attempt), only 2xx is success, and an
 * attempt is abandoned after `timeoutMs`. Unless private networks are allowed, an attempt to a loopback, private,
 * link-local or internal URL is refused before connecting, and every new connection of the keep-alive agents resolves
 * its host through the SSRF guard (address.ts), so the address checked is the one connected to. Live endpoints must
 * use https either way.
 */
export class WebhookSender {
  private readonly allowPrivateNetworks: boolean;
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(
    private readonly timeoutMs: number,
    options: SenderOptions = {},
  ) {
    this.allowPrivateNetworks = options.allowPrivateNetworks ?? false;
    const lookup = guardedLookup(options.lookupAll, this.allowPrivateNetworks) as never;
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, lookup });
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, lookup });
  }

  send(url: string, headers: Record<string, string>, body: string, live: boolean): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return Promise.resolve({ status: null, ok: false, latencyMs: 0, error: 'invalid endpoint URL', body: null });
    }
    const refusal = urlProblem(u, { live, allowPrivateNetworks: this.allowPrivateNetworks });
    if (refusal) {
      return Promise.resolve({ status: null, ok: false, latencyMs: 0, error: `refused: ${refusal}`, body: null });
    }
    const isHttps = u.protocol === 'https:';
    const agent = isHttps ? this.httpsAgent : this.httpAgent;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let status: number | null = null;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = size
          ? Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_CHARS)
          : status === null
            ? null
            : '';
        const ok = status !== null && status >= 200 && status < 300 && error === null;
        resolve({ status, ok, latencyMs: elapsed(), error: ok ? null : (error ?? `HTTP ${status}`), body: text });
      };
      const req = (isHttps ? https : http).request(
        u,
        { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
        (res) => {
          status = res.statusCode ?? null;
          res.on('data', (chunk: Buffer) => {
            if (size < MAX_READ_BYTES) {
              chunks.push(chunk);
              size += chunk.length;
            }
            if (size >= MAX_READ_BYTES) {
              finish(null); // enough read: the status decides
              res.destroy();
            }
          });
          res.on('end', () => finish(null));
          res.on('error', () => finish(null));
          res.on('close', () => finish(null));
        },
      );
      const timer = setTimeout(() => {
        if (status !== null)
          finish(null); // the status came in time; the body did not finish
        else finish(`timed out after ${this.timeoutMs} ms`);
        req.destroy();
      }, this.timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (status !== null) return finish(null);
        finish(describe(err));
      });
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function describe(err: NodeJS.ErrnoException): string {
  if (err.code === 'EFORBIDDENADDRESS') return `refused: ${err.message}`;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host name lookup failed',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
  };
  const text = (err.code && known[err.code]) || err.message || 'request failed';
  return `${text}${err.code ? ` (${err.code})` : ''}`.slice(0, 500);
}

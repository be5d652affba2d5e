import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { guardedLookup, isForbiddenAddress, LookupAll, systemLookupAll } from './address';

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

/**
 * POSTs signed event bodies. Redirects are never followed (a 3xx is a failed attempt), only 2xx is success, and an
 * attempt is abandoned after `timeoutMs`. Live endpoints go through their own keep-alive agent whose every new
 * connection resolves the host through the SSRF guard; test endpoints may reach localhost and private networks.
 */
export class WebhookSender {
  private readonly liveAgent: https.Agent;
  private readonly testHttp = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly testHttps = new https.Agent({ keepAlive: true, maxSockets: 256 });

  constructor(private readonly timeoutMs: number, lookupAll: LookupAll = systemLookupAll) {
    this.liveAgent = new https.Agent({ keepAlive: true, maxSockets: 256, lookup: guardedLookup(lookupAll) as never });
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
    if (live) {
      const host = u.hostname.replace(/^\[|\]$/g, '');
      let refusal: string | null = null;
      if (u.protocol !== 'https:') refusal = 'live endpoints must use https';
      else if (net.isIP(host) && isForbiddenAddress(host)) refusal = `${host} is a loopback, private, link-local or reserved address`;
      else if (host === 'localhost' || host.endsWith('.localhost')) refusal = `${host} is not a public host`;
      if (refusal) return Promise.resolve({ status: null, ok: false, latencyMs: 0, error: `refused: ${refusal}`, body: null });
    }
    const isHttps = u.protocol === 'https:';
    const agent = live ? this.liveAgent : isHttps ? this.testHttps : this.testHttp;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let status: number | null = null;
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = (error: string | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = size ? Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_CHARS) : status === null ? null : '';
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
        if (status !== null) finish(null); // the status came in time; the body did not finish
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
    this.liveAgent.destroy();
    this.testHttp.destroy();
    this.testHttps.destroy();
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

import http from 'node:http';
import https from 'node:https';
import Razorpay from 'razorpay';
import Stripe from 'stripe';
import { withRequestDeadline } from '../core/adapters/node-agent-deadline';
import { razorpayRequestDefaults } from '../core/adapters/razorpay-http';

/**
 * The one place gateway SDK clients are built, so every gateway call has the same bound: GATEWAY_TIMEOUT_MS from the
 * moment the SDK hands the request to Node (waiting for a socket, DNS, TCP connect, TLS, sending, the answer's
 * headers and its body) to its end. The SDKs' own timeouts are set too, but they are socket *idle* timeouts that
 * Node arms only once the TCP connection is up; the agent below adds a wall-clock deadline per request, so neither
 * a connect that never completes (SYN unanswered: Linux gives up after ~2 min) nor a peer that trickles bytes holds
 * a call longer. No retries: Stripe's maxNetworkRetries is 0, Razorpay's axios has none, and redirects are not followed.
 */

export const DEFAULT_GATEWAY_TIMEOUT_MS = 10_000;

/**
 * The sandbox-only test-helper advance that charges what falls due on the way (renewals, trial ends, each webhook
 * delivered to Cadence before it answers) is bounded at this many times GATEWAY_TIMEOUT_MS (50 s by default): longer
 * than one API call, still bounded, so a frozen sandbox holds a test-clock advance at most that long per call.
 */
export const ADVANCE_TIMEOUT_FACTOR = 5;

export interface ClientOptions {
  /** The gateway sandbox's base URL; unset: the real gateway. */
  sandboxUrl?: string;
  /** Bound of each call, in ms (default 10 s). */
  timeoutMs?: number;
}

/** The error a request is destroyed with at its deadline (the SDKs report it as a connection error: no answer). */
export class GatewayTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`gateway call timed out after ${timeoutMs} ms`);
    this.name = 'GatewayTimeoutError';
  }
}

/** Keep-alive agents, one per protocol and bound (shared by every client with that bound). */
const agents = new Map<string, http.Agent>();

/**
 * A keep-alive agent whose every request is destroyed `timeoutMs` after it was issued unless it has finished (its
 * socket with it). `timeout` also closes a pooled socket idle that long.
 */
export function gatewayAgent(protocol: 'http' | 'https', timeoutMs: number): http.Agent {
  const key = `${protocol}:${timeoutMs}`;
  const known = agents.get(key);
  if (known) return known;
  const options = { keepAlive: true, timeout: timeoutMs };
  const plain = protocol === 'https' ? new https.Agent(options) : new http.Agent(options);
  const agent = withRequestDeadline(plain, timeoutMs, () => new GatewayTimeoutError(timeoutMs));
  agents.set(key, agent);
  return agent;
}

const timeoutOf = (opts: ClientOptions) => opts.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS;

/** The bound of a test-helper advance that may charge renewals (see ADVANCE_TIMEOUT_FACTOR). */
export const advanceTimeoutMs = (opts: ClientOptions) => timeoutOf(opts) * ADVANCE_TIMEOUT_FACTOR;

/** A Stripe SDK client: against the sandbox when `sandboxUrl` is set, every call bounded by `timeoutMs`. */
export function stripeClient(secretKey: string, opts: ClientOptions): Stripe {
  const timeout = timeoutOf(opts);
  const config: ConstructorParameters<typeof Stripe>[1] = {
    timeout,
    // Retrying is the caller's job (it holds the idempotency key); a down gateway must fail fast.
    maxNetworkRetries: 0,
    telemetry: false,
    httpAgent: gatewayAgent('https', timeout),
  };
  if (opts.sandboxUrl) {
    const u = new URL(opts.sandboxUrl);
    config.host = u.hostname;
    config.port = u.port || (u.protocol === 'https:' ? 443 : 80);
    config.protocol = u.protocol === 'https:' ? 'https' : 'http';
    config.httpAgent = gatewayAgent(config.protocol, timeout);
  }
  return new Stripe(secretKey || 'sk_missing', config);
}

export type RazorpayClient = InstanceType<typeof Razorpay>;

/** Header carrying Cadence's idempotency key to Razorpay (the sandbox honours it; the real gateway ignores it). */
export const RAZORPAY_IDEMPOTENCY_HEADER = 'X-Idempotency-Key';

/**
 * A Razorpay SDK client. The SDK has no base-URL, timeout or agent option, so they are set on its axios instance;
 * a call with an idempotency key gets an instance of its own so the header never leaks into concurrent calls.
 */
export function razorpayClient(
  credentials: { key_id: string; key_secret: string },
  opts: ClientOptions,
  idempotencyKey?: string,
): RazorpayClient {
  const timeout = timeoutOf(opts);
  const rzp = new Razorpay({ key_id: credentials.key_id || 'rzp_missing', key_secret: credentials.key_secret });
  const defaults = razorpayRequestDefaults(rzp);
  if (opts.sandboxUrl) defaults.baseURL = `${opts.sandboxUrl.replace(/\/$/, '')}/razorpay`;
  defaults.timeout = timeout;
  defaults.proxy = false;
  defaults.maxRedirects = 0;
  defaults.httpAgent = gatewayAgent('http', timeout);
  defaults.httpsAgent = gatewayAgent('https', timeout);
  if (idempotencyKey) defaults.headers.common[RAZORPAY_IDEMPOTENCY_HEADER] = idempotencyKey;
  return rzp;
}

import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Pool } from 'pg';
import Stripe from 'stripe';
import type { SecretBox } from './sealed';
import { gid, unix } from './ids';
import { openSecret } from './sealed';
import { SandboxEvent, SandboxProvider } from './sandbox.entities';
import type { Persister } from './store';

/** The SDK's own signer, so the sandbox signs exactly as Stripe does (never used for API calls). */
const stripeSigner = new Stripe('sk_test_sandbox_signer', { telemetry: false });

const STRIPE_API_VERSION = '2026-10-28.endive';

/**
 * Queues a Stripe event (delivered after the caller's transaction commits); returns its id. `at`: when it happened
 * on the account's clock (default: the wall clock).
 */
export function queueStripeEvent(
  em: Persister,
  accountKey: string,
  livemode: boolean,
  type: string,
  object: unknown,
  previousAttributes?: Record<string, unknown>,
  at?: Date,
): string {
  const id = gid('evt_');
  const body = {
    id,
    object: 'event',
    api_version: STRIPE_API_VERSION,
    created: unix(at),
    data: { object, ...(previousAttributes ? { previous_attributes: previousAttributes } : {}) },
    livemode,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  };
  em.persist(
    Object.assign(new SandboxEvent(), { id, provider: 'stripe', accountKey, type, body: JSON.stringify(body) }),
  );
  return id;
}

/** Queues a Razorpay event; `entities` become payload.<name>.entity as Razorpay sends them. `at` as for Stripe. */
export function queueRazorpayEvent(
  em: Persister,
  accountKey: string,
  type: string,
  entities: Record<string, unknown>,
  at?: Date,
): string {
  const id = gid('evt_', 14);
  const payload: Record<string, { entity: unknown }> = {};
  for (const [name, entity] of Object.entries(entities)) if (entity) payload[name] = { entity };
  const body = {
    entity: 'event',
    account_id: `acc_${accountKey.slice(-14)}`,
    event: type,
    contains: Object.keys(payload),
    payload,
    created_at: unix(at),
  };
  em.persist(
    Object.assign(new SandboxEvent(), { id, provider: 'razorpay', accountKey, type, body: JSON.stringify(body) }),
  );
  return id;
}

/** An event as delivered: what is signed and sent. */
export type OutgoingEvent = Pick<SandboxEvent, 'id' | 'provider' | 'accountKey' | 'type' | 'body'>;

/** An account's webhook registration (`secret` as stored: sealed). */
export interface WebhookTarget {
  url: string;
  secret: string;
  events: string[];
}

/** What one delivery did, for recordDeliveries: `attempts` is how many posts it made. */
export interface DeliveryOutcome {
  id: string;
  delivered: boolean;
  attempts: number;
  lastError: string | null;
}

function signedHeaders(provider: SandboxProvider, event: OutgoingEvent, secret: string): Record<string, string> {
  if (provider === 'stripe') {
    return {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripeSigner.webhooks.generateTestHeaderString({
        payload: event.body,
        secret,
        timestamp: unix(),
      }),
    };
  }
  return {
    'content-type': 'application/json',
    'x-razorpay-signature': crypto.createHmac('sha256', secret).update(event.body).digest('hex'),
    'x-razorpay-event-id': event.id,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Keep-alive connections to the webhook receivers: at most 64 per receiver, 16 idle ones kept, an idle one closed
 * after 4 s (before a node server's default 5 s keep-alive timeout closes it under a request).
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4000 }),
};

/**
 * POSTs `body` and answers the status once the answer was read to its end (redirects are not followed). Plain
 * node:http rather than fetch: a renewal posts one webhook each, and fetch's streams cost more CPU than the rest of
 * the sandbox's renewal path.
 */
function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      return reject(new Error(`unsupported webhook URL scheme ${u.protocol}`));
    const data = Buffer.from(body, 'utf8');
    const req = (u.protocol === 'https:' ? https : http).request(
      u,
      { method: 'POST', headers: { ...headers, 'content-length': String(data.length) }, agent: agents[u.protocol] },
      (res) => {
        res.on('error', reject);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(data);
  });
}

export interface DeliveryOptions {
  /** Pauses between attempts (ms); length + 1 attempts in all. */
  retryDelaysMs?: number[];
  timeoutMs?: number;
}

/** Pauses between a delivery round's attempts, unless DeliveryOptions say otherwise: 4 attempts in about a second. */
export const RETRY_DELAYS_MS: readonly number[] = [100, 300, 700];

/** The delivery error of an event whose account has no webhook endpoint. */
export const NO_WEBHOOK = 'no webhook registered';

/**
 * Posts one event to its account's webhook (`hook`; null: none registered) and waits for the answer, retrying quickly
 * a few times. Touches no table: the caller records the outcome (recordDeliveries), so a batch of deliveries costs
 * one statement. An event the webhook is not subscribed to counts as delivered, as a real gateway would not send it.
 */
export async function postEvent(
  event: OutgoingEvent,
  hook: WebhookTarget | null,
  secrets: SecretBox,
  opts: DeliveryOptions = {},
): Promise<DeliveryOutcome> {
  if (!hook) return { id: event.id, delivered: false, attempts: 0, lastError: NO_WEBHOOK };
  if (!hook.events.includes('*') && !hook.events.includes(event.type))
    return { id: event.id, delivered: true, attempts: 0, lastError: 'not subscribed' };
  const delays = opts.retryDelaysMs ?? RETRY_DELAYS_MS;
  let lastError: string | null = null;
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) await sleep(delays[attempt - 1]);
    try {
      const status = await post(
        hook.url,
        signedHeaders(event.provider, event, openSecret(secrets, hook.secret)),
        event.body,
        opts.timeoutMs ?? 10_000,
      );
      if (status >= 200 && status < 300)
        return { id: event.id, delivered: true, attempts: attempt + 1, lastError: null };
      lastError = `HTTP ${status}`;
    } catch (err) {
      lastError = (err as Error).message;
    }
  }
  return { id: event.id, delivered: false, attempts: delays.length + 1, lastError };
}

/** Stores what deliveries did, in one statement (a delivered event stays delivered). */
const RECORD_DELIVERIES = `
update sandbox_events e
set delivered = e.delivered or x.delivered, attempts = e.attempts + x.attempts, last_error = x.last_error
from jsonb_to_recordset($1::jsonb) as x(id text, delivered boolean, attempts int, last_error text)
where e.id = x.id`;

export async function recordDeliveries(pool: Pool, outcomes: DeliveryOutcome[]): Promise<void> {
  if (!outcomes.length) return;
  const rows = outcomes.map((o) => ({
    id: o.id,
    delivered: o.delivered,
    attempts: o.attempts,
    last_error: o.lastError,
  }));
  await pool.query({ name: 'sandbox_record_deliveries', text: RECORD_DELIVERIES, values: [JSON.stringify(rows)] });
}

/** Stored events with their account's webhook (one statement for the lot). */
const SELECT_EVENTS = `
select e.id, e.provider, e.account_key, e.type, e.body, e.delivered, w.url, w.secret, w.events
from sandbox_events e left join sandbox_webhooks w on w.provider = e.provider and w.account_key = e.account_key
where e.id = any($1::text[])`;

/**
 * Delivers stored events in the order given, each after the previous one was answered (or given up on); events
 * already delivered are skipped. One statement reads them, one records the outcomes; an event that could not be
 * delivered stays stored for redelivery. Answers the outcomes.
 */
export async function deliverStored(
  pool: Pool,
  eventIds: string[],
  secrets: SecretBox,
  opts: DeliveryOptions = {},
): Promise<DeliveryOutcome[]> {
  if (!eventIds.length) return [];
  const { rows } = await pool.query<{
    id: string;
    provider: SandboxProvider;
    account_key: string;
    type: string;
    body: string;
    delivered: boolean;
    url: string | null;
    secret: string | null;
    events: string[] | null;
  }>({ name: 'sandbox_select_events', text: SELECT_EVENTS, values: [eventIds] });
  const byId = new Map(rows.map((r) => [r.id, r]));
  const outcomes: DeliveryOutcome[] = [];
  try {
    for (const id of eventIds) {
      const r = byId.get(id);
      if (!r || r.delivered) continue;
      const hook = r.url !== null ? { url: r.url, secret: r.secret!, events: r.events ?? ['*'] } : null;
      outcomes.push(
        await postEvent(
          { id: r.id, provider: r.provider, accountKey: r.account_key, type: r.type, body: r.body },
          hook,
          secrets,
          opts,
        ),
      );
    }
  } finally {
    await recordDeliveries(pool, outcomes);
  }
  return outcomes;
}

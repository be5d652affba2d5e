import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import Stripe from 'stripe';
import type { SecretBox } from './sealed';
import { gid, unix } from './ids';
import { openSecret } from './sealed';
import { SandboxEvent, SandboxProvider, SandboxWebhook } from './sandbox.entities';

/** The SDK's own signer, so the sandbox signs exactly as Stripe does (never used for API calls). */
const stripeSigner = new Stripe('sk_test_sandbox_signer', { telemetry: false });

const STRIPE_API_VERSION = '2026-10-28.endive';

/**
 * Queues a Stripe event (delivered after the caller's transaction commits); returns its id. `at`: when it happened
 * on the account's clock (default: the wall clock).
 */
export function queueStripeEvent(
  em: EntityManager,
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
  em.persist(Object.assign(new SandboxEvent(), { id, provider: 'stripe', accountKey, type, body: JSON.stringify(body) }));
  return id;
}

/** Queues a Razorpay event; `entities` become payload.<name>.entity as Razorpay sends them. `at` as for Stripe. */
export function queueRazorpayEvent(em: EntityManager, accountKey: string, type: string, entities: Record<string, unknown>, at?: Date): string {
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
  em.persist(Object.assign(new SandboxEvent(), { id, provider: 'razorpay', accountKey, type, body: JSON.stringify(body) }));
  return id;
}

function signedHeaders(provider: SandboxProvider, event: SandboxEvent, secret: string): Record<string, string> {
  if (provider === 'stripe') {
    return {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripeSigner.webhooks.generateTestHeaderString({ payload: event.body, secret, timestamp: unix() }),
    };
  }
  return {
    'content-type': 'application/json',
    'x-razorpay-signature': crypto.createHmac('sha256', secret).update(event.body).digest('hex'),
    'x-razorpay-event-id': event.id,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface DeliveryOptions {
  /** Pauses between attempts (ms); length + 1 attempts in all. */
  retryDelaysMs?: number[];
  timeoutMs?: number;
}

/**
 * Posts one stored event to its account's webhook and waits for the answer, retrying quickly a few times.
 * Returns whether it was delivered; an undelivered event stays stored for redelivery.
 */
export async function deliverEvent(em: EntityManager, eventId: string, secrets: SecretBox, opts: DeliveryOptions = {}): Promise<boolean> {
  const event = await em.findOne(SandboxEvent, { id: eventId });
  if (!event || event.delivered) return true;
  const hook = await em.findOne(SandboxWebhook, { provider: event.provider, accountKey: event.accountKey });
  if (!hook) {
    event.lastError = 'no webhook registered';
    await em.flush();
    return false;
  }
  if (!hook.events.includes('*') && !hook.events.includes(event.type)) {
    // Not subscribed: a real gateway would not send it either.
    event.delivered = true;
    event.lastError = 'not subscribed';
    await em.flush();
    return true;
  }
  const delays = opts.retryDelaysMs ?? [100, 300, 700];
  for (let attempt = 0; attempt <= delays.length; attempt++) {
    if (attempt > 0) await sleep(delays[attempt - 1]);
    event.attempts += 1;
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers: signedHeaders(event.provider, event, openSecret(secrets, hook.secret)),
        body: event.body,
        signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000),
        redirect: 'manual',
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) {
        event.delivered = true;
        event.lastError = null;
        await em.flush();
        return true;
      }
      event.lastError = `HTTP ${res.status}`;
    } catch (err) {
      event.lastError = (err as Error).message;
    }
  }
  await em.flush();
  return false;
}

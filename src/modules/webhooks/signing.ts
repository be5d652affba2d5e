import crypto from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * How an event is signed (Standard Webhooks; docs/webhooks.md): used for every delivery to an endpoint, and by
 * `cadence listen` (src/cli/cadence.ts) for the events it forwards, so a receiver verifies both the same way.
 */

export const USER_AGENT = 'Cadence-Webhooks/1.0 (+https://www.standardwebhooks.com/)';

/** A new signing secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;

/**
 * The headers of one attempt to deliver `body` (the event's JSON text): `webhook-id` (the event id), `webhook-timestamp`
 * (unix seconds of `at`, the wall clock: receivers check it against theirs) and `webhook-signature`, one `v1,<sig>`
 * per secret (two while a rolled secret's overlap lasts), space-separated.
 */
export function deliveryHeaders(
  eventId: string,
  body: string,
  secrets: readonly string[],
  at: Date = new Date(),
): Record<string, string> {
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(eventId, timestamp, body)).join(' '),
  };
}

/**
 * What seals the secrets (the service hands in its SecretBox, src/core/secrets.ts; any AES-GCM box of the same shape
 * does): an interface here, so the sandbox imports nothing of the service but the port types and the currency table.
 */
export interface SecretBox {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * The sandbox holds webhook signing secrets that merchants hand it (through the service's connect call): sealed at
 * rest like the service's own credentials (AES-256-GCM, src/core/secrets.ts), in `sandbox_webhooks.secret` and in the
 * stored answers replayed for an Idempotency-Key (Stripe's webhook endpoint answer carries `secret`).
 */
const SEALED = /^v1:[^:]*:[^:]*:[^:]*$/;

export const isSealed = (stored: string) => SEALED.test(stored);

/** Opens a stored secret; a value stored before sealing existed (plain text) is read as it is. */
export function openSecret(box: SecretBox, stored: string): string {
  return isSealed(stored) ? box.open(stored) : stored;
}

/** An answer as stored: its top-level `secret`, when it has one, sealed. */
export const sealAnswer = (box: SecretBox, body: unknown): unknown => mapSecret(body, (s) => box.seal(s));

/** A stored answer as replayed. */
export const openAnswer = (box: SecretBox, body: unknown): unknown => mapSecret(body, (s) => openSecret(box, s));

function mapSecret(body: unknown, f: (secret: string) => string): unknown {
  const secret = body && typeof body === 'object' ? (body as { secret?: unknown }).secret : undefined;
  return typeof secret === 'string' ? { ...(body as object), secret: f(secret) } : body;
}

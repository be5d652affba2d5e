import crypto from 'node:crypto';
import { MAX_JSON_DEPTH } from '../../core/input-limits';

/**
 * The "same request" test of the sandbox's own Idempotency-Key handling (as Stripe's): SHA-256 of method, path and
 * the body as stable JSON (object keys sorted at every level). The sandbox keeps its own copy rather than the
 * service's (src/modules/idempotency/fingerprint.ts): a gateway shares no code with its client. Same algorithm, so
 * hashes stored before the copy still match.
 */
export function requestHash(method: string, path: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${stableJson(body)}`)
    .digest('hex');
}

function stableJson(value: unknown, depth = 1): string {
  // Bodies are depth-checked on arrival (bodyChecks in ./http.ts); this keeps the recursion bounded regardless.
  if (value !== null && typeof value === 'object' && depth > MAX_JSON_DEPTH) throw new Error('JSON nested too deep');
  if (Array.isArray(value)) return `[${value.map((v) => stableJson(v, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k], depth + 1)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

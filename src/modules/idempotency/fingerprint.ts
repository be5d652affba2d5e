import crypto from 'node:crypto';
import { DomainError } from '../../core/errors';
import { MAX_JSON_DEPTH } from '../../core/input-limits';

/**
 * Stable JSON: object keys sorted at every level, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request.
 * Bodies are depth-checked when parsed (src/http/body-limits.ts); the guard here keeps the recursion bounded for
 * any other caller too.
 */
export function canonicalJson(value: unknown, depth = 1): string {
  if (value !== null && typeof value === 'object' && depth > MAX_JSON_DEPTH) {
    throw new DomainError(
      'parameter_invalid',
      `JSON may nest objects and arrays at most ${MAX_JSON_DEPTH} levels deep.`,
    );
  }
  // A Date (a GraphQL DateTime input) has no enumerable keys: without this every date would read as `{}`.
  if (value instanceof Date) return JSON.stringify(Number.isNaN(value.getTime()) ? null : value.toISOString());
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k], depth + 1)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export function fingerprint(method: string, path: string, body: unknown): string {
  return crypto
    .createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n${canonicalJson(body)}`)
    .digest('hex');
}

export function validateIdempotencyKey(key: string): void {
  if (key.length < 1 || key.length > 255 || /[^\x20-\x7e]/.test(key)) {
    throw new DomainError(
      'parameter_invalid',
      'Idempotency-Key must be 1 to 255 printable ASCII characters.',
      'Idempotency-Key',
    );
  }
}

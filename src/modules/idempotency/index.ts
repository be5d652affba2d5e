/**
 * Idempotency keys of mutating requests.
 * The module's public surface: other modules import it only through this file.
 */
export { canonicalJson } from './fingerprint';
export { IdempotencyKey } from './idempotency.entities';
export { IdempotencyStore } from './idempotency.store';
export {
  IDEMPOTENCY_KEY,
  idempotentReplay,
  storedEntity,
  useIdempotencyHeader,
  withIdempotency,
} from './with-idempotency';
export type { IdempotentAttempt, StoredResult } from './with-idempotency';

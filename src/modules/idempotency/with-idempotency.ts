import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { DomainError, ErrorCode } from '../../core/errors';
import { fingerprint, validateIdempotencyKey } from './fingerprint';
import { services } from '../../services';

/**
 * The idempotency rules (docs/api.md) as a use-case wrapper, the same for every transport: the REST shim passes the
 * `Idempotency-Key` header as the mutation's `idempotencyKey` argument, GraphQL clients pass the argument (or the
 * header on `POST /graphql`, which the one idempotent mutation of the operation takes).
 *
 * - The "request" is the operation (its GraphQL root field) and its canonical input, so the same request made over
 *   REST and over GraphQL is the same request: one key space per merchant and mode.
 * - The stored answer is the use case's result object (every column, as JSON) or its 4xx error. A replay gives the
 *   stored object back to the transport, which renders it through the normal resolver path: the REST shim's fixed
 *   document therefore answers the same bytes, and a GraphQL replay may select other fields of the same object.
 *   Nested fields that have their own resolvers (`Payment.refunds`) are read afresh.
 * - A 5xx or an unexpected error is not stored: the key is released, and a retry keeps the resource id.
 */

/** The description of every idempotent mutation's `idempotencyKey` argument. */
export const IDEMPOTENCY_KEY =
  'The same key and input again answers the first result; another input: idempotency_key_reused. ' +
  'Also taken from the Idempotency-Key header. Keys are shared with REST (per merchant and mode) and kept 24 hours.';

/** What the wrapped use case gets: the id its new record must take, and whether an earlier attempt may have made it. */
export interface IdempotentAttempt {
  key: string;
  /** The id the request's new record takes (kept across a 5xx and its retry). */
  resourceId: string;
  /** No earlier attempt of this key can have created the record (a retry after a 5xx or a crash may find it). */
  fresh: boolean;
}

/** How a result is kept in the key's row and brought back for a replay. */
export interface StoredResult<T> {
  store(value: T): unknown;
  restore(json: unknown, em: EntityManager): T;
}

export interface IdempotentOperation<T> {
  /** The GraphQL root field, e.g. `createPayment`. */
  operation: string;
  /** Every argument but the key; compared as canonical JSON (object keys sorted, absent = null). */
  input: unknown;
  result: StoredResult<T>;
}

/** The stored answer: `result` for a success, `error` for a 4xx (with the first request's id, which REST replays). */
type Answer =
  { result: unknown } | { error: { code: ErrorCode; message: string; param: string | null; requestId: string } };

/** Per request (in ctx.extras): the header's key (taken by the first idempotent mutation), and any replay. */
interface RequestState {
  headerKey?: string;
  headerTaken?: boolean;
  replay?: { firstRequestId: string | null };
}
const STATE = Symbol('idempotency');
const stateOf = (ctx: Ctx): RequestState => {
  let s = ctx.extras.get(STATE) as RequestState | undefined;
  if (!s) ctx.extras.set(STATE, (s = {}));
  return s;
};

/** `POST /graphql` with an `Idempotency-Key` header: the key of the operation's idempotent mutation. */
export function useIdempotencyHeader(ctx: Ctx, key: string | undefined): void {
  if (key !== undefined) stateOf(ctx).headerKey = key;
}

/**
 * Set when a mutation of this request answered a stored answer (transports report it: `Idempotent-Replayed: true`).
 * `firstRequestId`: the request id a replayed error carried first (REST replays its body byte for byte).
 */
export function idempotentReplay(ctx: Ctx): { firstRequestId: string | null } | null {
  return (ctx.extras.get(STATE) as RequestState | undefined)?.replay ?? null;
}

/**
 * Runs `fn` once per key and request: a new key runs it; the same key and request afterwards answers the stored
 * result (or 4xx error); the same key with another request is 400 `idempotency_key_reused`; the same key while the
 * first still runs is 409 `idempotency_key_in_use`. Without a key `fn` just runs.
 */
export async function withIdempotency<T>(
  ctx: Ctx,
  key: string | null | undefined,
  op: IdempotentOperation<T>,
  fn: (attempt: IdempotentAttempt | null) => Promise<T>,
): Promise<T> {
  const chosen = key ?? headerKeyFor(ctx);
  if (chosen == null) return fn(null);
  validateIdempotencyKey(chosen);
  const { merchantId, mode } = tenantOf(ctx);
  const store = services(ctx).idempotency;
  const claim = await store.claim(merchantId, mode, chosen, fingerprint('GRAPHQL', op.operation, op.input ?? null));
  if (claim.kind === 'replay') return replay(ctx, op, claim.body);

  let value: T;
  try {
    value = await fn({ key: chosen, resourceId: claim.resourceId, fresh: claim.fresh });
  } catch (err) {
    if (err instanceof DomainError && err.status < 500) {
      const answer: Answer = {
        error: { code: err.code, message: err.message, param: err.param, requestId: ctx.requestId },
      };
      await store.complete(claim.id, err.status, JSON.stringify(answer));
    } else {
      await store.release(claim.id).catch((e: unknown) => ctx.log.warn({ err: e }, 'idempotency key release failed'));
    }
    throw err;
  }
  await store.complete(claim.id, 200, JSON.stringify({ result: op.result.store(value) } satisfies Answer));
  return value;
}

/** The header applies to the one idempotent mutation of the operation; a second one must pass its own key. */
function headerKeyFor(ctx: Ctx): string | undefined {
  const s = ctx.extras.get(STATE) as RequestState | undefined;
  if (s?.headerKey === undefined) return undefined;
  if (s.headerTaken) {
    throw new DomainError(
      'parameter_invalid',
      'The Idempotency-Key header applies to one idempotent mutation per operation; pass idempotencyKey to each.',
      'Idempotency-Key',
    );
  }
  s.headerTaken = true;
  return s.headerKey;
}

function replay<T>(ctx: Ctx, op: IdempotentOperation<T>, body: string): T {
  let answer: Answer;
  try {
    answer = JSON.parse(body) as Answer;
  } catch {
    answer = { result: undefined };
  }
  if (
    !answer ||
    typeof answer !== 'object' ||
    !('result' in answer || 'error' in answer) ||
    ('result' in answer && answer.result == null)
  ) {
    // A key stored before idempotency moved into the use case (REST bodies): its fingerprint never matches a new
    // request, so this is unreachable unless the row was edited by hand.
    throw new DomainError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request.',
      'Idempotency-Key',
    );
  }
  if ('error' in answer) {
    stateOf(ctx).replay = { firstRequestId: answer.error.requestId };
    throw new DomainError(answer.error.code, answer.error.message, answer.error.param);
  }
  stateOf(ctx).replay = { firstRequestId: null };
  return op.result.restore(answer.result, ctx.em);
}

/**
 * Stores an entity as its mapped properties (JSON) and restores a detached instance of its class (getters such as
 * `livemode` work; dates come back as Date). The instance is not put in the EntityManager: it shows the first
 * answer, not the current row.
 */
export function storedEntity<T extends object>(cls: new () => T): StoredResult<T> {
  return {
    store(value) {
      const out: Record<string, unknown> = {};
      for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
        if (!name.startsWith('__') && typeof v !== 'function') out[name] = v;
      }
      return out;
    },
    restore(json, em) {
      const meta = em.getMetadata().get(cls.name);
      const data = json as Record<string, unknown>;
      const entity = Object.create(cls.prototype) as Record<string, unknown>;
      for (const [name, v] of Object.entries(data)) {
        const prop = meta.properties[name as never] as { runtimeType?: string; type?: string } | undefined;
        const isDate =
          prop &&
          (prop.runtimeType === 'Date' || prop.type === 'Date' || /timestamp|datetime/i.test(String(prop.type)));
        entity[name] = isDate && typeof v === 'string' ? new Date(v) : v;
      }
      return entity as T;
    },
  };
}

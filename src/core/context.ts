import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { DomainError } from './errors';
import { Mode, TENANT_FILTER } from './entity';
import type { Logger } from './logger';
import type { Merchant } from '../modules/merchants/merchant.entity';
import type { Services } from '../services';

/** Who is calling: a merchant in one mode (secret key), or the operator (ADMIN_TOKEN). */
export type Principal =
  | { kind: 'merchant'; merchant: Merchant; mode: Mode; apiKeyId: string }
  | { kind: 'admin' };

/** Per-request context shared by GraphQL resolvers and the REST shim (which executes the same operations). */
export interface Ctx {
  requestId: string;
  /** Forked per request; for a merchant, the tenant filter is bound to its merchant and mode. */
  em: EntityManager;
  principal: Principal;
  log: Logger;
  /** DataLoaders created on first use, one set per request. */
  loaders: Map<string, DataLoader<any, any>>;
  services: Services;
  /** Set when the request carries an Idempotency-Key: the id the request's new record must take. */
  idempotency?: IdempotentRequest;
}

/**
 * `resourceId`: the id the request's new record takes. `fresh`: no earlier attempt of this key can have created it
 * (a retry after a 5xx or a crash keeps the id, and may find its record already written).
 */
export interface IdempotentRequest {
  key: string;
  resourceId: string;
  fresh: boolean;
}

export function createContext(args: {
  em: EntityManager;
  principal: Principal;
  requestId: string;
  log: Logger;
  services: Services;
  idempotency?: IdempotentRequest;
}): Ctx {
  const em = args.em.fork();
  if (args.principal.kind === 'merchant') {
    em.setFilterParams(TENANT_FILTER, { merchantId: args.principal.merchant.id, mode: args.principal.mode });
  }
  return { ...args, em, loaders: new Map() };
}

/** The merchant and mode of the request; the operator token is not a merchant. */
export function tenantOf(ctx: Ctx): { merchant: Merchant; mode: Mode } {
  if (ctx.principal.kind !== 'merchant') {
    throw new DomainError('invalid_api_key', 'This operation needs a merchant secret key (sk_test_... or sk_live_...).');
  }
  return { merchant: ctx.principal.merchant, mode: ctx.principal.mode };
}

/**
 * Declares a request-scoped DataLoader. `byKey(ctx)` returns the request's instance, so nested fields batch
 * into one query per level however many parents a list has.
 */
export function defineLoader<K, V>(
  name: string,
  batch: (ctx: Ctx, keys: readonly K[]) => Promise<V[]>,
): (ctx: Ctx) => DataLoader<K, V> {
  return (ctx) => {
    let l = ctx.loaders.get(name) as DataLoader<K, V> | undefined;
    if (!l) {
      l = new DataLoader<K, V>((keys) => batch(ctx, keys));
      ctx.loaders.set(name, l);
    }
    return l;
  };
}

/** Groups rows by a key, in the order of `keys` (the DataLoader contract). */
export function groupBy<K, V>(keys: readonly K[], rows: V[], keyOf: (row: V) => K): V[][] {
  const m = new Map<K, V[]>();
  for (const r of rows) {
    const k = keyOf(r);
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  }
  return keys.map((k) => m.get(k) ?? []);
}

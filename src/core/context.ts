import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { DomainError } from './errors';
import { Mode, TENANT_FILTER, TenantParams } from './entity';
import type { Logger } from './logger';

/**
 * Who is calling, as plain data: a merchant in one mode (secret key), or the operator (ADMIN_TOKEN). The merchant
 * record itself is the merchants module's (src/modules/merchants/current-merchant.ts); core knows no module.
 */
export type Principal =
  | { kind: 'merchant'; merchantId: string; mode: Mode; apiKeyId: string }
  | { kind: 'admin' }
  /** A customer portal session's token: one customer of one merchant and mode (docs/portal.md). */
  | { kind: 'portal'; merchantId: string; mode: Mode; customerId: string; sessionId: string };

/** Per-request context shared by GraphQL resolvers and the REST shim (which executes the same operations). */
export interface Ctx {
  requestId: string;
  /** Forked per request; for a merchant, the tenant filter is bound to its merchant and mode. */
  em: EntityManager;
  principal: Principal;
  log: Logger;
  /** DataLoaders created on first use, one set per request. */
  loaders: Map<string, DataLoader<unknown, unknown>>;
  /**
   * Other per-request values, each under its owner's symbol (e.g. the Idempotency-Key header and whether an answer
   * was replayed). A Map rather than the context's identity, because Apollo runs each operation on a shallow copy of
   * the context: the copies share this Map.
   */
  extras: Map<symbol, unknown>;
  /**
   * The process's services, built by the composition root (src/container.ts). Opaque here: resolvers read them
   * through the typed accessor `services(ctx)` in src/services.ts, so core imports no module.
   */
  services: object;
  /**
   * Aborted when the command should stop early: its client left before the answer (the HTTP connection closed
   * unanswered; src/http/request.ts RequestSignals), or the app is stopping (app.close, SIGINT/SIGTERM). Commands
   * that run long (many steps of work, such as a test-clock advance) check it between steps, never in the middle
   * of one, so what they leave behind is consistent, record where they stopped, and say so in their answer (or the
   * next call's); short commands ignore it. Made on first use. Outside an HTTP request (graphql-ws, scripts,
   * tests) it never aborts unless the caller gives one.
   */
  readonly signal: AbortSignal;
}

/** Never aborted: the signal of a context made without one. */
const NEVER: AbortSignal = new AbortController().signal;

/**
 * `log` may be given as a function: the logger is then made on first use (most requests log nothing); so may
 * `signal` (Ctx.signal; default: one that never aborts).
 */
export function createContext(args: {
  em: EntityManager;
  principal: Principal;
  requestId: string;
  log: Logger | (() => Logger);
  services: object;
  signal?: AbortSignal | (() => AbortSignal);
}): Ctx {
  const { principal, requestId, services } = args;
  let em: EntityManager | undefined;
  let log = args.log;
  let signal = args.signal ?? NEVER;
  return {
    requestId,
    principal,
    services,
    get log(): Logger {
      if (typeof log === 'function') log = log();
      return log;
    },
    get signal(): AbortSignal {
      if (typeof signal === 'function') signal = signal();
      return signal;
    },
    loaders: new Map(),
    extras: new Map(),
    // Forked on first use: many answers (entitlements, cached reads, usage events) never touch the ORM, and a fork
    // is a good part of a small request's garbage. A spread copy of the context (Apollo's) forks it once, here.
    get em(): EntityManager {
      return (em ??= principal.kind === 'admin' ? args.em.fork() : tenantEntityManager(args.em, principal));
    },
  };
}

/**
 * A fresh EntityManager bound to one tenant (the ORM's tenant filter, and the tenant of `tenantQuery`): for a request,
 * and for work outside one (inbound gateway events, the worker, the scheduler).
 */
export function tenantEntityManager(root: EntityManager, tenant: TenantParams): EntityManager {
  const em = root.fork({ clear: true });
  em.setFilterParams(TENANT_FILTER, { merchantId: tenant.merchantId, mode: tenant.mode });
  return em;
}

/** The merchant and mode of the request; the operator token is not a merchant. */
export function tenantOf(ctx: Pick<Ctx, 'principal'>): { merchantId: string; mode: Mode } {
  if (ctx.principal.kind !== 'merchant') {
    throw new DomainError(
      'invalid_api_key',
      'This operation needs a merchant secret key (sk_test_... or sk_live_...).',
    );
  }
  return { merchantId: ctx.principal.merchantId, mode: ctx.principal.mode };
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
      ctx.loaders.set(name, l as DataLoader<unknown, unknown>);
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

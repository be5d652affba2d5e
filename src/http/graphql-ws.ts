import type http from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import {
  DocumentNode,
  getOperationAST,
  GraphQLError,
  GraphQLFormattedError,
  GraphQLSchema,
  parse,
  specifiedRules,
  validate,
  ValidationRule,
} from 'graphql';
import { CloseCode, MessageType, stringifyMessage } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocket, WebSocketServer } from 'ws';
import type { Ctx } from '../core/context';
import { MerchantPrincipal, merchantPrincipal, operationContext } from './principal';
import {
  DomainError,
  formatGraphQLError,
  isDatabaseUnavailable,
  operationNotFound,
  serviceUnavailable,
} from '../core/errors';
import { operationCostError } from '../core/operation-cost';
import { operationTooDeep } from '../core/input-limits';
import { logger } from '../core/logger';
import type { PubSub } from '../core/pubsub';
import { KeyRetirement, retires } from '../modules/merchants';
import type { Services } from '../services';
import { bearerToken, consumeRateLimit, invalidKey } from './auth';
import { followKeyRetirements } from './key-retirements';
import { newRequestId } from './request';

/**
 * GraphQL over WebSocket (graphql-ws) at /graphql, under the rules of HTTP:
 * - the key from `connection_init` is checked again on every operation (cheaply: the key cache, which a roll in any
 *   process clears through its `api_key` change); a key that is retired closes its sockets with 4401 when it expires,
 *   at once for `grace_seconds: 0`, by a timer for a grace period; an operation sent with it meanwhile is answered
 *   `invalid_api_key` before the close;
 * - every operation counts against the key's rate limit, the same budget as HTTP; over it, that operation is answered
 *   `rate_limited` and the socket stays open;
 * - caps: subscriptions per socket (the subscribe over the cap is answered `rate_limited`) and sockets per key, across
 *   every process (the new socket is closed with 4429 at `connection_init`); messages, `connection_init` included, are at most 1 MiB;
 * - a syntax error or an over-limit document is answered with an error for that operation (the socket stays open),
 *   in the same API error terms as over HTTP (`extensions.code`, `extensions.http.status`);
 * - while the database cannot be reached nothing is answered `internal_error`: a `connection_init` whose key cannot
 *   be checked closes with 1013 Try Again Later (graphql-ws clients retry it, unlike 4500); an operation whose key
 *   cannot be checked, and an operation or a subscription's event that cannot be read, get `service_unavailable`
 *   (503, `retryable: true`) for that operation or event only: the socket and its subscriptions stay open.
 */

/** Largest message, `connection_init` included (as HTTP bodies); a larger one closes the socket with 1009. */
export const WS_MAX_PAYLOAD = 1024 * 1024;
/** The socket's key was retired (rolled) and has expired. graphql-ws clients do not retry it. */
export const CLOSE_KEY_RETIRED = CloseCode.Unauthorized; // 4401
/** The key already holds WS_MAX_SOCKETS_PER_KEY sockets, across all processes. graphql-ws clients do not retry it. */
export const CLOSE_TOO_MANY_SOCKETS = 4429;
/** The key could not be checked: the database cannot be reached. graphql-ws clients retry it (with their backoff). */
export const CLOSE_TRY_AGAIN_LATER = 1013;

/** What the server keeps per authenticated socket. */
interface SocketState {
  socket: WebSocket;
  token: string;
  principal: MerchantPrincipal;
  /** When the key stops working (ms since epoch); null while it is not retired. */
  expiresAt: number | null;
  expiryTimer?: NodeJS.Timeout;
  /** Ids of the subscription operations running on the socket (the cap counts these, not queries or mutations). */
  subscriptions: Set<string>;
  /** Ctx.signal of the socket's operations: aborted when the socket closes (its client left, or the app stops). */
  closed: AbortController;
  /** Its place under the key's socket cap in the shared store (src/core/limits); null when uncapped. */
  lease: string | null;
}

type ConnectionParams = { Authorization?: unknown; authorization?: unknown };

/** setTimeout's longest delay; a later expiry re-arms the timer when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The open sockets of this process, by key, with the expiry of each socket's key. */
class SocketRegistry {
  private byKey = new Map<string, Set<SocketState>>();

  count(apiKeyId: string): number {
    return this.byKey.get(apiKeyId)?.size ?? 0;
  }

  add(s: SocketState): void {
    let set = this.byKey.get(s.principal.apiKeyId);
    if (!set) this.byKey.set(s.principal.apiKeyId, (set = new Set()));
    set.add(s);
    this.armExpiry(s);
  }

  remove(s: SocketState): void {
    clearTimeout(s.expiryTimer);
    const set = this.byKey.get(s.principal.apiKeyId);
    set?.delete(s);
    if (set?.size === 0) this.byKey.delete(s.principal.apiKeyId);
  }

  /** A key of these sockets was retired: each closes when it expires (now, for no grace). */
  retire(r: KeyRetirement): void {
    const keys = r.keyIds ?? this.byKey.keys();
    for (const apiKeyId of keys) {
      for (const s of this.byKey.get(apiKeyId) ?? []) {
        const key = { merchantId: s.principal.merchant.id, mode: s.principal.mode, apiKeyId };
        if (retires(r, key)) this.expireAt(s, r.expiresAt);
      }
    }
  }

  /** Learns an expiry (the earliest one wins) and arms the socket's timer for it. */
  expireAt(s: SocketState, at: number | null): void {
    if (at === null || (s.expiresAt !== null && s.expiresAt <= at)) return;
    s.expiresAt = at;
    this.armExpiry(s);
  }

  private armExpiry(s: SocketState): void {
    clearTimeout(s.expiryTimer);
    s.expiryTimer = undefined;
    if (s.expiresAt === null) return;
    const wait = s.expiresAt - Date.now();
    if (wait <= 0) return closeRetired(s);
    s.expiryTimer = setTimeout(() => this.armExpiry(s), Math.min(wait, MAX_TIMER_MS));
    s.expiryTimer.unref();
  }

  clearTimers(): void {
    for (const set of this.byKey.values()) for (const s of set) clearTimeout(s.expiryTimer);
  }
}

const closeRetired = (s: SocketState) => s.socket.close(CLOSE_KEY_RETIRED, 'Unauthorized');

const asGraphQLError = (err: DomainError) => new GraphQLError(err.message, { originalError: err });

export function mountGraphQLWs(opts: {
  httpServer: http.Server;
  schema: GraphQLSchema;
  orm: MikroORM;
  services: Services;
  pubsub: PubSub;
  /** The same document limits as over HTTP (graphql-armor's rules, graphql-js's token limit). */
  validationRules: readonly ValidationRule[];
  maxTokens: number;
}) {
  const { httpServer, schema, orm, services, pubsub, maxTokens } = opts;
  const { wsMaxSubscriptionsPerSocket: maxSubscriptions, wsMaxSocketsPerKey: maxSockets } = services.config;
  const rules = [...specifiedRules, ...opts.validationRules];
  const sockets = new SocketRegistry();
  const stopFollowing = followKeyRetirements(pubsub, services, (r) => sockets.retire(r));

  /** Request ids of errors answered before an operation has a context, for their log lines and `extensions`. */
  const requestIds = new WeakMap<GraphQLError, string>();
  const tagged = (errors: readonly GraphQLError[], requestId: string) => {
    for (const e of errors) requestIds.set(e, requestId);
    return errors;
  };

  /** The API's error shape, as over HTTP; a `rate_limited` answer also carries its Retry-After in `extensions.http`. */
  const format = (e: GraphQLError, requestId?: string): GraphQLFormattedError => {
    const f = formatGraphQLError(e, (err) => logger.error({ err, request_id: requestId }, 'graphql internal error'));
    const original = e.originalError;
    const headers = original instanceof DomainError && Object.keys(original.headers).length ? original.headers : null;
    return {
      ...f,
      extensions: {
        ...f.extensions,
        ...(requestId ? { requestId } : {}),
        ...(headers ? { http: { ...f.extensions.http, headers } } : {}),
      },
    };
  };

  const wsServer = new WebSocketServer({ server: httpServer, path: '/graphql', maxPayload: WS_MAX_PAYLOAD });
  const server = useServer<ConnectionParams, { state?: SocketState }>(
    {
      schema,
      onConnect: async (ctx) => {
        const token = bearerToken(ctx.connectionParams?.Authorization ?? ctx.connectionParams?.authorization);
        let key: Awaited<ReturnType<typeof services.merchants.authenticate>>;
        try {
          key = token ? await services.merchants.authenticate(token) : null;
        } catch (err) {
          // Thrown from here, graphql-ws would close with 4500 (and the error's text), which its clients never retry.
          if (!isDatabaseUnavailable(err)) throw err;
          logger.warn({ err }, 'graphql-ws: connection_init refused, the database cannot be reached');
          ctx.extra.socket.close(CLOSE_TRY_AGAIN_LATER, 'Try Again Later');
          return false;
        }
        if (!token || !key) return false; // closes with 4403 Forbidden
        let lease: string | null = null;
        if (maxSockets > 0) {
          const here = sockets.count(key.apiKeyId);
          try {
            // The cap is the deployment's: every process counts the key's sockets in the shared store.
            lease = here < maxSockets ? await services.limits.sockets.acquire(key.apiKeyId, maxSockets, here) : null;
          } catch (err) {
            if (!isDatabaseUnavailable(err)) throw err;
            ctx.extra.socket.close(CLOSE_TRY_AGAIN_LATER, 'Try Again Later');
            return false;
          }
          if (!lease) {
            ctx.extra.socket.close(CLOSE_TOO_MANY_SOCKETS, 'Too many connections for this API key');
            return false;
          }
          if (ctx.extra.socket.readyState !== WebSocket.OPEN) {
            // Its client left while the lease was taken: onClose has run already, without it.
            await services.limits.sockets.release(lease).catch(() => undefined);
            return false;
          }
        }
        const state: SocketState = {
          socket: ctx.extra.socket,
          token,
          principal: merchantPrincipal(key),
          expiresAt: key.expiresAt,
          subscriptions: new Set(),
          closed: new AbortController(),
          lease,
        };
        ctx.extra.state = state;
        sockets.add(state);
        return true;
      },
      onClose: (ctx) => {
        if (!ctx.extra.state) return;
        ctx.extra.state.closed.abort();
        sockets.remove(ctx.extra.state);
        const { lease } = ctx.extra.state;
        if (lease) {
          services.limits.sockets
            .release(lease)
            .catch((err) => logger.warn({ err }, 'graphql-ws: lease not released; it expires by itself'));
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        const state = ctx.extra.state!; // set on every acknowledged socket
        const requestId = newRequestId();

        // The key, again: retired keys leave the cache as soon as any process rolls them. When it cannot be checked
        // (the database is away) this operation is refused as retryable; the socket and its subscriptions stay.
        let key: Awaited<ReturnType<typeof services.merchants.authenticate>>;
        try {
          key = await services.merchants.authenticate(state.token);
        } catch (err) {
          if (!isDatabaseUnavailable(err)) throw err;
          return tagged([asGraphQLError(serviceUnavailable())], requestId);
        }
        if (key) sockets.expireAt(state, key.expiresAt);
        if (
          !key ||
          key.apiKeyId !== state.principal.apiKeyId ||
          (state.expiresAt !== null && state.expiresAt <= Date.now())
        ) {
          const errors = tagged([asGraphQLError(invalidKey())], requestId);
          // Answer, then close: graphql-ws would send its own answer after this hook, to a socket already closing.
          state.socket.send(
            stringifyMessage({ id, type: MessageType.Error, payload: errors.map((e) => format(e, requestId)) }),
          );
          closeRetired(state);
          return errors;
        }
        state.principal = merchantPrincipal(key);

        const limited = await consumeRateLimit(services, state.principal);
        if (limited) return tagged([asGraphQLError(limited)], requestId);

        // As over HTTP (src/http/body-limits.ts), before graphql-js's recursive parser and coercion walk them.
        const tooDeep = operationTooDeep(payload.query, payload.variables);
        if (tooDeep) return tagged([asGraphQLError(tooDeep)], requestId);
        let document: DocumentNode;
        try {
          document = parse(payload.query, { maxTokens });
        } catch (err) {
          if (!(err instanceof GraphQLError)) throw err;
          return tagged([err], requestId);
        }
        const invalid = validate(schema, document, rules);
        if (invalid.length) return tagged(invalid, requestId);
        const tooCostly = operationCostError(schema, document, payload.operationName, payload.variables);
        if (tooCostly) return tagged([tooCostly], requestId);
        const operation = getOperationAST(document, payload.operationName);
        if (!operation) return tagged([asGraphQLError(operationNotFound(payload.operationName))], requestId);

        if (operation.operation === 'subscription' && maxSubscriptions > 0) {
          for (const running of state.subscriptions)
            if (!(running in ctx.subscriptions)) state.subscriptions.delete(running);
          if (state.subscriptions.size >= maxSubscriptions) {
            const err = new DomainError(
              'rate_limited',
              `Too many subscriptions on this connection (at most ${maxSubscriptions}); complete one or open another connection.`,
            );
            return tagged([asGraphQLError(err)], requestId);
          }
          state.subscriptions.add(id);
        }

        return {
          schema,
          document,
          operationName: payload.operationName ?? undefined,
          variableValues: payload.variables ?? undefined,
          contextValue: operationContext({
            em: orm.em as never,
            principal: state.principal,
            requestId,
            log: logger.child({ request_id: requestId }),
            services,
            signal: () => state.closed.signal,
          }),
        };
      },
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => format(e, requestIds.get(e))),
      onNext: (_ctx, _id, _payload, args, result) => {
        if (!result.errors?.length) return;
        const requestId = (args.contextValue as Ctx | undefined)?.requestId;
        return { ...result, errors: result.errors.map((e) => format(e, requestId)) };
      },
      onComplete: (ctx, id) => {
        ctx.extra.state?.subscriptions.delete(id);
      },
    },
    wsServer,
  );
  // ws reports a client's protocol fault (a message over maxPayload, a bad frame) as 'error' and closes the socket
  // itself (1009, 1002, ...); graphql-ws would print each one with its stack on the console: one log line instead.
  wsServer.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (err: Error & { code?: string }) =>
      logger.info({ code: err.code, reason: err.message }, 'websocket closed on a protocol error'),
    );
  });

  return {
    dispose: async () => {
      sockets.clearTimers();
      await stopFollowing();
      await server.dispose();
    },
  };
}

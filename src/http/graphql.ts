import type http from 'node:http';
import { ApolloServer, ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import express, { Request, RequestHandler, Router } from 'express';
import { GraphQLSchema } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Ctx } from '../core/context';
import { operationContext } from './principal';
import { formatGraphQLError, graphQLErrorBody } from '../core/errors';
import { logger } from '../core/logger';
import type { PubSub } from '../core/pubsub';
import type { Services } from '../services';
import { authenticate, invalidKey, rateLimit } from './auth';
import { mountGraphQLWs } from './graphql-ws';
import { GraphQLIde } from './ide';
import { introspectionDepthRule } from './introspection-depth';
import { graphqlHttpLimits } from './graphql-limits';
import { graphqlReadKey, isCatalogRead } from '../modules/catalog';
import { boundedDocumentStore } from './document-store';
import {
  noteErrorCode,
  noteGraphQLErrorCode,
  noteGraphQLOperation,
  RequestSignals,
  trackGraphQLResponse,
} from './request';
import { labelOperation, labelRoute } from './route-label';
import { idempotencyReport } from './idempotency-report';
import { useIdempotencyHeader } from '../modules/idempotency';

/**
 * Limits for client-written queries (the REST shim's own documents are fixed and trusted). Token limit, applied by
 * graphql-js's own parser (a parse error is a 400 like any syntax error).
 */
export const MAX_TOKENS = 5000;

export const armor = new ApolloArmor({
  maxDepth: { n: 10 },
  // The cost limit is src/core/operation-cost.ts's (it knows expensive fields and reads variables): graphql-limits.ts.
  costLimit: { enabled: false },
  maxAliases: { n: 20 },
  maxDirectives: { n: 20 },
  // armor's token plugin re-parses in a hook and throws there, which Apollo answers as a 500: see parseOptions below.
  maxTokens: { enabled: false },
  blockFieldSuggestion: { enabled: false },
});
const armored = armor.protect();
/** armor's rules, and a depth limit for introspection (armor's own depth limit skips `__schema`). */
const protection = { ...armored, validationRules: [...armored.validationRules, introspectionDepthRule()] };

/**
 * What catalogCacheHits worked out for a POST it could not answer (by request, then in the context's extras): the
 * key, and the version if it read one, so the plugin below neither hashes the request nor looks the version up again.
 */
interface CatalogLookup {
  key: string | null;
  version?: string;
}
const CATALOG_LOOKUP = Symbol('catalogLookup');
const catalogLookups = new WeakMap<Request, CatalogLookup>();

/**
 * Stores the answers of catalog-only queries in the versioned catalog read cache (src/core/read-cache.ts), keyed as
 * src/modules/catalog/catalog-cache.ts says, as the REST shim does for its catalog routes. The version is read
 * before the query runs, so an answer is never stored under a version newer than the data it shows.
 */
function catalogCachePlugin(services: Services): ApolloServerPlugin<Ctx> {
  return {
    async requestDidStart() {
      let cached: { key: string; version: string } | undefined;
      return {
        async responseForOperation({ operation, request, contextValue }) {
          const p = contextValue.principal;
          // Without an operation (several and no operationName, or an unknown name) this is no catalog read: Apollo
          // then answers its own 400.
          if (!services.catalogCache.enabled || !isCatalogRead(operation) || p.kind !== 'merchant' || !request.query)
            return null;
          const seen = contextValue.extras.get(CATALOG_LOOKUP) as CatalogLookup | undefined; // GET: none
          const key = seen
            ? seen.key
            : graphqlReadKey(p.merchantId, p.mode, request.operationName, request.query, request.variables);
          if (key)
            cached = { key, version: seen?.version ?? (await services.catalogCache.version(p.merchantId, p.mode)) };
          return null;
        },
        async willSendResponse({ response }) {
          if (cached && response.body.kind === 'single' && !response.body.singleResult.errors) {
            // Stored as the bytes Apollo sends, so a hit costs no serialization.
            services.catalogCache.set(cached.key, cached.version, JSON.stringify(response.body.singleResult) + '\n');
          }
        },
      };
    },
  };
}

/** Answers a catalog-only query seen before from the cache, while the merchant's catalog version is unchanged. */
function catalogCacheHits(services: Services): RequestHandler {
  return async (req, res, next) => {
    try {
      const p = req.principal;
      const body = req.body as { query?: unknown; operationName?: unknown; variables?: unknown } | undefined;
      if (
        !services.catalogCache.enabled ||
        req.method !== 'POST' ||
        p?.kind !== 'merchant' ||
        !body ||
        typeof body.query !== 'string'
      ) {
        return next();
      }
      const lookup: CatalogLookup = {
        key: graphqlReadKey(p.merchant.id, p.mode, body.operationName, body.query, body.variables),
      };
      catalogLookups.set(req, lookup);
      if (!lookup.key || !services.catalogCache.has(lookup.key)) return next();
      lookup.version = await services.catalogCache.version(p.merchant.id, p.mode);
      const hit = services.catalogCache.get(lookup.key, lookup.version);
      if (!hit) return next();
      labelOperation(res, 'query'); // a catalog read
      res.status(200).type('application/json; charset=utf-8').send(hit);
    } catch (err) {
      next(err);
    }
  };
}

/** Everything at /graphql: the IDE for browsers (GET), queries and mutations (POST), subscriptions (graphql-ws). */
export async function mountGraphQL(opts: {
  app: express.Express;
  httpServer: http.Server;
  schema: GraphQLSchema;
  orm: MikroORM;
  services: Services;
  pubsub: PubSub;
  /** The app's request signals (ctx.signal: the client left, or the app is stopping). */
  signals: RequestSignals;
  /** The IDE served to browsers at /graphql. */
  ide: GraphQLIde;
}) {
  const { app, httpServer, schema, orm, services, signals } = opts;

  // Operations over graphql-ws: the same key, rate limit and document rules as HTTP (src/http/graphql-ws.ts).
  const ws = mountGraphQLWs({
    httpServer,
    schema,
    orm,
    services,
    pubsub: opts.pubsub,
    validationRules: protection.validationRules,
    maxTokens: MAX_TOKENS,
  });

  const apollo = new ApolloServer<Ctx>({
    schema,
    documentStore: boundedDocumentStore(), // parsed and validated query texts, bounded (src/http/document-store.ts)
    plugins: [
      ...protection.plugins,
      ApolloServerPluginDrainHttpServer({ httpServer }),
      // Cache hints are unused, and the plugin would wrap every field resolver of the shared schema.
      ApolloServerPluginCacheControlDisabled(),
      {
        async serverWillStart() {
          return {
            async drainServer() {
              await ws.dispose();
            },
          };
        },
      },
      catalogCachePlugin(services),
      graphqlHttpLimits(), // subscriptions over HTTP: 400
      idempotencyReport(), // Idempotent-Replayed: true
      {
        // The request id joins the error extensions once the context exists.
        async requestDidStart() {
          return {
            // GET /metrics counts /graphql by operation type (a fixed set), never by the client's operation name.
            async didResolveOperation({ operation, contextValue }) {
              if (operation) noteGraphQLOperation(contextValue.requestId, operation.operation);
            },
            async willSendResponse({ response, contextValue }) {
              if (response.body.kind === 'single' && response.body.singleResult.errors) {
                noteGraphQLErrorCode(contextValue.requestId, response.body.singleResult.errors);
                for (const e of response.body.singleResult.errors) {
                  (e.extensions as Record<string, unknown>).requestId = contextValue.requestId;
                }
              }
            },
          };
        },
      },
    ],
    validationRules: protection.validationRules,
    parseOptions: { maxTokens: MAX_TOKENS },
    includeStacktraceInErrorResponses: false,
    // main.ts owns shutdown: Apollo's own signal handlers would race it and leave the process hanging.
    stopOnTerminationSignals: false,
    introspection: true,
    formatError: (_formatted, error) =>
      formatGraphQLError(error, (err) => logger.error({ err }, 'graphql internal error')),
  });
  await apollo.start();

  const router = Router();
  router.use(opts.ide.router()); // the IDE's page and assets (src/http/ide.ts)
  router.use(
    '/graphql',
    (_req: Request, res: express.Response, next: express.NextFunction) => {
      labelRoute(res, '/graphql');
      labelOperation(res, 'none'); // until Apollo resolves one (a key refused, a syntax error: none)
      next();
    },
    authenticate(
      services,
      (req, res) => {
        const err = invalidKey();
        noteErrorCode(res, err.code);
        res.status(401).json(graphQLErrorBody(err, req.requestId));
      },
      { portal: true }, // a customer portal session's token too: only the portal's fields (src/schema.ts)
    ),
    rateLimit(services),
    catalogCacheHits(services),
    expressMiddleware(apollo, {
      context: async ({ req, res }) => {
        trackGraphQLResponse(req.requestId, res);
        const ctx = operationContext({
          em: orm.em as never,
          principal: req.principal!,
          requestId: req.requestId,
          log: req.log,
          services,
          signal: () => signals.for(res),
        });
        useIdempotencyHeader(ctx, req.get('Idempotency-Key')); // for the operation's one idempotent mutation
        const lookup = catalogLookups.get(req);
        if (lookup) ctx.extras.set(CATALOG_LOOKUP, lookup);
        return ctx;
      },
    }),
  );
  app.use(router);
  // Stopping Apollo drains HTTP and, through the plugin above, disposes of the WebSocket server.
  return { stop: () => apollo.stop() };
}

import express, { Request, Response, Router } from 'express';
import { execute, getNamedType, GraphQLInputType, GraphQLObjectType, GraphQLSchema, isEnumType, isNonNullType, isScalarType } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Ctx } from '../src/core/context';
import { operationContext } from '../src/http/principal';
import { idempotentReplay } from '../src/modules/idempotency/with-idempotency';
import { DomainError, errorBody, fromGraphQLError } from '../src/core/errors';
import { authenticate, rateLimit } from '../src/http/auth';
import { noteErrorCode, sendError } from '../src/http/request';
import type { Services } from '../src/services';
import { CompiledRoute, compileRoute, IDEMPOTENCY_KEY_VARIABLE, QUERY_NAMES } from './compile';
import { enumToGraphQL, fromGraphQL, toGraphQL } from './mapping';
import { routes } from './routes';
import { restReadKey } from '../src/modules/catalog/catalog-cache';

/** A query-string value is text; give GraphQL the scalar it expects (or the text, which it then rejects). */
function fromQueryString(raw: unknown, type: GraphQLInputType, param: string): unknown {
  const unwrapped = isNonNullType(type) ? type.ofType : type;
  // Enums are checked here, so a bad value is answered with REST's lower-case values.
  if (isEnumType(unwrapped) && raw !== undefined && raw !== null) return enumToGraphQL(raw, unwrapped, param);
  if (Array.isArray(raw) || typeof raw !== 'string') return raw;
  const named = getNamedType(unwrapped);
  if (isScalarType(named)) {
    if ((named.name === 'Int' || named.name === 'SafeInt') && /^-?\d+$/.test(raw)) return Number(raw);
    if (named.name === 'Boolean' && (raw === 'true' || raw === 'false')) return raw === 'true';
  }
  return raw;
}

function variablesFor(route: CompiledRoute, req: Request): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const p of route.pathParams) vars[p] = req.params[p];
  const body = req.body as unknown;
  const hasBody = body !== undefined && body !== null && !(typeof body === 'object' && Object.keys(body).length === 0);
  if (route.inputType) {
    if (hasBody && (typeof body !== 'object' || Array.isArray(body))) {
      throw new DomainError('parameter_invalid', 'The request body must be a JSON object.');
    }
    vars.input = toGraphQL(body ?? {}, route.inputType, '');
  }
  const args: [string, unknown][] = Object.entries(req.query);
  if (route.method !== 'get' && !route.inputType && hasBody) {
    if (typeof body !== 'object' || Array.isArray(body)) throw new DomainError('parameter_invalid', 'The request body must be a JSON object.');
    args.push(...Object.entries(body as Record<string, unknown>));
  }
  for (const [name, value] of args) {
    const spec = route.argParams.get(name);
    if (!spec) throw new DomainError('parameter_unknown', `Received unknown parameter: ${name}`, name);
    vars[spec.variable] = fromQueryString(value, spec.type, name);
  }
  return vars;
}

/** A `binary` route's answer: the file its operation rendered. */
interface FileAnswer {
  contentType: string;
  filename: string;
  bytes: Buffer;
}

/** `inline; filename="..."`, with the name kept to characters every client reads the same. */
function contentDisposition(filename: string): string {
  return `inline; filename="${filename.replace(/[^\x20-\x7e]|["\\]/g, '_')}"`;
}

/** The contract names pagination parameters `limit`/`cursor`; GraphQL names them `first`/`after`. */
function restParam(param: string | null): string | null {
  if (!param) return param;
  return QUERY_NAMES[param] ?? param;
}

export function restRouter(opts: { schema: GraphQLSchema; orm: MikroORM; services: Services }): Router {
  const { schema, orm, services } = opts;
  const router = Router();
  const merchantAuth = authenticate(services);
  const limiter = rateLimit(services);
  const adminAuth = (req: Request, res: Response, next: express.NextFunction) => {
    // Without ADMIN_TOKEN the operator API does not exist.
    if (!services.config.adminToken) return sendError(req, res, new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`));
    return authenticate(services)(req, res, () => {
      if (req.principal?.kind !== 'admin') return sendError(req, res, new DomainError('invalid_api_key', 'Invalid operator token.'));
      next();
    });
  };

  for (const route of routes.map((r) => compileRoute(schema, r))) {
    /**
     * Runs the route's operation; answers [status, JSON text, error, replayed]. Idempotency is the operation's own
     * (src/modules/idempotency/with-idempotency.ts): the header is passed as `$idempotencyKey`, and the operation
     * reports a replay, whose error body keeps the first request's id (byte for byte, contract section 5).
     */
    const run = async (req: Request, parsed?: Record<string, unknown>): Promise<[number, string, DomainError?, boolean?, FileAnswer?]> => {
      const status = route.status ?? 200;
      let payload: unknown;
      let file: FileAnswer | undefined;
      let contextValue: Ctx | undefined;
      try {
        const variableValues = parsed ?? variablesFor(route, req);
        if (route.idempotent) variableValues[IDEMPOTENCY_KEY_VARIABLE] = req.get('Idempotency-Key');
        contextValue = operationContext({ em: orm.em as never, principal: req.principal!, requestId: req.requestId, log: req.log, services });
        const result = await execute({ schema, document: route.documentNode, variableValues, contextValue });
        if (result.errors?.length) {
          const err = fromGraphQLError(result.errors[0], (p) => restParam(p)!);
          if (err.code === 'internal_error') req.log.error({ err: result.errors[0].originalError ?? result.errors[0] }, 'internal error');
          throw new DomainError(err.code, err.message, restParam(err.param), err.headers);
        }
        const data = (result.data as Record<string, unknown>)[route.rootField];
        if (route.filePath) {
          // A file answer (Route.binary): the operation's { filename contentType base64 }, decoded.
          const doc = route.filePath.reduce((o, k) => (o as Record<string, unknown> | null)?.[k], data) as
            | { filename: string; contentType: string; base64: string }
            | null
            | undefined;
          if (!doc) throw new Error(`${route.method} ${route.path}: the operation answered no file`);
          file = { contentType: doc.contentType, filename: doc.filename, bytes: Buffer.from(doc.base64, 'base64') };
        } else if (route.isList) {
          const conn = data as { edges: { node: unknown }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
          const connType = getNamedType(route.resultType) as GraphQLObjectType;
          const edgeType = getNamedType(connType.getFields().edges.type) as GraphQLObjectType;
          payload = {
            object: 'list',
            data: conn.edges.map((e) => fromGraphQL(e.node, edgeType.getFields().node.type)),
            has_more: conn.pageInfo.hasNextPage,
            next_cursor: conn.pageInfo.hasNextPage ? conn.pageInfo.endCursor : null,
          };
        } else {
          payload = fromGraphQL(data, route.resultType);
        }
      } catch (e) {
        const err = e instanceof DomainError ? e : new DomainError('internal_error', 'An internal error occurred.');
        if (!(e instanceof DomainError)) req.log.error({ err: e }, 'rest shim failure');
        const replay = contextValue && idempotentReplay(contextValue);
        return [err.status, JSON.stringify(errorBody(err, replay?.firstRequestId ?? req.requestId)), err, !!replay];
      }
      return [status, file ? '' : JSON.stringify(payload), undefined, !!idempotentReplay(contextValue!), file];
    };

    const handler = async (req: Request, res: Response) => {
      if (route.cache && req.principal?.kind === 'merchant') {
        // Keyed by the parsed variables, not the URL as spelled (src/modules/catalog/catalog-cache.ts).
        const { merchant: { id: merchantId }, mode } = req.principal;
        let parsed: Record<string, unknown> | undefined;
        const cacheKey = restReadKey(merchantId, mode, route, () => (parsed = variablesFor(route, req)));
        const [status, body] = await services.catalogCache.serve(merchantId, mode, cacheKey, async () => {
          const answer = await run(req, parsed); // a miss runs on the variables the key was made of
          if (answer[2]) noteErrorCode(res, answer[2].code);
          return answer;
        });
        return void res.status(status).type('application/json').send(body);
      }
      const [status, body, err, replayed, file] = await run(req);
      if (err) noteErrorCode(res, err.code);
      for (const [k, v] of Object.entries(err?.headers ?? {})) res.setHeader(k, v);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      if (file) {
        res.setHeader('Content-Disposition', contentDisposition(file.filename));
        return void res.status(status).type(file.contentType).send(file.bytes);
      }
      res.status(status).type('application/json').send(body);
    };
    const guards = route.auth === 'admin' ? [adminAuth] : [merchantAuth, limiter];
    router[route.method](route.expressPath, ...guards, handler);
  }
  return router;
}

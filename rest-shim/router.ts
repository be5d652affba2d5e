import express, { Request, Response, Router } from 'express';
import {
  execute,
  ExecutionResult,
  getNamedType,
  GraphQLInputType,
  GraphQLObjectType,
  GraphQLSchema,
  isEnumType,
  isNonNullType,
  isScalarType,
} from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Ctx } from '../src/core/context';
import { operationContext } from '../src/http/principal';
import { idempotentReplay } from '../src/modules/idempotency';
import { DomainError, errorBody, fromGraphQLError } from '../src/core/errors';
import { authenticate, rateLimit } from '../src/http/auth';
import { noteErrorCode, RequestSignals, sendError } from '../src/http/request';
import { routeLabel } from '../src/http/route-label';
import type { Services } from '../src/services';
import { CompiledRoute, compileRoute, IDEMPOTENCY_KEY_VARIABLE, QUERY_NAMES, SharedField } from './compile';
import { isSharedAnswer } from '../src/core/read-cache';
import { enumToGraphQL, fromGraphQL, toGraphQL } from './mapping';
import { routes } from './routes';
import { compileOperation } from './compiled-operation';
import { logger } from '../src/core/logger';
import { wrapFieldResolver } from '../src/core/adapters/graphql-field-resolve';
import { restReadKey } from '../src/modules/catalog';

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

/**
 * A route's variables: path parameters, the query string (text, given the scalar it spells), and the body. A body is
 * JSON and taken as typed: `"60"` is no integer and `"abc"` no list, as GraphQL's coercion and toGraphQL say. A
 * request with a body (every method but GET) sends a JSON object or nothing (no bytes, or `{}`); an array, `null`,
 * a string, a number or a boolean is refused, never read as "no body" (`[]` would roll a key with no grace period).
 */
function variablesFor(route: CompiledRoute, req: Request): Record<string, unknown> {
  const vars: Record<string, unknown> = {};
  for (const p of route.pathParams) vars[p] = req.params[p];
  const body = route.method === 'get' ? undefined : (req.body as unknown);
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    throw new DomainError('parameter_invalid', 'The request body must be a JSON object.');
  }
  if (route.inputType) vars.input = toGraphQL(body ?? {}, route.inputType, '');
  for (const name of Object.keys(req.query)) {
    const spec = route.argParams.get(name);
    if (!spec) throw new DomainError('parameter_unknown', `Received unknown parameter: ${name}`, name);
    vars[spec.variable] = fromQueryString(req.query[name], spec.type, name);
  }
  if (body && !route.inputType) {
    for (const name of Object.keys(body)) {
      const spec = route.argParams.get(name);
      if (!spec) throw new DomainError('parameter_unknown', `Received unknown parameter: ${name}`, name);
      vars[spec.variable] = toGraphQL((body as Record<string, unknown>)[name], spec.type, name);
    }
  }
  return vars;
}

/** Values of a route's shared fields met while its operation runs, by response key (in the operation's context). */
const CAPTURED = Symbol('rest shim: shared field values');
const capturing = new WeakSet<object>();

/**
 * Makes a shared field's resolver also note its value in the running REST operation's context (Route.shared), for
 * the root field's own answer only. Everything else, GraphQL over HTTP included, finds no note to take and is served
 * as before.
 */
function captureValues(f: SharedField): void {
  const field = f.parentType.getFields()[f.fieldName];
  if (capturing.has(field)) return;
  capturing.add(field);
  wrapFieldResolver(field, (resolve) => (source, args, ctx: Ctx | undefined, info) => {
    const value = resolve(source, args, ctx, info);
    const seen = ctx?.extras?.get(CAPTURED) as Map<string | number, unknown> | undefined;
    if (!seen || !info.path.prev || info.path.prev.prev) return value;
    const key = info.path.key;
    if (value instanceof Promise) return value.then((v) => (seen.set(key, v), v));
    seen.set(key, value);
    return value;
  });
}

/** REST text of shared values per shared field (a route's selection), kept as long as the value lives. */
const renderings = new WeakMap<object, Map<SharedField, string>>();

/** Dispatch by method and path without walking every route's layer (express would try each route in turn). */
interface RouteEntry {
  /** Lower-case literal segments; null where a parameter goes. */
  segments: (string | null)[];
  params: string[];
  chain: express.RequestHandler[];
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

/**
 * A shared field's REST text for `value`: the field's own document run over it with the request's
 * context, mapped and serialised; kept for the next request when the service shares the value (isSharedAnswer).
 */
async function render(f: SharedField, value: unknown, ctx: Ctx, failOn: (r: ExecutionResult) => void): Promise<string> {
  if (value === null || value === undefined) return 'null';
  const keep = isSharedAnswer(value);
  const kept = keep ? renderings.get(value)?.get(f) : undefined;
  if (kept !== undefined) return kept;
  const result = await execute({ schema: f.schema, document: f.document, rootValue: value, contextValue: ctx });
  failOn(result);
  const text = JSON.stringify(fromGraphQL((result.data as { value: unknown }).value, f.type));
  if (keep) {
    let byField = renderings.get(value);
    if (!byField) renderings.set(value, (byField = new Map()));
    byField.set(f, text);
  }
  return text;
}

/** Characters of answer text above which sendJson writes bytes rather than text. */
const LARGE_ANSWER = 16 * 1024;

/**
 * The answer as express's `res.status().type('application/json').send()` writes it (the same status and headers,
 * with no ETag: the app turns them off), without its content-type parsing and freshness checks on every answer.
 */
function sendJson(res: Response, status: number, body: string | Buffer): void {
  // A large answer goes out as bytes: node prepends the head to a text body (a copy of the whole answer on the heap,
  // 440 KB for a usage batch's) and counting its bytes flattens JSON.stringify's rope (another); a Buffer goes out
  // beside the head. A small one stays text: one write of head and body, as before.
  const bytes = typeof body === 'string' && body.length > LARGE_ANSWER ? Buffer.from(body, 'utf8') : body;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length);
  res.end(bytes);
}

/** The REST API names pagination parameters `limit`/`cursor`; GraphQL names them `first`/`after`. */
function restParam(param: string | null): string | null {
  if (!param) return param;
  return QUERY_NAMES[param] ?? param;
}

/** A request the route table answers: the route's handlers (guards, then the operation) and its path parameters. */
export interface RouteMatch {
  chain: express.RequestHandler[];
  params: Record<string, string>;
}

export interface RestShim {
  /** Every route as express layers, for what the table leaves (HEAD, trailing or empty segments, undecodable parameters). */
  router: Router;
  /**
   * The route for `method` and `url` (relative to /v1) without walking every route's layer: the first route in table
   * order whose literal segments (case-insensitively) and parameters fit, as express would pick it; null otherwise.
   */
  match(method: string, url: string): RouteMatch | null;
}

/** `signals`: the app's request signals (ctx.signal: the client left, or the app is stopping). */
export function restRouter(opts: {
  schema: GraphQLSchema;
  orm: MikroORM;
  services: Services;
  signals: RequestSignals;
}): RestShim {
  const { schema, orm, services, signals } = opts;
  const router = Router();
  const merchantAuth = authenticate(services);
  const limiter = rateLimit(services);
  const adminAuth = (req: Request, res: Response, next: express.NextFunction) => {
    // Without ADMIN_TOKEN the operator API does not exist.
    if (!services.config.adminToken)
      return sendError(
        req,
        res,
        new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`),
      );
    return authenticate(services)(req, res, () => {
      if (req.principal?.kind !== 'admin')
        return sendError(req, res, new DomainError('invalid_api_key', 'Invalid operator token.'));
      next();
    });
  };

  // Routes by method and segment count, in table order (see RestShim.match).
  const table = new Map<string, RouteEntry[]>();
  const match = (method: string, url: string): RouteMatch | null => {
    const q = url.indexOf('?');
    const segs = (q < 0 ? url : url.slice(0, q)).split('/');
    const entries = table.get(`${method} ${segs.length}`);
    if (!entries || segs[0] !== '') return null;
    search: for (const e of entries) {
      const found: string[] = [];
      for (let i = 1; i < segs.length; i++) {
        const seg = segs[i];
        if (!seg) return null;
        const literal = e.segments[i];
        if (literal === null) found.push(seg);
        else if (literal !== seg && literal !== seg.toLowerCase()) continue search;
      }
      const params: Record<string, string> = {};
      try {
        e.params.forEach(
          (name, i) => (params[name] = found[i].includes('%') ? decodeURIComponent(found[i]) : found[i]),
        );
      } catch {
        return null; // express's route layers answer it as they always did
      }
      return { chain: e.chain, params };
    }
    return null;
  };

  for (const route of routes.map((r) => compileRoute(schema, r))) {
    route.sharedFields.forEach(captureValues); // before compiling: the compiled query keeps the resolvers it finds
    const operation = compileOperation(schema, route.executed, (err) =>
      logger.warn({ err, route: `${route.method.toUpperCase()} ${route.path}` }, 'REST route runs interpreted'),
    );
    /**
     * Runs the route's operation; answers [status, JSON text, error, replayed]. Idempotency is the operation's own
     * (src/modules/idempotency/with-idempotency.ts): the header is passed as `$idempotencyKey`, and the operation
     * reports a replay, whose error body keeps the first request's id (byte for byte, docs/api.md).
     */
    const run = async (
      req: Request,
      parsed?: Record<string, unknown>,
    ): Promise<[number, string, DomainError?, boolean?, FileAnswer?]> => {
      const status = route.status ?? 200;
      let payload: unknown;
      let file: FileAnswer | undefined;
      let contextValue: Ctx | undefined;
      let text: string | undefined;
      const failOn = (result: ExecutionResult) => {
        if (!result.errors?.length) return;
        const err = fromGraphQLError(result.errors[0], (p) => restParam(p)!);
        if (err.code === 'internal_error')
          req.log.error({ err: result.errors[0].originalError ?? result.errors[0] }, 'internal error');
        throw new DomainError(err.code, err.message, restParam(err.param), err.headers);
      };
      try {
        const variableValues = parsed ?? variablesFor(route, req);
        if (route.idempotent) variableValues[IDEMPOTENCY_KEY_VARIABLE] = req.get('Idempotency-Key');
        const res = req.res!;
        contextValue = operationContext({
          em: orm.em as never,
          principal: req.principal!,
          requestId: req.requestId,
          log: () => req.log,
          services,
          signal: () => signals.for(res),
        });
        const captured = new Map<string | number, unknown>();
        if (route.sharedFields.length) contextValue.extras.set(CAPTURED, captured);
        const result = await operation(contextValue, variableValues);
        failOn(result);
        const data = (result.data as Record<string, unknown>)[route.rootField];
        if (route.sharedFields.length && data !== null && data !== undefined) {
          // Each shared field's text (rendered now, or kept from an earlier request for the same value), the rest
          // of the answer mapped as usual, in the document's field order: the bytes JSON.stringify would give.
          const ctx = contextValue;
          const texts = new Map<string, string>();
          for (const f of route.sharedFields) {
            const shown = (data as Record<string, unknown>)[f.responseKey];
            if (shown !== null && shown !== undefined && !captured.has(f.responseKey))
              throw new Error(`${route.path}: ${f.responseKey} was not captured`);
            texts.set(
              f.restKey,
              shown === null || shown === undefined
                ? 'null'
                : await render(f, captured.get(f.responseKey), ctx, failOn),
            );
          }
          const mapped = fromGraphQL(data, route.resultType) as Record<string, unknown>;
          text = `{${Object.keys(mapped)
            .map((k) => `${JSON.stringify(k)}:${texts.get(k) ?? JSON.stringify(mapped[k])}`)
            .join(',')}}`;
        } else if (route.filePath) {
          // A file answer (Route.binary): the operation's { filename contentType base64 }, decoded.
          const doc = route.filePath.reduce((o, k) => (o as Record<string, unknown> | null)?.[k], data) as
            { filename: string; contentType: string; base64: string } | null | undefined;
          if (!doc) throw new Error(`${route.method} ${route.path}: the operation answered no file`);
          file = { contentType: doc.contentType, filename: doc.filename, bytes: Buffer.from(doc.base64, 'base64') };
        } else if (route.isList) {
          const conn = data as {
            edges: { node: unknown }[];
            pageInfo: { hasNextPage: boolean; endCursor: string | null };
          };
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
      return [
        status,
        file ? '' : (text ?? JSON.stringify(payload)),
        undefined,
        !!idempotentReplay(contextValue!),
        file,
      ];
    };

    const handler = async (req: Request, res: Response) => {
      if (route.cache && req.principal?.kind === 'merchant') {
        // Keyed by the parsed variables, not the URL as spelled (src/modules/catalog/catalog-cache.ts).
        const {
          merchant: { id: merchantId },
          mode,
        } = req.principal;
        let parsed: Record<string, unknown> | undefined;
        const cacheKey = restReadKey(merchantId, mode, route, () => (parsed = variablesFor(route, req)));
        const [status, body] = await services.catalogCache.serve(merchantId, mode, cacheKey, async () => {
          const answer = await run(req, parsed); // a miss runs on the variables the key was made of
          if (answer[2]) noteErrorCode(res, answer[2].code);
          return answer;
        });
        return sendJson(res, status, body);
      }
      const [status, body, err, replayed, file] = await run(req);
      if (err) noteErrorCode(res, err.code);
      for (const [k, v] of Object.entries(err?.headers ?? {})) res.setHeader(k, v);
      if (replayed) res.setHeader('Idempotent-Replayed', 'true');
      if (file) {
        res.setHeader('Content-Disposition', contentDisposition(file.filename));
        return void res.status(status).type(file.contentType).send(file.bytes);
      }
      sendJson(res, status, body);
    };
    // Named for GET /metrics by its documented path (`/v1/customers/{id}`), in either lane: never by the URL.
    const label = routeLabel(`/v1${route.path}`);
    const guards = [label, ...(route.auth === 'admin' ? [adminAuth] : [merchantAuth, limiter])];
    router[route.method](route.expressPath, ...guards, handler);
    const segments = route.path.split('/').map((seg) => (/^\{\w+\}$/.test(seg) ? null : seg.toLowerCase()));
    const key = `${route.method.toUpperCase()} ${segments.length}`;
    if (!table.has(key)) table.set(key, []);
    table.get(key)!.push({ segments, params: route.pathParams, chain: [...guards, handler] });
  }
  return { router, match };
}

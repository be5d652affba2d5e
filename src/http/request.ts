import crypto from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { AuthPrincipal as Principal } from './principal';
import { DomainError, errorBody, graphQLErrorBody, isDatabaseUnavailable, serviceUnavailable } from '../core/errors';
import { logger, Logger } from '../core/logger';
import { labelOperation } from './route-label';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      log: Logger;
      principal?: Principal;
      /** The exact bytes of the body, for signature checks and idempotency fingerprints. */
      rawBody?: Buffer;
    }
  }
}

/** Random bytes drawn 4 KiB at a time: one request id takes 12 of them, without a call into OpenSSL per request. */
const ids = { pool: Buffer.alloc(4096), at: 4096 };

/** `req_` + 24 hex digits (96 random bits). */
export function newRequestId(): string {
  if (ids.at + 12 > ids.pool.length) {
    crypto.randomFillSync(ids.pool);
    ids.at = 0;
  }
  const id = `req_${ids.pool.toString('hex', ids.at, ids.at + 12)}`;
  ids.at += 12;
  return id;
}

const LOG = Symbol('request log');

/**
 * Makes `req.log` (a child logger carrying the request id) on first use, on the app's request prototype: most
 * requests log nothing below the info line, and that line is written only when info is enabled.
 */
export function lazyRequestLog(requestPrototype: object): void {
  Object.defineProperty(requestPrototype, 'log', {
    configurable: true,
    get(this: Request & { [LOG]?: Logger }): Logger {
      return (this[LOG] ??= logger.child({ request_id: this.requestId }));
    },
    set(this: Request & { [LOG]?: Logger }, log: Logger) {
      this[LOG] = log;
    },
  });
}

/** Every response carries `Request-Id`; every log line of the request carries it too (`req.log`, lazyRequestLog). */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const requestId = newRequestId();
  req.requestId = requestId;
  res.setHeader('Request-Id', requestId);
  if (logger.isLevelEnabled('info')) {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      // originalUrl, not req.path: inside a router req.path is relative to its mount (`/payments` for /v1/payments).
      const path = req.originalUrl.split('?')[0];
      const code = (res.locals as { errorCode?: string }).errorCode;
      req.log.info(
        { method: req.method, path, status: res.statusCode, ...(code ? { code } : {}), ms: Math.round(ms * 10) / 10 },
        'request',
      );
    });
  }
  next();
}

/**
 * The abort signals of one app's requests (Ctx.signal, src/core/context.ts, documents what they mean to commands).
 * A request's signal aborts when its client leaves before the answer (the response closes before it was written in
 * full), or when the app stops (`stop()`, first thing in app.close: the drain then waits for commands that are
 * winding down). Made on a request's first use (most never ask): a response already closed unanswered gives an
 * aborted one. The app keeps each live signal's controller until its response closes.
 */
export class RequestSignals {
  private readonly live = new Set<AbortController>();
  private stopped = false;

  /** The signal of the request answered through `res`. */
  for(res: ServerResponse): AbortSignal {
    const c = new AbortController();
    if (this.stopped) c.abort(new Error('the service is stopping'));
    else if (res.closed) {
      if (!res.writableEnded) c.abort(new Error('the client left before the answer'));
    } else {
      this.live.add(c);
      res.once('close', () => {
        this.live.delete(c);
        if (!res.writableEnded) c.abort(new Error('the client left before the answer'));
      });
    }
    return c.signal;
  }

  /** Aborts the signal of every request in flight, and of every request from now on. */
  stop(): void {
    this.stopped = true;
    for (const c of this.live) c.abort(new Error('the service is stopping'));
    this.live.clear();
  }
}

/** Records the API error code of the error being answered, for the request's log line. */
export function noteErrorCode(res: Response, code: string): void {
  res.locals.errorCode = code;
}

/**
 * GraphQL requests' responses by request id, so the code of an answer's first error reaches the log line. Keyed by
 * id, not by the context object: Apollo runs each operation on a shallow copy of the context.
 */
const graphqlResponses = new Map<string, Response>();

export function trackGraphQLResponse(requestId: string, res: Response): void {
  graphqlResponses.set(requestId, res);
  res.once('close', () => graphqlResponses.delete(requestId));
}

/** The operation type Apollo resolved for a request at /graphql, for GET /metrics' labels. */
export function noteGraphQLOperation(requestId: string, operation: string): void {
  const res = graphqlResponses.get(requestId);
  if (res) labelOperation(res, operation);
}

export function noteGraphQLErrorCode(
  requestId: string,
  errors: readonly { extensions?: Record<string, unknown> }[],
): void {
  const res = graphqlResponses.get(requestId);
  const code = errors[0]?.extensions?.code;
  if (res && typeof code === 'string') noteErrorCode(res, code);
}

export function sendError(req: Request, res: Response, err: DomainError): void {
  noteErrorCode(res, err.code);
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  // GraphQL clients read `errors[]` (rate limits, body-parser failures at /graphql); everyone else the REST envelope.
  if (req.originalUrl.split('?')[0] === '/graphql') {
    res.status(err.status).json(graphQLErrorBody(err, req.requestId));
    return;
  }
  res.status(err.status).json(errorBody(err, req.requestId));
}

/**
 * body-parser's failures (express.json, express.raw) as API errors. Every one of them is the client's: a body
 * over 1 MiB is 413 `request_too_large`; a body that is not JSON is 400 `invalid_json`; everything else about the
 * bytes (a Content-Encoding or charset we do not read, compressed data that does not decompress, a body shorter
 * than its Content-Length) is 400 `parameter_invalid` with `param` null. The API has no 415.
 * Only body-parser's own 5xx (a stream misused by the server) stay internal errors.
 */
export function bodyParserError(err: unknown): DomainError | null {
  const e = err as {
    type?: unknown;
    status?: unknown;
    statusCode?: unknown;
    code?: unknown;
    encoding?: unknown;
    charset?: unknown;
  };
  if (!e || typeof e !== 'object') return null;
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : null;
  switch (e.type) {
    case 'entity.too.large':
      return new DomainError('request_too_large', 'Request body is larger than 1 MiB.');
    case 'entity.parse.failed':
      return new DomainError('invalid_json', 'Request body is not valid JSON.');
    case 'encoding.unsupported':
      return new DomainError(
        'parameter_invalid',
        `Unsupported Content-Encoding${typeof e.encoding === 'string' ? ` '${e.encoding.slice(0, 40)}'` : ''}: send identity, gzip, deflate or br.`,
      );
    case 'charset.unsupported':
      return new DomainError(
        'parameter_invalid',
        `Unsupported charset${typeof e.charset === 'string' ? ` '${e.charset.slice(0, 40)}'` : ''}: JSON bodies must be UTF-8.`,
      );
    case 'request.aborted':
    case 'request.size.invalid':
      return new DomainError('parameter_invalid', 'The request body ended before its Content-Length.');
    case 'entity.verify.failed':
      return new DomainError('parameter_invalid', 'The request body was refused.');
    case 'entity.not.utf8': // src/http/body-limits.ts, utf8Body
      return new DomainError('parameter_invalid', 'The request body is not valid UTF-8 (JSON bodies are UTF-8 text).');
    case 'parameters.too.many':
    case 'querystring.parse.rangeError':
      return new DomainError('parameter_invalid', 'The request body has too many or too deeply nested parameters.');
  }
  if (status !== null && status >= 400 && status < 500) {
    // zlib and brotli errors reach us as the decompression error itself, given status 400 by body-parser.
    const compression = typeof e.code === 'string' && /^(Z_|ERR_)/.test(e.code);
    return new DomainError(
      'parameter_invalid',
      compression
        ? 'The request body does not decompress as its Content-Encoding says.'
        : 'The request body could not be read.',
    );
  }
  return null;
}

/** Last express error handler: body-parser failures and anything unexpected, in the API's error shape. */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return;
  let domain: DomainError | null;
  if (err instanceof DomainError) domain = err;
  else if (err instanceof URIError) {
    // A path the router cannot percent-decode names no resource.
    domain = new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`);
  } else if (isDatabaseUnavailable(err))
    domain = serviceUnavailable(); // e.g. a key lookup while the database is away
  else domain = bodyParserError(err);
  if (!domain) {
    req.log.error({ err }, 'unhandled error');
    domain = new DomainError('internal_error', 'An internal error occurred.');
  }
  sendError(req, res, domain);
}

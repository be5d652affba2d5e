import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../core/context';
import { DomainError, errorBody, graphQLExtensions } from '../core/errors';
import { logger, Logger } from '../core/logger';

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

/** `req_` + 24 hex digits; randomUUID draws from a cached entropy pool, cheaper than randomBytes per request. */
export const newRequestId = () => `req_${crypto.randomUUID().replace(/-/g, '').slice(0, 24)}`;

/** Every response carries `Request-Id`; every log line of the request carries it too. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const requestId = newRequestId();
  req.requestId = requestId;
  req.log = logger.child({ request_id: requestId });
  res.setHeader('Request-Id', requestId);
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    req.log.info({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, 'request');
  });
  next();
}

export function sendError(req: Request, res: Response, err: DomainError): void {
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  // GraphQL clients read `errors[]` (rate limits, body-parser failures at /graphql); everyone else the REST envelope.
  if (req.originalUrl.split('?')[0] === '/graphql') {
    res.status(err.status).json({ errors: [{ message: err.message, extensions: graphQLExtensions(err, req.requestId) }] });
    return;
  }
  res.status(err.status).json(errorBody(err, req.requestId));
}

/** Last express error handler: body-parser failures and anything unexpected, in the contract's shape. */
export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return;
  const e = err as { type?: string; status?: number };
  let domain: DomainError;
  if (err instanceof DomainError) domain = err;
  else if (e?.type === 'entity.too.large') domain = new DomainError('request_too_large', 'Request body is larger than 1 MiB.');
  else if (e?.type === 'entity.parse.failed') domain = new DomainError('invalid_json', 'Request body is not valid JSON.');
  else if (err instanceof URIError) {
    // A path the router cannot percent-decode names no resource.
    domain = new DomainError('resource_not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`);
  } else if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
    domain = new DomainError('parameter_invalid', 'Unsupported body encoding.');
  } else {
    req.log.error({ err }, 'unhandled error');
    domain = new DomainError('internal_error', 'An internal error occurred.');
  }
  sendError(req, res, domain);
}

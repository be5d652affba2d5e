import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { AuthPrincipal as Principal, merchantPrincipal } from './principal';
import { DomainError } from '../core/errors';
import type { Services } from '../services';
import { sendError } from './request';

/** The token of an `Authorization: Bearer ...` value (an HTTP header, or graphql-ws's `connection_init` params). */
export const bearerToken = (authorization: unknown): string | null => {
  const m = typeof authorization === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(authorization) : null;
  return m ? m[1] : null;
};

/** Whether two secrets are equal, in time that does not depend on where they differ. */
export const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
};

/**
 * Resolves `Authorization: Bearer ...` to a principal: the operator token or a merchant's secret key; with `portal`
 * (GraphQL over HTTP only) also a customer portal session's token (docs/portal.md).
 */
export async function resolvePrincipal(
  services: Services,
  token: string | null,
  opts: { portal?: boolean } = {},
): Promise<Principal | null> {
  if (!token) return null;
  if (opts.portal && token.startsWith('pt_')) {
    const s = await services.portal.authenticate(token);
    return s
      ? { kind: 'portal', merchantId: s.merchantId, mode: s.mode, customerId: s.customerId, sessionId: s.sessionId }
      : null;
  }
  const admin = services.config.adminToken;
  if (admin && sameSecret(token, admin)) return { kind: 'admin' };
  const hit = await services.merchants.authenticate(token);
  return hit ? merchantPrincipal(hit) : null;
}

export const invalidKey = () =>
  new DomainError('invalid_api_key', 'Invalid API key provided. Use Authorization: Bearer sk_test_... or sk_live_...');

/** Sets `req.principal`, or answers 401 (in the transport's own shape) when the key is missing or unknown. */
export function authenticate(
  services: Services,
  unauthorized: (req: Request, res: Response) => void = (req, res) => sendError(req, res, invalidKey()),
  opts: { portal?: boolean } = {},
) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const principal = await resolvePrincipal(services, bearerToken(req.headers.authorization), opts);
      if (!principal) return unauthorized(req, res);
      req.principal = principal;
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * Counts one request (or WebSocket operation) against the key; answers the `rate_limited` error when over the limit.
 * Per key: `rate` requests a second sustained, bursts up to twice that, held across every process of the deployment
 * (src/core/limits). REST, GraphQL over HTTP and every operation on a GraphQL WebSocket share the budget of a key.
 */
export async function consumeRateLimit(services: Services, principal: Principal): Promise<DomainError | null> {
  if (principal.kind === 'admin') return null;
  // A portal session has the service's default limit, counted per session.
  const rate =
    principal.kind === 'merchant'
      ? (principal.merchant.rateLimitPerSecond ?? services.config.rateLimitPerSecond)
      : services.config.rateLimitPerSecond;
  if (rate <= 0) return null;
  const rejected = await services.limits.rates.consume(
    principal.kind === 'merchant' ? principal.apiKeyId : principal.sessionId,
    rate,
  );
  if (!rejected) return null;
  const retryAfter = String(Math.max(1, Math.ceil(rejected.msBeforeNext / 1000)));
  return new DomainError('rate_limited', 'Too many requests. Retry after the time in Retry-After.', null, {
    'Retry-After': retryAfter,
  });
}

/** The rate limit as express middleware (the REST shim and /graphql each mount it). */
export function rateLimit(services: Services) {
  return async (req: Request, res: Response, next: NextFunction) => {
    if (!req.principal) return next();
    try {
      const limited = await consumeRateLimit(services, req.principal);
      if (limited) return sendError(req, res, limited);
      next();
    } catch (err) {
      next(err);
    }
  };
}

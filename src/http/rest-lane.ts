import type http from 'node:http';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { RestShim } from '../../rest-shim/router';
import { appHandleSetup, appRouter } from '../core/adapters/express-dispatch';

// The server's request and response classes, born with the app's prototypes (half of an entitlement read's CPU went
// to express setting them per request: bench/README.md, "The REST lane").
export { expressClasses } from '../core/adapters/express-dispatch';

type ErrorHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;

/**
 * The server's request listener: a `/v1` request the REST route table answers runs `before` (request id, body
 * parser, input limits: the app's own middleware, in the app's order) and then its route's handlers directly; every
 * other request goes through express's router, as app.handle runs it. Walking each app-level layer and the mounted
 * router's for every API call, with closures per layer per request, was about a third of an entitlement read's CPU.
 *
 * The request is set up as `app.handle` sets it up (prototypes: the server's classes, expressClasses; `res.locals`),
 * with the URL relative to `/v1` as a router mounted there sees it, so handlers cannot tell the lanes apart.
 */
export function restLane(
  app: Express,
  rest: RestShim,
  before: RequestHandler[],
  onError: ErrorHandler,
): http.RequestListener {
  // Each route's whole chain (`before`, then its own handlers), built once.
  const chains = new WeakMap<RequestHandler[], RequestHandler[]>();
  const setUp = appHandleSetup(app);
  const router = appRouter(app);
  return (incoming, outgoing) => {
    const url = incoming.url ?? '';
    const req = incoming as Request;
    const res = outgoing as Response;
    const fail = (err: unknown) => onError(err, req, res, () => undefined);
    const hit = url.startsWith('/v1/') ? rest.match(incoming.method ?? '', url.slice(3)) : null;
    setUp(req, res);
    // Everything else: express's router, as app.handle runs it, without its setPrototypeOf (the classes did it).
    // The app's own last handlers answer every request; `done` is reached only by an error thrown in them.
    if (!hit) return router(req, res, (err) => fail(err ?? new Error('unanswered request')));
    req.originalUrl = url;
    req.baseUrl = '/v1';
    req.url = url.slice(3);
    req.params = hit.params;
    let chain = chains.get(hit.chain);
    if (!chain) chains.set(hit.chain, (chain = [...before, ...hit.chain]));
    let at = 0;
    const next = (err?: unknown): void => {
      if (err) return fail(err);
      const fn = chain[at++];
      if (!fn) return fail(new Error(`${req.method} ${url}: the route answered nothing`));
      try {
        const ran = fn(req, res, next) as unknown;
        if (ran instanceof Promise) ran.catch((e: unknown) => fail(e ?? new Error('rejected')));
      } catch (e) {
        fail(e);
      }
    };
    next();
  };
}

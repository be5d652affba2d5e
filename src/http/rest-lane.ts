import http from 'node:http';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { RestShim } from '../../rest-shim/router';

type ErrorHandler = (err: unknown, req: Request, res: Response, next: NextFunction) => void;
/** Express 5's base router (`app.router`, the `router` package), as app.handle calls it. */
type ExpressRouter = { handle(req: Request, res: Response, done: (err?: unknown) => void): void };

/**
 * The request and response classes for `http.createServer`: Node's own, whose instances are born with express's
 * app prototypes (app.request / app.response, which lead back to Node's). Express's `app.handle` would set them on
 * every request; an object whose prototype changes after it is built loses V8's fast paths, and with them went half
 * of an entitlement read's CPU (bench/README.md, "The REST lane").
 */
export function expressClasses(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  return { IncomingMessage: Request, ServerResponse: Response as typeof http.ServerResponse };
}

/**
 * The server's request listener: a `/v1` request the REST route table answers runs `before` (request id, body
 * parser, input limits: the app's own middleware, in the app's order) and then its route's handlers directly; every
 * other request goes through express's router, as app.handle runs it. Walking each app-level layer and the mounted
 * router's for every API call, with closures per layer per request, was about a third of an entitlement read's CPU.
 *
 * The request is set up as `app.handle` sets it up (prototypes: the server's classes, expressClasses; `res.locals`),
 * with the URL relative to `/v1` as a router mounted there sees it, so handlers cannot tell the lanes apart.
 */
export function restLane(app: Express, rest: RestShim, before: RequestHandler[], onError: ErrorHandler): http.RequestListener {
  // Each route's whole chain (`before`, then its own handlers), built once.
  const chains = new WeakMap<RequestHandler[], RequestHandler[]>();
  return (incoming, outgoing) => {
    const url = incoming.url ?? '';
    const req = incoming as Request;
    const res = outgoing as Response;
    const fail = (err: unknown) => onError(err, req, res, () => undefined);
    const hit = url.startsWith('/v1/') ? rest.match(incoming.method ?? '', url.slice(3)) : null;
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Record<string, unknown>;
    // Everything else: express's router, as app.handle runs it, without its setPrototypeOf (the classes did it).
    // The app's own last handlers answer every request; `done` is reached only by an error thrown in them.
    if (!hit) return (app.router as unknown as ExpressRouter).handle(req, res, (err) => fail(err ?? new Error('unanswered request')));
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

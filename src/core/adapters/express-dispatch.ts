import http from 'node:http';
import type { Express, Request, Response } from 'express';

/**
 * express 5's `app.handle`, taken apart for src/http/rest-lane.ts, which dispatches `/v1` API calls itself and hands
 * every other request to the app's router. What it relies on and express does not document: the steps of
 * `app.handle` (copied below, minus its `setPrototypeOf`), and `app.router.handle(req, res, done)` (the `router`
 * package's method). test/core/adapters.test.ts compares the setup with `app.handle`'s own on the installed express.
 */

/**
 * The request and response classes for `http.createServer`: Node's own, whose instances are born with the app's
 * prototypes (`app.request` / `app.response`, which lead back to Node's), where `app.handle` would set them on every
 * request: an object whose prototype changes after it is built loses V8's fast paths (bench/README.md, "The REST
 * lane").
 */
export function expressClasses(app: Express): {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
} {
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  return { IncomingMessage: Request, ServerResponse: Response as typeof http.ServerResponse };
}

/**
 * Sets a request up as `app.handle` does before its router runs (X-Powered-By as the app's setting is now, the
 * circular references, `res.locals`), for requests of the server's classes (expressClasses: no prototype to set).
 */
export function appHandleSetup(app: Express): (req: Request, res: Response) => void {
  const poweredBy = app.enabled('x-powered-by');
  return (req, res) => {
    if (poweredBy) res.setHeader('X-Powered-By', 'Express');
    req.res = res;
    res.req = req;
    res.locals = Object.create(null) as Record<string, unknown>;
  };
}

/** The app's router (`app.router`), called as `app.handle` calls it, on a request appHandleSetup set up. */
export function appRouter(app: Express): (req: Request, res: Response, done: (err?: unknown) => void) => void {
  const router = app.router as unknown as { handle(req: Request, res: Response, done: (err?: unknown) => void): void };
  return (req, res, done) => router.handle(req, res, done);
}

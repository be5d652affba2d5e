import type { RequestHandler, Response } from 'express';

/**
 * What GET /metrics calls a request (src/http/metrics.ts): the route's pattern as written in code, never the URL, so
 * ids never reach a label and the label set stays bounded. A route that is not an express route (the REST lane, static
 * assets, /graphql) names itself here; GraphQL over HTTP adds its operation type.
 */
const ROUTE = Symbol('metrics route');
const OPERATION = Symbol('graphql operation type');

type Labelled = Response & { [ROUTE]?: string; [OPERATION]?: string };

export function labelRoute(res: Response, route: string): void {
  (res as Labelled)[ROUTE] = route;
}

/** Middleware naming the route of every request it sees. */
export const routeLabel =
  (route: string): RequestHandler =>
  (_req, res, next) => {
    (res as Labelled)[ROUTE] = route;
    next();
  };

/** The GraphQL operation type (query, mutation, subscription) of a request at /graphql; `none` until one is known. */
export function labelOperation(res: Response, operation: string): void {
  (res as Labelled)[OPERATION] = operation;
}

export const routeOf = (res: Response): string | undefined => (res as Labelled)[ROUTE];
export const operationOf = (res: Response): string | undefined => (res as Labelled)[OPERATION];

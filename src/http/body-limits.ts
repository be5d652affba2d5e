import type { NextFunction, Request, Response } from 'express';
import { toSnake } from '../core/case';
import { MAX_JSON_DEPTH, MAX_QUERY_NESTING, nestedTooDeep as tooDeep, pathDeeperThan, queryTooDeep, textNesting } from '../core/input-limits';

/**
 * Refuses over-deep input right after the body is parsed, before anything walks it recursively: a JSON body
 * (REST: the body object is level 1) or a GraphQL request's variables (each variable's value is level 1), and a
 * GraphQL document whose brackets nest past MAX_QUERY_NESTING. One iterative pass, no recursion.
 */
export function bodyLimits(req: Request, _res: Response, next: NextFunction): void {
  const graphql = req.path === '/graphql';
  const body = req.body as unknown;
  if (Buffer.isBuffer(body)) return next(); // a raw body (gateway webhooks) is not walked
  if (graphql) {
    const b = (body ?? {}) as { query?: unknown; variables?: unknown };
    const q = req.method === 'GET' ? req.query : {};
    for (const text of [b.query, q.query]) {
      if (typeof text === 'string' && textNesting(text) > MAX_QUERY_NESTING) return next(queryTooDeep());
    }
    // GET carries variables and extensions as JSON text in the query string (bounded by the header size limit).
    for (const text of [q.variables, q.extensions]) {
      if (typeof text === 'string' && textNesting(text) > MAX_JSON_DEPTH + 1) return next(tooDeep(null));
    }
    // body -> variables -> a variable's value: the value may nest MAX_JSON_DEPTH levels.
    const at = pathDeeperThan(body, MAX_JSON_DEPTH + 2);
    if (at) return next(tooDeep(at[0] === 'variables' && typeof at[1] === 'string' ? toSnake(at[1]) : null));
    return next();
  }
  const at = pathDeeperThan(body, MAX_JSON_DEPTH);
  if (at) return next(tooDeep(typeof at[0] === 'string' ? at[0] : null));
  next();
}

import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { toSnake } from '../core/case';
import { DomainError } from '../core/errors';
import {
  MAX_JSON_DEPTH,
  MAX_QUERY_NESTING,
  nestedTooDeep as tooDeep,
  pathDeeperThan,
  queryTooDeep,
  textNesting,
} from '../core/input-limits';

/**
 * Refuses over-deep input right after the body is parsed, before anything walks it recursively: a JSON body
 * (REST: the body object is level 1) or a GraphQL request's variables (each variable's value is level 1), and a
 * GraphQL document whose brackets nest past MAX_QUERY_NESTING. One iterative pass, no recursion. Before that, a
 * query string that does not percent-decode to UTF-8 text (undecodableQuery). The text itself (NUL, lone surrogates
 * from JSON escapes) is judged per root field argument, on every transport (src/core/nul.ts).
 */
export function bodyLimits(req: Request, _res: Response, next: NextFunction): void {
  const bad = undecodableQuery(req.url);
  if (bad !== undefined) {
    return next(
      new DomainError(
        'parameter_invalid',
        `${bad ?? 'The query string'} is not valid percent-encoded UTF-8 text.`,
        bad,
      ),
    );
  }
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

/**
 * The query-string parameter whose value (or name) is not percent-encoded UTF-8 (`%FF`, `%ED%A0%80`: a surrogate's
 * bytes, `%E0%A4%A`, a stray `%`): its name, or null when the name itself is the undecodable part; undefined when
 * everything decodes. The query parser would keep such text as U+FFFD or as it is; REST and GraphQL GET refuse it
 * (400 `parameter_invalid`) instead. Read only when the query string has a `%` at all.
 */
function undecodableQuery(url: string): string | null | undefined {
  const q = url.indexOf('?');
  if (q < 0 || url.indexOf('%', q) < 0) return undefined;
  for (const part of url.slice(q + 1).split('&')) {
    if (!part.includes('%')) continue;
    try {
      decodeURIComponent(part);
    } catch {
      const eq = part.indexOf('=');
      try {
        return decodeURIComponent((eq < 0 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
      } catch {
        return null;
      }
    }
  }
  return undefined;
}

/** The `type` of body-parser's error when utf8Body refuses a body (src/http/request.ts answers it). */
export const BODY_NOT_UTF8 = 'entity.not.utf8';

/**
 * express.json's `verify`: a body whose charset is UTF-8 (every JSON body's, unless it names utf-16 or utf-32) must be
 * UTF-8. Its decoder would otherwise read invalid bytes as U+FFFD and the request would go on with text the client
 * never sent. One native pass over the bytes (`buffer.isUtf8`).
 */
export function utf8Body(_req: IncomingMessage, _res: ServerResponse, body: Buffer, encoding: string | null): void {
  if (encoding === 'utf-8' && !isUtf8(body)) {
    throw Object.assign(new Error('The request body is not valid UTF-8.'), { type: BODY_NOT_UTF8 });
  }
}

import { v7 as uuidv7 } from 'uuid';
import { request, HttpResult } from './app';

/** POST /graphql with the full HTTP result (status, headers, body), unlike `Client_.gql` which returns the body only. */
export function gqlRequest(
  baseUrl: string,
  key: string | undefined,
  query: string,
  variables?: Record<string, unknown>,
): Promise<HttpResult<any>> {
  return request(`${baseUrl}/graphql`, { key, body: { query, variables } });
}

/** A well-formed id that no record has. */
export const unknownId = () => uuidv7();

/** `req_` followed by 24 hex characters (src/http/request.ts). */
export const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/**
 * The parts of an error a client branches on, with the request id and the id itself taken out of the message,
 * so "another tenant's id" and "an unknown id" can be compared for equality.
 */
export function errorFingerprint(r: HttpResult, id: string) {
  const e = r.body?.error;
  return {
    status: r.status,
    contentType: r.headers.get('content-type'),
    keys: e ? Object.keys(e).sort() : null,
    type: e?.type,
    code: e?.code,
    param: e?.param,
    message: typeof e?.message === 'string' ? e.message.split(id).join('<id>') : e?.message,
    topLevelKeys: r.body && typeof r.body === 'object' ? Object.keys(r.body).sort() : null,
  };
}

/** The same for a GraphQL answer's first error. */
export function gqlErrorFingerprint(r: HttpResult<any>, id: string) {
  const e = r.body?.errors?.[0];
  const { requestId: _rid, ...ext } = (e?.extensions ?? {}) as Record<string, unknown>;
  return {
    status: r.status,
    errors: r.body?.errors?.length,
    data: r.body?.data,
    extensions: ext,
    path: e?.path,
    message: typeof e?.message === 'string' ? e.message.split(id).join('<id>') : e?.message,
  };
}

/** What must never reach a client: stack frames, source paths, SQL, driver errors. */
const LEAKS = [
  /\bat [\w.<>]+ \(/, // stack frame
  /\.(ts|js):\d+/,
  /node_modules/,
  /\bselect\b.+\bfrom\b/i,
  /\binsert into\b/i,
  /\bupdate\b.+\bset\b/i,
  /syntax error at or near/i,
  /invalid input syntax/i,
  // At a word's start: random gateway ids (prefix_ then base62) can spell "knex" inside them.
  /\b(?:pg_|postgres|mikro-?orm|knex)/i,
  /"stack"|stacktrace/i,
  /\brelation "/,
];

export function expectNoLeak(text: string): void {
  for (const re of LEAKS) {
    if (re.test(text)) throw new Error(`response leaks internals (${re}): ${text.slice(0, 500)}`);
  }
}

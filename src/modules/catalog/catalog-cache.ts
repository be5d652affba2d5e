import crypto from 'node:crypto';
import type { OperationDefinitionNode } from 'graphql';
import { Kind } from 'graphql';

/**
 * Which reads the catalog read cache (src/core/read-cache.ts) keeps, and under which key. Both transports key here,
 * from the request as parsed rather than as spelled, so `?limit=0100`, `?limit=100` and the same parameters in
 * another order are one entry, and so are GraphQL variables sent in another key order.
 */

/** Root query fields that read only catalog types (which link only to catalog types). */
const CATALOG_QUERY_FIELDS = new Set(['products', 'product', 'plan', 'price', 'productFamilies', 'productFamily']);

/** Whether a GraphQL operation reads the catalog and nothing else (so its answer moves only with the catalog version). */
export function isCatalogRead(operation: OperationDefinitionNode | null | undefined): operation is OperationDefinitionNode {
  return (
    !!operation &&
    operation.operation === 'query' &&
    operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && CATALOG_QUERY_FIELDS.has(s.name.value))
  );
}

/**
 * Values nested deeper than this are not keyed (the read is then simply not cached). Request bodies are refused
 * past 32 levels before they get here; this bound keeps the key builder's recursion safe on its own.
 */
export const MAX_KEY_DEPTH = 32;

class TooDeep extends Error {}

/** JSON with object keys sorted, so equal values give equal text whatever the order they were sent in. */
function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_KEY_DEPTH) throw new TooDeep();
  if (value === null || value === undefined) return 'null';
  if (typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  const o = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort()) {
    if (o[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(o[k], depth + 1)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * `<merchant>:<mode>:<sha-256 of the parts>`. The parts are hashed, so a key is short whatever the request's size.
 * Every part but the last is canonical JSON, which holds no raw newline, so the joined text is unambiguous.
 * Null when a part is nested too deep to key.
 */
function readKey(merchantId: string, mode: string, parts: unknown[], tail: string): string | null {
  const hash = crypto.createHash('sha256');
  try {
    for (const p of parts) hash.update(canonicalJson(p)).update('\n');
  } catch (err) {
    if (err instanceof TooDeep) return null;
    throw err;
  }
  return `${merchantId}:${mode}:${hash.update(tail).digest('hex')}`;
}

/**
 * Key of a REST catalog read: the route (`get /products/{id}`) and the GraphQL variables the shim parsed from the
 * path and query string (`parse`). Null when they cannot be parsed: the read then reports that error, uncached.
 */
export function restReadKey(
  merchantId: string,
  mode: string,
  route: { method: string; path: string },
  parse: () => Record<string, unknown>,
): string | null {
  let variables: Record<string, unknown>;
  try {
    variables = parse();
  } catch {
    return null;
  }
  return readKey(merchantId, mode, ['rest', route.method, route.path, variables], '');
}

/**
 * Key of a GraphQL catalog read: operation name, variables (canonical JSON) and the query text. Computed from the
 * raw request both where a hit is answered (before Apollo) and where an answer is stored (an Apollo plugin), so the
 * text is taken as sent rather than parsed.
 */
export function graphqlReadKey(merchantId: string, mode: string, operationName: unknown, query: string, variables: unknown): string | null {
  return readKey(merchantId, mode, ['graphql', operationName ?? null, variables ?? {}], query);
}

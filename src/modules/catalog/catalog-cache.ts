import crypto from 'node:crypto';
import type { OperationDefinitionNode } from 'graphql';
import { Kind } from 'graphql';
import { DomainError } from '../../core/errors';
// The same stable JSON as idempotency fingerprints (object keys sorted at every level, depth-bounded).
import { canonicalJson } from '../idempotency';

/**
 * Which reads the catalog read cache (src/core/read-cache.ts) keeps, and under which key. Both transports key here,
 * from the request as parsed rather than as spelled, so `?limit=0100`, `?limit=100` and the same parameters in
 * another order are one entry, and so are GraphQL variables sent in another key order.
 */

/** Root query fields that read only catalog types (which link only to catalog types). */
const CATALOG_QUERY_FIELDS = new Set([
  'products',
  'product',
  'plan',
  'price',
  'productFamilies',
  'productFamily',
  'usageRates',
]);

/** Whether a GraphQL operation reads the catalog and nothing else (so its answer moves only with the catalog version). */
export function isCatalogRead(
  operation: OperationDefinitionNode | null | undefined,
): operation is OperationDefinitionNode {
  return (
    !!operation &&
    operation.operation === 'query' &&
    operation.selectionSet.selections.every((s) => s.kind === Kind.FIELD && CATALOG_QUERY_FIELDS.has(s.name.value))
  );
}

/**
 * `<merchant>:<mode>:<sha-256 of the parts>`. The parts are hashed, so a key is short whatever the request's size.
 * Every part but the last is canonical JSON, which holds no raw newline, so the joined text is unambiguous.
 * Null when a part is nested too deep to key.
 */
function readKey(merchantId: string, mode: string, parts: unknown[], tail: string): string | null {
  const hash = crypto.createHash('sha256');
  try {
    // Depth 0: a part is the variables object itself, one level above the values the input limits count.
    for (const p of parts) hash.update(canonicalJson(p, 0)).update('\n');
  } catch (err) {
    if (err instanceof DomainError) return null; // nested too deep to key (refused earlier on every request path)
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
export function graphqlReadKey(
  merchantId: string,
  mode: string,
  operationName: unknown,
  query: string,
  variables: unknown,
): string | null {
  return readKey(merchantId, mode, ['graphql', operationName ?? null, variables ?? {}], query);
}

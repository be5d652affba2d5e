import { useEffect } from 'react';
import { useClient, type AnyVariables, type TypedDocumentNode } from 'urql';

/**
 * Asks for the next page of a list while the reader looks at this one, so "Next" renders it from urql's cache at once
 * instead of waiting for the server (docs/dashboard.md). `variables` must be the ones the page's own query uses: the
 * next page's are the same with `after` moved on, so the cache knows them.
 */
export function usePrefetchNext<Data, Variables extends AnyVariables & { after?: string | null }>(
  query: TypedDocumentNode<Data, Variables>,
  variables: Variables,
  pageInfo: { hasNextPage: boolean; endCursor?: string | null } | null | undefined,
): void {
  const client = useClient();
  const cursor = pageInfo?.hasNextPage ? (pageInfo.endCursor ?? null) : null;
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (!cursor) return;
    // Cache-first: a page already fetched is not asked for again; its answer stays in the cache for "Next".
    const run = client.query(query, { ...variables, after: cursor }).subscribe(() => undefined);
    return () => run.unsubscribe();
    // `key` stands for `variables` (a new object each render).
  }, [client, query, cursor, key]);
}

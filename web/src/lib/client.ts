import { Client, cacheExchange, fetchExchange, subscriptionExchange } from 'urql';
import { createClient as createWsClient } from 'graphql-ws';

/**
 * The one way both front ends talk to Cadence: the public GraphQL API at /graphql with a bearer token (a merchant's
 * secret key, or a portal session's token). Queries and mutations go over HTTP; subscriptions over graphql-ws on
 * the same path, the token in `connection_init` as the service expects. urql's document cache refetches what a
 * mutation's result types touch.
 */
export function makeClient(token: string): { client: Client; dispose: () => void } {
  const wsUrl = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  const ws = createWsClient({
    url: wsUrl,
    lazy: true,
    connectionParams: { Authorization: `Bearer ${token}` },
    retryAttempts: 5,
  });
  const client = new Client({
    url: '/graphql',
    preferGetMethod: false,
    requestPolicy: 'cache-and-network',
    fetchOptions: () => ({ headers: { Authorization: `Bearer ${token}` } }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              const unsubscribe = ws.subscribe(input, sink);
              return { unsubscribe };
            },
          };
        },
      }),
    ],
  });
  return { client, dispose: () => void ws.dispose() };
}

/** The demo key the service put in the page (embedded demo setting only), else null. */
export function demoKeyOfPage(): string | null {
  const content = document.querySelector('meta[name="cadence-demo-key"]')?.getAttribute('content');
  return content ? content : null;
}

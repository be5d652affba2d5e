import { Client as WsClient, ClientOptions, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { Harness } from './index';

export type WsClientOptions = Omit<ClientOptions, 'url' | 'webSocketImpl' | 'connectionParams'> & {
  /** Another service's base URL (a second process on the same database); default: the harness's. */
  baseUrl?: string;
};

/**
 * A maker of graphql-ws clients to `/graphql`, the key (if any) sent in `connection_init`, no reconnection attempts;
 * every client it made is disposed after the file's tests.
 */
export function useWsClients(h: Harness): (key: string | null, opts?: WsClientOptions) => WsClient {
  const clients: WsClient[] = [];
  h.cleanup(() => Promise.all(clients.map((c) => c.dispose())));
  return (key, { baseUrl, ...opts } = {}) => {
    const client = createClient({
      url: `${(baseUrl ?? h.app.url).replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: key ? { Authorization: `Bearer ${key}` } : {},
      retryAttempts: 0,
      ...opts,
    });
    clients.push(client);
    return client;
  };
}

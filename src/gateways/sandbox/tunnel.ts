import type http from 'node:http';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { logger } from '../../core/logger';
import type { TlsIdentity } from './tls-identity';

/**
 * The sandbox as the HTTPS proxy of a merchant's process (docs/sandbox.md, "Pointing the official SDKs at the
 * sandbox"). The Razorpay Node SDK has no public option for its base URL (https://api.razorpay.com is fixed in its
 * constructor), but its HTTP client, axios, honours the standard `HTTPS_PROXY` / `NO_PROXY` variables: for an https
 * URL it asks the proxy to `CONNECT api.razorpay.com:443` and speaks TLS to that host through the tunnel. The sandbox
 * accepts that one tunnel, answers the TLS handshake with its own certificate for api.razorpay.com (which the
 * merchant's process trusts through NODE_EXTRA_CA_CERTS, a Node setting) and serves its Razorpay flavour on it, at the
 * real paths (/v1/...). A tunnel to any other host is refused: the sandbox forwards nothing anywhere.
 */

export const RAZORPAY_API_HOST = 'api.razorpay.com';

/** Sockets whose requests are Razorpay API calls: the TLS ends of accepted tunnels. */
const razorpayTunnels = new WeakSet<object>();

/**
 * Answers a CONNECT on `server`: a tunnel to api.razorpay.com:443 is opened and served, any other refused. Answers a
 * function that ends the open tunnels (the server's own closeAllConnections does not see them).
 */
export function acceptGatewayTunnels(server: http.Server, identity: TlsIdentity): () => void {
  const secureContext = tls.createSecureContext({ cert: identity.cert, key: identity.key });
  const open = new Set<Duplex>();
  server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (err) => logger.debug({ err }, 'sandbox tunnel: client socket error'));
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    const [host, port = '443'] = (req.url ?? '').toLowerCase().split(':');
    if (host !== identity.host || port !== '443') {
      const body = `The Cadence gateway sandbox only stands in for https://${identity.host}; it opens no tunnel to ${req.url} (list that host in NO_PROXY).\n`;
      socket.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.unshift(head);
    const secure = new tls.TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ['http/1.1'] });
    secure.on('error', (err) => logger.debug({ err }, 'sandbox tunnel: TLS error (is the certificate trusted?)'));
    razorpayTunnels.add(secure);
    server.emit('connection', secure);
  });
  return () => {
    for (const socket of open) socket.destroy();
  };
}

/** An absolute-form request line (a client using the sandbox as a plain forward proxy): `GET https://host/path`. */
const ABSOLUTE = /^(https?):\/\/([^/?#]+)([^#]*)$/i;

/**
 * Wraps the sandbox's app (before express parses the URL): a request that came through a Razorpay tunnel, or as an
 * absolute-form request for https://api.razorpay.com/..., is routed to the Razorpay flavour (/razorpay/v1/...). An
 * absolute-form request for another host is refused like such a tunnel.
 */
export function routeGatewayHosts(app: http.RequestListener): http.RequestListener {
  return (req, res) => {
    const url = req.url ?? '/';
    const absolute = ABSOLUTE.exec(url);
    if (absolute) {
      const host = absolute[2].toLowerCase().replace(/:(443|80)$/, '');
      if (host !== RAZORPAY_API_HOST) {
        const body = `The Cadence gateway sandbox only stands in for https://${RAZORPAY_API_HOST}; it forwards no request to ${host}.\n`;
        res.writeHead(403, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) }).end(body);
        return;
      }
      req.url = `/razorpay${absolute[3].startsWith('/') ? absolute[3] : `/${absolute[3]}`}`;
    } else if (razorpayTunnels.has(req.socket)) {
      req.url = `/razorpay${url}`;
    }
    void app(req, res);
  };
}

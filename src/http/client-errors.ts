import type http from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError, errorBody, graphQLErrorBody } from '../core/errors';
import { newRequestId } from './request';

/**
 * Requests Node's HTTP parser refuses before express sees them (a URL and headers over its 16 KiB limit, a malformed
 * request line or header) answer in the API's error shape too, instead of Node's bare 431/400 with no body:
 * too large is `request_too_large` (413: the API's code for an oversized request; it has no 431), malformed is
 * 400 `parameter_invalid`. Timeouts and resets keep Node's handling.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    const code = err.code ?? '';
    if (!code.startsWith('HPE_') || !socket.writable) {
      if (code === 'ECONNRESET' || !socket.writable) socket.destroy();
      else socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const error =
      code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('request_too_large', 'The request line and headers are larger than 16 KiB.')
        : new DomainError('parameter_invalid', 'Malformed HTTP request.');
    const requestId = newRequestId();
    const graphql = /^[A-Z]+ \/graphql[?# ]/.test(err.rawPacket?.subarray(0, 64).toString('latin1') ?? '');
    const body = JSON.stringify(graphql ? graphQLErrorBody(error, requestId) : errorBody(error, requestId));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

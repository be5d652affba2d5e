/**
 * Idle keep-alive connections (docs/production.md, "Behind a load balancer"): the API keeps them open longer than a
 * proxy's idle timeout, so a proxy (or a client) reusing one after a few quiet seconds is answered, never reset.
 */
import net from 'node:net';
import { loadConfig } from '../../src/config';
import { useHarness } from '../harness';

const h = useHarness();
jest.setTimeout(30_000);

/** Sends one GET on `socket` and resolves with the raw response head once it has arrived. */
function get(socket: net.Socket, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const onData = (chunk: Buffer) => {
      got += chunk.toString('latin1');
      if (got.includes('\r\n\r\n')) {
        socket.off('data', onData).off('close', onClose);
        resolve(got.slice(0, got.indexOf('\r\n\r\n')));
      }
    };
    const onClose = () => reject(new Error(`connection closed before the answer to ${path}`));
    socket.on('data', onData).once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n`);
  });
}

it('announces its idle timeout and answers on a connection left idle past Node’s 5 s default', async () => {
  const { port } = new URL(h.app.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const first = await get(socket, '/healthz');
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).toMatch(/\r\nKeep-Alive: timeout=65(\r\n|$)/i);
    await new Promise((r) => setTimeout(r, 6_500));
    expect(socket.destroyed).toBe(false);
    expect(await get(socket, '/healthz')).toMatch(/^HTTP\/1\.1 200/);
  } finally {
    socket.destroy();
  }
});

it('HTTP_KEEP_ALIVE_SECONDS sets it; a value below 1 s is taken as 1 s', () => {
  expect(loadConfig({}).httpKeepAliveSeconds).toBe(65);
  expect(loadConfig({ HTTP_KEEP_ALIVE_SECONDS: '120' }).httpKeepAliveSeconds).toBe(120);
  expect(loadConfig({ HTTP_KEEP_ALIVE_SECONDS: '0' }).httpKeepAliveSeconds).toBe(1);
  expect(() => loadConfig({ HTTP_KEEP_ALIVE_SECONDS: 'soon' })).toThrow(/HTTP_KEEP_ALIVE_SECONDS/);
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookSender } from '../../src/modules/webhooks/sender';

/** The HTTP side of an attempt: only 2xx in time is success; redirects are not followed; answers are truncated. */
let server: http.Server;
let url: string;
let hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url!);
    req.resume();
    if (req.url === '/ok') return void res.end('fine');
    if (req.url === '/created') return void res.writeHead(201).end();
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
    if (req.url === '/big') return void res.writeHead(500).end('x'.repeat(200_000));
    if (req.url === '/slow-body') {
      res.writeHead(200);
      res.write('partial');
      return; // never ends
    }
    // /hang: no answer at all
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});
beforeEach(() => (hits = []));

// Tests that check what an answer means get a patient sender, so a loaded machine cannot turn the answer into a
// timeout; only the timeout tests use short limits. The server is on 127.0.0.1: these senders allow private networks.
const allow = { allowPrivateNetworks: true };
const sender = new WebhookSender(15_000, allow);
const hasty = new WebhookSender(400, allow);
const bodyLimited = new WebhookSender(2_000, allow);
const strict = new WebhookSender(15_000);
afterAll(() => [sender, hasty, bodyLimited, strict].forEach((s) => s.close()));
const post = (s: WebhookSender, path: string, live = false) =>
  s.send(`${url}${path}`, { 'content-type': 'application/json' }, '{}', live);
const send = (path: string, live = false) => post(sender, path, live);

it('treats 2xx as success', async () => {
  expect(await send('/ok')).toMatchObject({ ok: true, status: 200, error: null, body: 'fine' });
  expect(await send('/created')).toMatchObject({ ok: true, status: 201, error: null, body: '' });
});

it('does not follow redirects: a 3xx is a failed attempt', async () => {
  expect(await send('/redirect')).toMatchObject({ ok: false, status: 302, error: 'HTTP 302' });
  expect(hits).toEqual(['/redirect']);
});

it('keeps the first 1,000 characters of an answer', async () => {
  const r = await send('/big');
  expect(r).toMatchObject({ ok: false, status: 500, error: 'HTTP 500' });
  expect(r.body).toHaveLength(1000);
});

it('gives up after the timeout', async () => {
  const r = await post(hasty, '/hang');
  expect(r).toMatchObject({ ok: false, status: null, error: 'timed out after 400 ms', body: null });
  expect(r.latencyMs).toBeGreaterThanOrEqual(390);
  // Its own 400 ms, not the server (which never answers) nor the 15 s of another sender; generous for a loaded
  // machine, where a timer can fire seconds late (a CI run saw 2.2 s).
  expect(r.latencyMs).toBeLessThan(10_000);
  // a 2xx status in time counts even if the body never finishes
  const partial = await post(bodyLimited, '/slow-body');
  expect(partial).toMatchObject({ ok: true, status: 200, body: 'partial' });
  expect(partial.latencyMs).toBeGreaterThanOrEqual(1990);
});

it('reports connection failures', async () => {
  const r = await sender.send('http://127.0.0.1:9/nothing', {}, '{}', false);
  expect(r).toMatchObject({ ok: false, status: null, error: 'connection refused (ECONNREFUSED)' });
});

it('refuses sends of either mode to loopback, private and internal hosts unconnected, unless allowed', async () => {
  const targets = [`${url}/ok`, 'https://127.0.0.1/ok', 'https://[::1]/ok', 'https://10.9.8.7/ok'];
  targets.push(
    'https://169.254.169.254/',
    'https://localhost/ok',
    'https://metadata.google.internal/',
    'http://[::ffff:7f00:1]/ok',
  );
  for (const live of [false, true]) {
    for (const target of targets) {
      const r = await strict.send(target, {}, '{}', live);
      expect([live, target, r.ok, r.error]).toEqual([live, target, false, expect.stringMatching(/^refused: /)]);
    }
  }
  expect(hits).toEqual([]);
  // allowed: test endpoints reach the server; live endpoints still need https
  expect(await send('/ok')).toMatchObject({ ok: true, status: 200 });
  const live = await send('/ok', true);
  expect(live).toMatchObject({ ok: false, status: null, error: 'refused: live endpoints must use https.' });
  expect(hits).toEqual(['/ok']);
});

it('checks the address a name resolves to on every connection, over http and https', async () => {
  const port = new URL(url).port;
  const toLoopback = { lookupAll: async () => [{ address: '127.0.0.1', family: 4 }] };
  const guarded = new WebhookSender(15_000, toLoopback);
  const open = new WebhookSender(15_000, { ...toLoopback, allowPrivateNetworks: true });
  try {
    for (const target of [`http://hooks.example.com:${port}/ok`, `https://hooks.example.com:${port}/ok`]) {
      const r = await guarded.send(target, {}, '{}', false);
      const error =
        'refused: hooks.example.com resolves to 127.0.0.1, a loopback, private, link-local or reserved address';
      expect([target, r.ok, r.error]).toEqual([target, false, error]);
    }
    expect(hits).toEqual([]);
    const r = await open.send(`http://hooks.example.com:${port}/ok`, {}, '{}', false);
    expect(r).toMatchObject({ ok: true, status: 200 });
    expect(hits).toEqual(['/ok']);
  } finally {
    guarded.close();
    open.close();
  }
});

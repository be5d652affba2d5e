import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config';
import { logger } from '../../src/core/logger';
import { useHostLookup } from '../../src/modules/webhooks/address';
import { eventually, Receiver, TestMerchant, useHarness } from '../harness';
import { REQUEST_ID } from '../harness/http';
import { emitEvent } from './helpers';

/**
 * No SSRF (docs/webhooks.md): unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is on (by default only on the embedded
 * database), endpoints of either mode may neither name nor resolve to loopback, private, link-local, unique-local,
 * unspecified or cloud metadata addresses: refused when created, and again on every connection when delivering.
 */

const DB = 'postgresql://postgres@127.0.0.1:5432/postgres';
const MODES = ['test', 'live'] as const;
const scheme = (mode: 'test' | 'live') => (mode === 'live' ? 'https' : 'http');
const CREATE = 'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id } }';

describe('WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  const allowed = (env: NodeJS.ProcessEnv) => loadConfig(env).webhookAllowPrivateNetworks;

  it('is on by default only on the embedded database (DATABASE_URL unset), and can be set either way', () => {
    expect([allowed({}), allowed({ DATABASE_URL: '' }), allowed({ DATABASE_URL: DB })]).toEqual([true, true, false]);
    expect(allowed({ DATABASE_URL: DB, WEBHOOK_ALLOW_PRIVATE_NETWORKS: '' })).toBe(false);
    for (const on of ['on', 'true', '1', 'ON', ' True ']) {
      expect([on, allowed({ DATABASE_URL: DB, WEBHOOK_ALLOW_PRIVATE_NETWORKS: on })]).toEqual([on, true]);
    }
    for (const off of ['off', 'false', '0', 'Off']) {
      expect([off, allowed({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: off })]).toEqual([off, false]);
    }
    const bad = () => allowed({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'yes' });
    expect(bad).toThrow('WEBHOOK_ALLOW_PRIVATE_NETWORKS must be on or off (or true/false, 1/0), got "yes"');
  });
});

describe('with private networks refused (the default on DATABASE_URL)', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => void (warn = jest.spyOn(logger, 'warn')));
  const h = useHarness({ webhookAllowPrivateNetworks: false });
  let rx: Receiver;

  /** Names the tests resolve. The rebind- names answer a public address until `rebound`, then their private one. */
  const NAMES: Record<string, string[]> = {
    'hooks.example.com': ['93.184.216.34'],
    'private.example.com': ['10.0.0.7'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'meta.example.com': ['169.254.169.254'],
    'ula.example.com': ['fd00:ec2::254'],
    'mapped.example.com': ['::ffff:192.168.0.1'],
    'v6loop.example.com': ['::1'],
  };
  const REBIND: Record<string, string> = {
    'rebind-loop.example.com': '127.0.0.1',
    'rebind-private.example.com': '10.0.0.8',
    'rebind-meta.example.com': '169.254.169.254',
    'rebind-v6.example.com': '::1',
  };
  let rebound = false;

  beforeAll(async () => {
    useHostLookup(async (host) => {
      const answers = REBIND[host] ? [rebound ? REBIND[host] : '93.184.216.34'] : NAMES[host];
      if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    });
    rx = await h.receiver();
  });
  afterAll(() => {
    useHostLookup(null);
    warn.mockRestore();
  });

  const sql = (text: string, params: unknown[]) => h.app.orm.em.getConnection().execute(text, params);
  const stored = async (m: TestMerchant) =>
    (await sql('select count(*)::int as n from webhook_endpoints where merchant_id = ?', [m.id]))[0].n;

  it('does not warn at start-up', () => {
    expect(warn).not.toHaveBeenCalledWith(expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_NETWORKS'));
  });

  it('refuses loopback, private, link-local, unspecified and metadata hosts in both modes; stores nothing', async () => {
    const m = await h.merchant();
    const hosts = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '[::1]',
      '[fc00::1]',
      '[fe80::1]',
      '[::]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[::ffff:169.254.169.254]',
      'metadata.google.internal',
      'localhost',
      // the same in disguise, and their relatives
      '127.1.2.3',
      '172.31.255.255',
      '192.168.100.100',
      '127.1',
      '2130706433',
      '0x7f.0.0.1',
      '[::7f00:1]',
      '[fd00:ec2::254]',
      '100.100.100.200',
      'LOCALHOST.',
      'app.localhost',
      'metadata.goog',
      'metadata',
      'instance-data',
      'instance-data.ec2.internal',
      'metadata.google.internal.',
      'printer.local',
      // names that resolve to such addresses now
      'private.example.com',
      'mixed.example.com',
      'meta.example.com',
      'ula.example.com',
      'mapped.example.com',
      'v6loop.example.com',
    ];
    for (const mode of MODES) {
      for (const host of hosts) {
        const url = `${scheme(mode)}://${host}:8443/hook`;
        const r = await m[mode].post('/webhooks/endpoints', { url, mode });
        expect([url, r.status, r.body.error?.type, r.body.error?.code, r.body.error?.param]).toEqual([
          url,
          400,
          'invalid_request_error',
          'parameter_invalid',
          'url',
        ]);
        expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message', 'param', 'request_id', 'type']);
        expect(r.body.error.message).toMatch(/reachable on the public internet/);
        expect(r.body.error.request_id).toMatch(REQUEST_ID);
        expect(r.headers.get('request-id')).toBe(r.body.error.request_id);
      }
      expect((await m[mode].get('/webhooks/endpoints')).body.data).toEqual([]);
    }
    expect(await stored(m)).toBe(0);
  });

  it('answers GraphQL with the same error, storing nothing', async () => {
    const m = await h.merchant();
    for (const mode of MODES) {
      for (const host of ['127.0.0.1', '[::ffff:169.254.169.254]', 'metadata.google.internal', 'private.example.com']) {
        const url = `${scheme(mode)}://${host}/hook`;
        const r = await h.graphql(m.keys[mode], CREATE, { input: { url, mode: mode.toUpperCase() } });
        expect([url, r.body.data]).toEqual([url, null]);
        expect(r.body.errors[0].extensions).toMatchObject({
          code: 'parameter_invalid',
          type: 'invalid_request_error',
          param: 'url',
          http: { status: 400 },
        });
      }
    }
    expect(await stored(m)).toBe(0);
  });

  it('takes public addresses and names, and names that do not resolve yet, in both modes', async () => {
    const m = await h.merchant();
    for (const mode of MODES) {
      for (const host of ['hooks.example.com', '93.184.216.34', '[2606:4700:4700::1111]', 'later.example.org']) {
        const url = `${scheme(mode)}://${host}/hook`;
        const r = await m[mode].post('/webhooks/endpoints', { url, mode });
        expect([url, r.status, r.body.mode]).toEqual([url, 201, mode]);
      }
    }
    // live endpoints still need https
    const http_ = await m.live.post('/webhooks/endpoints', { url: 'http://hooks.example.com/hook', mode: 'live' });
    expect([http_.status, http_.body.error.code, http_.body.error.param]).toEqual([400, 'parameter_invalid', 'url']);
  });

  it('refuses at delivery, unconnected, names that now resolve to private addresses (DNS rebinding)', async () => {
    let connections = 0;
    const count = () => void connections++;
    rx.server.on('connection', count);
    h.cleanup(() => rx.server.off('connection', count));
    const port = new URL(rx.url).port;
    const m = await h.merchant();
    for (const mode of MODES) {
      for (const host of Object.keys(REBIND)) {
        const r = await m[mode].post('/webhooks/endpoints', { url: `${scheme(mode)}://${host}:${port}/hook`, mode });
        expect([host, r.status]).toEqual([host, 201]);
      }
      // and one stored while private networks were allowed, pointing straight at the receiver
      await sql(
        `insert into webhook_endpoints
           (id, created_at, merchant_id, mode, url, enabled, enabled_events, secret_sealed, updated_at)
         select gen_random_uuid(), now() - interval '1 minute', merchant_id, mode, ?, true, '["*"]', secret_sealed, now()
         from webhook_endpoints where merchant_id = ? and mode = ? limit 1`,
        [`${scheme(mode)}://127.0.0.1:${port}/hook`, m.id, mode],
      );
    }
    rebound = true;
    try {
      for (const mode of MODES) await emitEvent(h.app, m.id, mode, 'payment.succeeded');
      await h.app.app.services.delivery.dispatcher.drain();
      for (const mode of MODES) {
        let log: any[] = [];
        await eventually(
          async () => {
            log = (await m[mode].get('/webhooks/deliveries')).body.data;
            return log.length === 5 && log.every((d) => d.attempts === 1);
          },
          10_000,
          `the ${mode}-mode attempts`,
        );
        for (const d of log) {
          expect(d).toMatchObject({ status: 'pending', attempts: 1, response_status: null });
          expect(d.error).toMatch(/^refused: .*(127\.0\.0\.1|10\.0\.0\.8|169\.254\.169\.254|::1)/);
          expect(d.attempt_log.map((a: any) => [a.status ?? null, a.response_body])).toEqual([[null, null]]);
        }
      }
      expect(connections).toBe(0);
      expect(rx.received).toEqual([]);
    } finally {
      rebound = false;
    }
  });
});

describe('with private networks allowed (development; the harness default)', () => {
  let warn: jest.SpyInstance;
  beforeAll(() => void (warn = jest.spyOn(logger, 'warn')));
  afterAll(() => warn.mockRestore());
  const h = useHarness();

  it('warns at start-up, since DATABASE_URL is set', () => {
    const warning = expect.stringContaining('WEBHOOK_ALLOW_PRIVATE_NETWORKS is on with DATABASE_URL set');
    expect(warn).toHaveBeenCalledWith(warning);
  });

  it('delivers to a test endpoint on 127.0.0.1, and takes private live endpoints (https only)', async () => {
    const rx = await h.receiver();
    const m = await h.merchant();
    const ep = await m.test.post('/webhooks/endpoints', { url: `${rx.url}/dev`, mode: 'test' });
    expect(ep.status).toBe(201);
    await m.test.post('/webhooks/trigger-test');
    await rx.waitFor(1, 10_000);
    expect(rx.received.map((r) => r.path)).toEqual(['/dev']);
    const live = await m.live.post('/webhooks/endpoints', { url: 'https://10.1.2.3/hook', mode: 'live' });
    expect([live.status, live.body.mode]).toEqual([201, 'live']);
    const plain = await m.live.post('/webhooks/endpoints', { url: `${rx.url}/live`, mode: 'live' });
    expect([plain.status, plain.body.error.code, plain.body.error.param]).toEqual([400, 'parameter_invalid', 'url']);
  });

  it('never follows a redirect, here to the metadata address of a private server', async () => {
    const rx = await h.receiver();
    const hits: string[] = [];
    const redirector = http.createServer((req, res) => {
      hits.push(req.url!);
      req.resume();
      res.writeHead(302, { location: `${rx.url}/latest/meta-data/` }).end('moved');
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', r));
    h.cleanup(() => new Promise((r) => redirector.close(r)));
    const m = await h.merchant();
    const port = (redirector.address() as AddressInfo).port;
    await m.test.post('/webhooks/endpoints', { url: `http://127.0.0.1:${port}/hook`, mode: 'test' });
    const d = (await m.test.post('/webhooks/trigger-test')).body.deliveries[0];
    let got: any;
    await eventually(
      async () => {
        got = (await m.test.get(`/webhooks/deliveries/${d.id}`)).body;
        return got.attempts === 1;
      },
      10_000,
      'the attempt',
    );
    expect(got).toMatchObject({ status: 'pending', response_status: 302, error: 'HTTP 302' });
    expect(hits).toEqual(['/hook']);
    expect(rx.received).toEqual([]);
  });
});

import { ChildProcess, execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { main, parseDuration } from '../../src/cli/cadence';
import { TEST_EVENT_TYPES } from '../../src/modules/webhooks';
import { ADMIN_TOKEN, eventually, Receiver, request, sleep, TestMerchant, useHarness } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect, createPayment, pay } from '../payments/helpers';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'cadence.js'); // built by `npm test`

jest.setTimeout(120_000); // processes spawned one after another

const h = useHarness();
const ws = useWsClients(h);

/** The built binary, against the harness's service; no key or token unless given. */
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, CADENCE_URL: h.app.url, ...env },
    timeout: 60_000,
  });

/** The CLI's main function in this process (for many calls: a process per call is slow on a busy machine). */
async function inProcess(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { CADENCE_URL: h.app.url, ...env },
    tty: false,
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}

/** Its exit code and output, whether it succeeded or not. */
async function outcome(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await cli(args, env);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let m: TestMerchant;
let rx: Receiver;
beforeAll(async () => {
  m = await h.merchant();
  rx = await h.receiver();
});

describe('help, usage and exit codes', () => {
  it('runs as `npx cadence` from the repository root (the package bin)', async () => {
    const { stdout } = await run('npm', ['exec', '--no', '--', 'cadence', '--help'], { cwd: ROOT, timeout: 60_000 });
    expect(stdout).toContain('Usage: cadence <command>');
  });

  it('prints help per command with exit 0, and refuses a wrong command line with exit 2', async () => {
    for (const command of ['listen', 'trigger', 'clock', 'merchants', 'keys']) {
      const r = await outcome([command, '--help']);
      expect([command, r.code, r.stdout]).toEqual([command, 0, expect.stringContaining(`cadence ${command}`)]);
    }
    expect((await outcome([])).code).toBe(2);
    expect(await outcome(['frobnicate'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('Unknown command'),
    });
    expect(await outcome(['listen'], { CADENCE_API_KEY: m.keys.test })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--forward-to'),
    });
    expect(await outcome(['trigger', '--bogus'], { CADENCE_API_KEY: m.keys.test })).toMatchObject({ code: 2 });
    expect(await outcome(['trigger'])).toMatchObject({ code: 2, stderr: expect.stringContaining('CADENCE_API_KEY') });
    expect(await outcome(['clock', 'advance', 'soon'], { CADENCE_API_KEY: m.keys.test })).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('not a duration'),
    });
  });

  it('reports a bad key with the service’s message and exit 1', async () => {
    const r = await outcome(['trigger', 'payment.succeeded', '--api-key', 'sk_test_not_a_real_key_000000000000000000']);
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining('invalid_api_key') });
    const listen = await outcome(['listen', '--forward-to', rx.url], { CADENCE_API_KEY: 'sk_test_nope' });
    expect(listen).toMatchObject({ code: 1, stderr: expect.stringContaining('invalid_api_key') });
  });

  it('reports a service it cannot reach with exit 1', async () => {
    const r = await outcome(['clock', '--url', 'http://127.0.0.1:9'], { CADENCE_API_KEY: m.keys.test });
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining('Could not reach') });
  });

  it('reads durations', () => {
    expect(['30d', '12h', '90m', '3600s', '2w', '1d12h', '45'].map(parseDuration)).toEqual([
      2_592_000, 43_200, 5400, 3600, 1_209_600, 129_600, 45,
    ]);
    expect(['', '0', '0s', '3x', 'd', '1.5d', '-1d', '10d5'].map(parseDuration)).toEqual(Array(8).fill(null));
  });
});

describe('cadence trigger', () => {
  it('sends every event kind, each with a sample object of its resource, to the endpoints that take it', async () => {
    const fresh = await h.merchant();
    const ep = (await fresh.test.post('/webhooks/endpoints', { url: `${rx.url}/all-kinds`, mode: 'test' })).body;
    const answers = [];
    for (const type of TEST_EVENT_TYPES)
      answers.push(await inProcess(['trigger', type, '--json'], { CADENCE_API_KEY: fresh.keys.test }));
    const ids = answers.map((a, i) => {
      expect(a.code).toBe(0);
      const body = JSON.parse(a.stdout);
      expect(body).toMatchObject({ type: TEST_EVENT_TYPES[i], deliveries: [{ endpoint_id: ep.id }] });
      return body.event_id as string;
    });
    const seen = () => rx.received.filter((r) => r.path === '/all-kinds');
    await eventually(async () => seen().length >= TEST_EVENT_TYPES.length, 20_000, 'every kind delivered');
    const resourceOf: Record<string, string> = {
      payment: 'payment',
      subscription: 'subscription',
      invoice: 'invoice',
      credit_note: 'credit_note',
      // An e-invoice's events carry the document registered (docs/india.md): the sample is an invoice.
      e_invoice: 'invoice',
      webhook_endpoint: 'webhook_endpoint',
    };
    for (const r of seen()) {
      const event = new Webhook(ep.secret).verify(r.body, r.headers) as any;
      expect(ids).toContain(event.id);
      expect(event).toMatchObject({ object: 'event', livemode: false });
      expect(event.data.object.object).toBe(resourceOf[event.type.split('.')[0]]);
      expect(event.data.object.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(new Set(seen().map((r) => JSON.parse(r.body).type))).toEqual(new Set(TEST_EVENT_TYPES));
    // The human line by default.
    const plain = await cli(['trigger', 'invoice.paid'], { CADENCE_API_KEY: fresh.keys.test });
    expect(plain.stdout).toMatch(/^Triggered invoice\.paid \(event [0-9a-f-]{36}\): 1 webhook delivery/);
  });

  it('fails on an unknown kind with the service’s parameter_invalid and exit 1; live keys are refused', async () => {
    const r = await outcome(['trigger', 'payment.teleported'], { CADENCE_API_KEY: m.keys.test });
    expect(r).toMatchObject({ code: 1, stderr: expect.stringContaining('parameter_invalid') });
    expect(r.stderr).toContain('payment.teleported');
    const rest = await m.test.post('/webhooks/trigger-test', { type: 'payment.teleported' });
    expect([rest.status, rest.body.error.code, rest.body.error.param]).toEqual([400, 'parameter_invalid', 'type']);
    const live = await outcome(['trigger', 'payment.failed'], { CADENCE_API_KEY: m.keys.live });
    expect(live).toMatchObject({ code: 1, stderr: expect.stringContaining('test_mode_only') });
  });
});

describe('cadence clock', () => {
  it('shows the test clock and advances it by a duration', async () => {
    const fresh = await h.merchant();
    const env = { CADENCE_API_KEY: fresh.keys.test };
    const before = await h.clock.now(fresh);
    const shown = await cli(['clock'], env);
    expect(shown.stdout).toMatch(/^Test clock: \d{4}-\d\d-\d\dT/);
    const advanced = await cli(['clock', 'advance', '30d', '--json'], env);
    const now = new Date(JSON.parse(advanced.stdout).now);
    const moved = now.getTime() - before.getTime();
    expect(moved).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(moved).toBeLessThan(30 * 86_400_000 + 60_000);
    expect((await h.clock.now(fresh)).getTime()).toBeGreaterThanOrEqual(now.getTime());
    // Beyond the service's 366 days a call: made of several calls.
    const far = JSON.parse((await cli(['clock', 'advance', '400d', '--json'], env)).stdout);
    expect(new Date(far.now).getTime() - now.getTime()).toBeGreaterThanOrEqual(400 * 86_400_000);
    const live = await outcome(['clock', 'advance', '1h'], { CADENCE_API_KEY: fresh.keys.live });
    expect(live).toMatchObject({ code: 1, stderr: expect.stringContaining('test_mode_only') });
  });
});

describe('cadence merchants create and keys roll', () => {
  it('creates a merchant through the admin API, whose keys work, and rolls a key', async () => {
    const created = JSON.parse(
      (await cli(['merchants', 'create', '--name', 'CLI Co', '--state-code', '27'], { ADMIN_TOKEN })).stdout,
    );
    expect(created).toMatchObject({ object: 'merchant', name: 'CLI Co', state_code: '27' });
    expect(created.api_keys.test).toMatch(/^sk_test_[0-9A-Za-z]{40}$/);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.live })).status).toBe(200);

    const rolled = JSON.parse((await cli(['keys', 'roll'], { CADENCE_API_KEY: created.api_keys.live })).stdout);
    expect(rolled.secret_key).toMatch(/^sk_live_/);
    expect((await request(`${h.app.url}/v1/products`, { key: rolled.secret_key })).status).toBe(200);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.live })).status).toBe(401);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.test })).status).toBe(200);
  });

  it('lets the operator roll a merchant’s key by id (one mode only), and refuses a merchant key or unknown id', async () => {
    const created = JSON.parse((await cli(['merchants', 'create', '--name', 'Lost Key Co'], { ADMIN_TOKEN })).stdout);
    const roll = ['keys', 'roll', '--merchant', created.id, '--mode', 'test'];
    const rolled = JSON.parse((await cli(roll, { ADMIN_TOKEN })).stdout);
    expect(rolled).toMatchObject({ object: 'api_key', mode: 'test', secret_key: expect.stringMatching(/^sk_test_/) });
    expect((await request(`${h.app.url}/v1/products`, { key: rolled.secret_key })).status).toBe(200);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.test })).status).toBe(401);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.live })).status).toBe(200);

    // A merchant's own key is not the operator token: refused, and nothing rolled.
    const asMerchant = await request(`${h.app.url}/v1/admin/merchants/${created.id}/api-keys/roll`, {
      method: 'POST',
      key: created.api_keys.live,
      body: { mode: 'live' },
    });
    expect(asMerchant.status).toBe(401);
    expect((await request(`${h.app.url}/v1/products`, { key: created.api_keys.live })).status).toBe(200);

    const unknown = await outcome(
      ['keys', 'roll', '--merchant', '01a22031-0000-7000-8000-000000000000', '--mode', 'live'],
      {
        ADMIN_TOKEN,
      },
    );
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringContaining('resource_not_found') });
    expect(await outcome(['keys', 'roll', '--merchant', created.id], { ADMIN_TOKEN })).toMatchObject({ code: 2 });
  });

  it('refuses bad input and a wrong operator token with the service’s message and exit 1', async () => {
    const bad = await outcome(['merchants', 'create', '--name', 'X', '--state-code', '7'], { ADMIN_TOKEN });
    expect(bad).toMatchObject({ code: 1, stderr: expect.stringContaining('state_code') });
    const wrong = await outcome(['merchants', 'create', '--name', 'X'], { ADMIN_TOKEN: 'not-the-token' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/error: \w+/);
    expect((await outcome(['merchants', 'create', '--name', 'X'])).code).toBe(2); // no token at all
  });
});

describe('cadence listen', () => {
  const children: ChildProcess[] = [];
  afterAll(() => children.forEach((c) => c.kill('SIGTERM')));

  /** Starts `cadence listen`; resolves with the secret it printed once it is subscribed, and its output so far. */
  async function listen(key: string, args: string[]) {
    const child = spawn(process.execPath, [CLI, 'listen', ...args], {
      env: { PATH: process.env.PATH, CADENCE_URL: h.app.url, CADENCE_API_KEY: key },
    });
    children.push(child);
    const out: string[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(...d.toString().split('\n').filter(Boolean)));
    child.stderr.on('data', (d: Buffer) => out.push(...d.toString().split('\n').filter(Boolean)));
    await eventually(async () => out.some((l) => l.startsWith('Forwarding')), 15_000, 'listen ready');
    const secret = /signing secret is (whsec_\S+)/.exec(out.join('\n'))![1];
    await sleep(500); // the subscription is sent right after the socket opens
    return { child, out, secret };
  }

  it('forwards a real event to a local URL, signed as webhook deliveries are, one line per event', async () => {
    const fresh = await h.merchant();
    await connect(fresh.test, 'stripe');
    const { out, secret } = await listen(fresh.keys.test, ['--forward-to', `${rx.url}/listen`]);
    expect(secret).toMatch(/^whsec_/);
    const payment = await createPayment(fresh.test);
    await pay(fresh.test, payment);
    const seen = () => rx.received.filter((r) => r.path === '/listen');
    await eventually(async () => seen().some((r) => JSON.parse(r.body).type === 'payment.succeeded'), 15_000);
    const req = seen().find((r) => JSON.parse(r.body).type === 'payment.succeeded')!;
    const event = new Webhook(secret).verify(req.body, req.headers) as any;
    expect(event).toMatchObject({ object: 'event', type: 'payment.succeeded', livemode: false });
    expect(event.data.object).toMatchObject({ id: payment.id, object: 'payment', status: 'succeeded' });
    expect(req.headers['webhook-id']).toBe(event.id);
    expect(Object.keys(event)).toEqual(['id', 'object', 'type', 'livemode', 'created_at', 'data']);
    // A signature with another secret does not verify.
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(req.body, req.headers),
    ).toThrow();
    await eventually(async () => out.some((l) => l.includes(event.id) && l.includes('[200]')), 5000, 'the line');
    // The body is exactly what a webhook endpoint gets for the same event.
    const ep = (await fresh.test.post('/webhooks/endpoints', { url: `${rx.url}/listen-ep`, mode: 'test' })).body;
    const tt = (await fresh.test.post('/webhooks/trigger-test', { type: 'subscription.halted' })).body;
    await eventually(async () => rx.received.some((r) => r.path === '/listen-ep'), 15_000);
    await eventually(async () => seen().some((r) => r.headers['webhook-id'] === tt.event_id), 15_000);
    const viaEndpoint = rx.received.find((r) => r.path === '/listen-ep')!;
    expect(seen().find((r) => r.headers['webhook-id'] === tt.event_id)!.body).toBe(viaEndpoint.body);
    expect(new Webhook(ep.secret).verify(viaEndpoint.body, viaEndpoint.headers)).toMatchObject({ id: tt.event_id });
  });

  it('uses --secret, filters with --events, and prints the local URL’s status', async () => {
    const fresh = await h.merchant();
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    rx.respond = (r) => (r.path === '/listen-500' ? 500 : 200);
    const { out } = await listen(fresh.keys.test, [
      '--forward-to',
      `${rx.url}/listen-500`,
      '--secret',
      secret,
      '--events',
      'invoice.*,credit_note.created',
    ]);
    expect(out[0]).toContain(secret);
    for (const type of ['payment.succeeded', 'invoice.paid', 'subscription.created', 'credit_note.created'])
      await fresh.test.post('/webhooks/trigger-test', { type });
    const seen = () => rx.received.filter((r) => r.path === '/listen-500');
    await eventually(async () => seen().length === 2, 15_000, 'two events');
    await sleep(500);
    expect(seen().map((r) => JSON.parse(r.body).type)).toEqual(['invoice.paid', 'credit_note.created']);
    for (const r of seen()) expect(() => new Webhook(secret).verify(r.body, r.headers)).not.toThrow();
    await eventually(async () => out.filter((l) => l.includes('[500]')).length === 2, 5000, 'the lines');
    rx.respond = () => 200;
  });
});

describe('the events subscription', () => {
  const EVENTS = 'subscription { events { id type livemode body missed } }';

  it("delivers only the socket's own merchant's and mode's events", async () => {
    const a = await h.merchant();
    const b = await h.merchant();
    const got: Record<string, string[]> = { aTest: [], aLive: [], bTest: [] };
    const subscribe = (name: string, key: string) =>
      ws(key).subscribe<any>(
        { query: EVENTS },
        { next: (r) => got[name].push(r.data?.events?.id ?? 'error'), error: () => undefined, complete: () => {} },
      );
    subscribe('aTest', a.keys.test);
    subscribe('aLive', a.keys.live);
    subscribe('bTest', b.keys.test);
    await sleep(500);
    const one = (await a.test.post('/webhooks/trigger-test')).body.event_id;
    const two = (await b.test.post('/webhooks/trigger-test', { type: 'invoice.created' })).body.event_id;
    await eventually(async () => got.aTest.length === 1 && got.bTest.length === 1, 10_000);
    await sleep(500);
    expect(got).toEqual({ aTest: [one], aLive: [], bTest: [two] });
  });

  it('refuses a bad type pattern, and a socket without a valid key', async () => {
    const errors: unknown[] = [];
    await new Promise<void>((resolve) =>
      ws(m.keys.test).subscribe(
        { query: 'subscription { events(types: ["NOT A TYPE"]) { id } }' },
        { next: (r) => void errors.push(r.errors), error: (e) => (errors.push(e), resolve()), complete: resolve },
      ),
    );
    expect(JSON.stringify(errors)).toContain('parameter_invalid');
    const closed = await new Promise<unknown>((resolve) =>
      ws('sk_test_nope').subscribe({ query: EVENTS }, { next: () => undefined, error: resolve, complete: () => {} }),
    );
    expect((closed as { code?: number }).code).toBe(4403);
  });
});

import { useHostLookup } from '../../src/modules/webhooks/address';
import { TestMerchant, useHarness } from '../harness';
import { errorFingerprint, unknownId } from '../harness/http';

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;

/** Names the tests resolve: a public one and a private one; any other does not resolve. */
const HOSTS: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'internal.example.com': ['10.0.0.7'],
};

beforeAll(async () => {
  useHostLookup(async (host) => {
    const a = HOSTS[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  });
  m = await h.merchant();
  other = await h.merchant();
});
afterAll(() => useHostLookup(null));

describe('POST /webhooks/endpoints', () => {
  it('creates an endpoint and shows its whsec_ secret only in the create answer', async () => {
    const r = await m.test.post('/webhooks/endpoints', {
      url: 'http://localhost:3000/hooks',
      mode: 'test',
      description: 'dev box',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      object: 'webhook_endpoint',
      url: 'http://localhost:3000/hooks',
      mode: 'test',
      enabled: true,
      enabled_events: ['*'],
      livemode: false,
      description: 'dev box',
    });
    expect(r.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(r.body.created_at).toMatch(/Z$/);
    expect(r.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(r.body.secret.slice(6), 'base64')).toHaveLength(32);

    const got = await m.test.get(`/webhooks/endpoints/${r.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).not.toHaveProperty('secret');
    expect(got.text).not.toContain(r.body.secret.slice(6));
    const list = await m.test.get('/webhooks/endpoints');
    expect(list.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(list.body.data.map((e: any) => e.id)).toContain(r.body.id);
    expect(list.text).not.toContain(r.body.secret.slice(6));
  });

  it('takes enabled_events: "*", exact types and prefixes', async () => {
    const r = await m.test.post('/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/x',
      mode: 'test',
      enabled_events: ['payment.succeeded', 'subscription.*', 'payment.succeeded'],
    });
    expect(r.status).toBe(201);
    expect(r.body.enabled_events).toEqual(['payment.succeeded', 'subscription.*']);
    for (const bad of [[], ['Payment Succeeded'], ['payment.'], [42]]) {
      const e = await m.test.post('/webhooks/endpoints', {
        url: 'http://127.0.0.1:9/x',
        mode: 'test',
        enabled_events: bad,
      });
      expect(e.status).toBe(400);
      expect(e.body.error.code).toBe('parameter_invalid');
      expect(e.body.error.param).toMatch(/^enabled_events/);
    }
  });

  it("requires url and mode, refuses unknown fields, bad URLs and a mode other than the key's", async () => {
    const cases: [Record<string, unknown>, number, string, string | null][] = [
      [{ mode: 'test' }, 400, 'parameter_missing', 'url'],
      [{ url: 'http://localhost/x' }, 400, 'parameter_missing', 'mode'],
      [{ url: 'http://localhost/x', mode: 'staging' }, 400, 'parameter_invalid', 'mode'],
      [{ url: 'http://localhost/x', mode: 'test', bogus_field: 1 }, 400, 'parameter_unknown', 'bogus_field'],
      [{ url: 'ftp://localhost/x', mode: 'test' }, 400, 'parameter_invalid', 'url'],
      [{ url: 'not a url', mode: 'test' }, 400, 'parameter_invalid', 'url'],
      [{ url: 'http://user:pw@localhost/x', mode: 'test' }, 400, 'parameter_invalid', 'url'],
      [{ url: 'https://hooks.example.com/x', mode: 'live' }, 400, 'mode_mismatch', 'mode'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await m.test.post('/webhooks/endpoints', body);
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    }
    const r = await m.live.post('/webhooks/endpoints', { url: 'https://hooks.example.com/x', mode: 'test' });
    expect([r.status, r.body.error.code]).toEqual([400, 'mode_mismatch']);
  });

  it('lets test endpoints use http, localhost and private addresses', async () => {
    for (const url of [
      'http://localhost:4242/hooks',
      'http://127.0.0.1:8080/x',
      'http://10.0.0.7/x',
      'https://internal.example.com/x',
    ]) {
      const r = await m.test.post('/webhooks/endpoints', { url, mode: 'test' });
      expect([url, r.status]).toEqual([url, 201]);
    }
  });

  // Loopback, private, link-local and metadata addresses, refused in both modes when private networks are not
  // allowed (the default on DATABASE_URL): ssrf.test.ts. The harness allows them, as development does.
  it('requires https of live endpoints, which may then be public or (private networks allowed) private', async () => {
    const r = await m.live.post('/webhooks/endpoints', { url: 'http://hooks.example.com/x', mode: 'live' });
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([400, 'parameter_invalid', 'url']);
    const list = await m.live.get('/webhooks/endpoints');
    expect(list.body.data).toEqual([]);
    const urls = [
      'https://hooks.example.com/cadence',
      'https://93.184.216.34/hook',
      'https://not-resolvable-yet.example.org/x',
    ];
    for (const url of [...urls, 'https://internal.example.com/x', 'https://10.1.2.3/x']) {
      const ok = await m.live.post('/webhooks/endpoints', { url, mode: 'live' });
      expect([url, ok.status, ok.body.mode, ok.body.livemode]).toEqual([url, 201, 'live', true]);
    }
  });
});

describe('toggle, roll-secret, delete', () => {
  it('flips without a body, sets with {enabled}, and answers 200 with the endpoint', async () => {
    const ep = (await m.test.post('/webhooks/endpoints', { url: 'http://localhost/t', mode: 'test' })).body;
    const off = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`);
    expect([off.status, off.body.enabled, off.body.id]).toEqual([200, false, ep.id]);
    const stillOff = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: false });
    expect([stillOff.status, stillOff.body.enabled]).toEqual([200, false]);
    const on = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: true });
    expect([on.status, on.body.enabled]).toEqual([200, true]);
    const flip = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, {});
    expect(flip.body.enabled).toBe(false);
    const bad = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: 'yes' });
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'parameter_invalid', 'enabled']);
    const unknown = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enable: true });
    expect([unknown.status, unknown.body.error.code]).toEqual([400, 'parameter_unknown']);
  });

  it('rolls the secret: a new whsec_ shown once, the old one signing for 24 more hours', async () => {
    const ep = (await m.test.post('/webhooks/endpoints', { url: 'http://localhost/r', mode: 'test' })).body;
    const r = await m.test.post(`/webhooks/endpoints/${ep.id}/roll-secret`);
    expect(r.status).toBe(200);
    expect(r.body.secret).toMatch(/^whsec_/);
    expect(r.body.secret).not.toBe(ep.secret);
    const expires = Date.parse(r.body.previous_secret_expires_at);
    expect(Math.abs(expires - (Date.now() + 24 * 3600_000))).toBeLessThan(60_000);
  });

  it('deletes: {id, object, deleted: true}, then the endpoint is gone everywhere', async () => {
    const ep = (await m.test.post('/webhooks/endpoints', { url: 'http://localhost/d', mode: 'test' })).body;
    const del = await m.test.delete(`/webhooks/endpoints/${ep.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: ep.id, object: 'webhook_endpoint', deleted: true });
    for (const r of [
      await m.test.get(`/webhooks/endpoints/${ep.id}`),
      await m.test.delete(`/webhooks/endpoints/${ep.id}`),
      await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`),
    ]) {
      expect([r.status, r.body.error.code]).toEqual([404, 'resource_not_found']);
    }
    const list = await m.test.get('/webhooks/endpoints?limit=100');
    expect(list.body.data.map((e: any) => e.id)).not.toContain(ep.id);
  });
});

describe('tenancy', () => {
  it("answers 404 for another merchant's or mode's endpoint and delivery, exactly like an unknown id", async () => {
    const ep = (await m.test.post('/webhooks/endpoints', { url: 'http://localhost/ten', mode: 'test' })).body;
    const delivery = (await m.test.post('/webhooks/trigger-test', { endpoint_id: ep.id })).body.deliveries[0];
    expect(delivery.endpoint_id).toBe(ep.id);
    const calls: [string, string, (id: string) => string][] = [
      ['get', 'endpoint', (id) => `/webhooks/endpoints/${id}`],
      ['post', 'endpoint', (id) => `/webhooks/endpoints/${id}/toggle`],
      ['post', 'endpoint', (id) => `/webhooks/endpoints/${id}/roll-secret`],
      ['delete', 'endpoint', (id) => `/webhooks/endpoints/${id}`],
      ['get', 'delivery', (id) => `/webhooks/deliveries/${id}`],
      ['post', 'delivery', (id) => `/webhooks/deliveries/${id}/retry`],
    ];
    for (const client of [other.test, other.live, m.live]) {
      for (const [method, kind, path] of calls) {
        const id = kind === 'endpoint' ? ep.id : delivery.id;
        const ghost = unknownId();
        const go = (p: string) =>
          method === 'get' ? client.get(p) : method === 'delete' ? client.delete(p) : client.post(p);
        const theirs = await go(path(id));
        const none = await go(path(ghost));
        expect([path(id), theirs.status]).toEqual([path(id), 404]);
        expect(errorFingerprint(theirs, id)).toEqual(errorFingerprint(none, ghost));
      }
      const tt = await client.post('/webhooks/trigger-test', { endpoint_id: ep.id });
      expect(tt.status).toBe(client === other.test ? 404 : 400); // live keys: test_mode_only first
      const lists = [
        await client.get('/webhooks/endpoints?limit=100'),
        await client.get('/webhooks/deliveries?limit=100'),
      ];
      for (const l of lists) expect(l.text).not.toContain(ep.id);
      const filtered = await client.get(`/webhooks/deliveries?endpoint_id=${ep.id}`);
      expect(filtered.body.data).toEqual([]);
    }
    // and the owner still has it all, unchanged
    const mine = await m.test.get(`/webhooks/endpoints/${ep.id}`);
    expect([mine.status, mine.body.enabled, mine.body.previous_secret_expires_at]).toEqual([200, true, null]);
  });
});

describe('trigger-test', () => {
  it('answers 400 test_mode_only with a live key', async () => {
    const r = await m.live.post('/webhooks/trigger-test');
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'test_mode_only' });
  });

  it('targets only enabled test endpoints that take payment.succeeded', async () => {
    const fresh = await h.merchant();
    const a = (await fresh.test.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/a', mode: 'test' })).body;
    const b = (
      await fresh.test.post('/webhooks/endpoints', {
        url: 'http://127.0.0.1:9/b',
        mode: 'test',
        enabled_events: ['payment.*'],
      })
    ).body;
    const c = (
      await fresh.test.post('/webhooks/endpoints', {
        url: 'http://127.0.0.1:9/c',
        mode: 'test',
        enabled_events: ['subscription.created'],
      })
    ).body;
    const d = (await fresh.test.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/d', mode: 'test' })).body;
    await fresh.test.post(`/webhooks/endpoints/${d.id}/toggle`, { enabled: false });
    await fresh.live.post('/webhooks/endpoints', { url: 'https://hooks.example.com/live', mode: 'live' });
    const r = await fresh.test.post('/webhooks/trigger-test');
    expect(r.status).toBe(202);
    expect(r.body).toMatchObject({ type: 'payment.succeeded', event_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(r.body.deliveries.map((x: any) => x.endpoint_id).sort()).toEqual([a.id, b.id].sort());
    for (const x of r.body.deliveries) {
      expect(x).toMatchObject({
        object: 'webhook_delivery',
        event_id: r.body.event_id,
        event_type: 'payment.succeeded',
        status: 'pending',
        attempts: 0,
        livemode: false,
      });
    }
    const one = await fresh.test.post('/webhooks/trigger-test', { endpoint_id: b.id });
    expect(one.body.deliveries.map((x: any) => x.endpoint_id)).toEqual([b.id]);
    const filtered = await fresh.test.post('/webhooks/trigger-test', { endpoint_id: c.id });
    expect([filtered.status, filtered.body.deliveries]).toEqual([202, []]);
    const disabled = await fresh.test.post('/webhooks/trigger-test', { endpoint_id: d.id });
    expect([disabled.status, disabled.body.deliveries]).toEqual([202, []]);
    const missing = await fresh.test.post('/webhooks/trigger-test', { endpoint_id: unknownId() });
    expect([missing.status, missing.body.error.code, missing.body.error.param]).toEqual([
      404,
      'resource_not_found',
      null,
    ]);
    const live = await fresh.live.get('/webhooks/deliveries');
    expect(live.body.data).toEqual([]);
  });
});

describe('GraphQL', () => {
  it('has the same operations in camelCase', async () => {
    const created = await m.test.gql(
      `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { id object url mode enabled enabledEvents secret livemode } }`,
      { input: { url: 'http://localhost:5000/gql', mode: 'TEST', enabledEvents: ['payment.succeeded'] } },
    );
    const ep = created.data.createWebhookEndpoint;
    expect(ep).toMatchObject({
      object: 'webhook_endpoint',
      mode: 'TEST',
      enabled: true,
      enabledEvents: ['payment.succeeded'],
      livemode: false,
    });
    expect(ep.secret).toMatch(/^whsec_/);
    const list = await m.test.gql(
      '{ webhookEndpoints(first: 100) { edges { node { id } } pageInfo { hasNextPage } totalCount } }',
    );
    expect(list.data.webhookEndpoints.edges.map((e: any) => e.node.id)).toContain(ep.id);
    const toggled = await m.test.gql(
      'mutation($id: ID!) { toggleWebhookEndpoint(id: $id, enabled: false) { enabled } }',
      { id: ep.id },
    );
    expect(toggled.data.toggleWebhookEndpoint.enabled).toBe(false);
    await m.test.gql('mutation($id: ID!) { toggleWebhookEndpoint(id: $id) { enabled } }', { id: ep.id });
    const trig = await m.test.gql(
      'mutation($id: ID) { triggerTestWebhook(endpointId: $id) { eventId type deliveries { id endpointId status attempts attemptLog { attempt } } } }',
      { id: ep.id },
    );
    expect(trig.data.triggerTestWebhook).toMatchObject({
      type: 'payment.succeeded',
      deliveries: [{ endpointId: ep.id, status: 'PENDING' }],
    });
    const deliveries = await m.test.gql(
      'query($id: ID) { webhookDeliveries(endpointId: $id, first: 5) { edges { node { id eventType endpointId } } totalCount } }',
      { id: ep.id },
    );
    expect(deliveries.data.webhookDeliveries.totalCount).toBe(1);
    const live = await m.live.gql('mutation { triggerTestWebhook { eventId } }');
    expect(live.errors![0].extensions).toMatchObject({ code: 'test_mode_only', http: { status: 400 } });
    const del = await m.test.gql('mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id object deleted } }', {
      id: ep.id,
    });
    expect(del.data.deleteWebhookEndpoint).toEqual({ id: ep.id, object: 'webhook_endpoint', deleted: true });
  });
});

describe('GET /webhooks/deliveries', () => {
  it('paginates like the other lists and filters by endpoint_id and status', async () => {
    const fresh = await h.merchant();
    const ep = (await fresh.test.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/p', mode: 'test' })).body;
    for (let i = 0; i < 5; i++) await fresh.test.post('/webhooks/trigger-test', { endpoint_id: ep.id });
    const p1 = await fresh.test.get(`/webhooks/deliveries?limit=2&endpoint_id=${ep.id}`);
    expect([p1.status, p1.body.data.length, p1.body.has_more]).toEqual([200, 2, true]);
    const p2 = await fresh.test.get(`/webhooks/deliveries?limit=2&endpoint_id=${ep.id}&cursor=${p1.body.next_cursor}`);
    const p3 = await fresh.test.get(`/webhooks/deliveries?limit=2&endpoint_id=${ep.id}&cursor=${p2.body.next_cursor}`);
    expect([p3.body.data.length, p3.body.has_more, p3.body.next_cursor]).toEqual([1, false, null]);
    const ids = [...p1.body.data, ...p2.body.data, ...p3.body.data].map((d: any) => d.id);
    expect(new Set(ids).size).toBe(5);
    expect([...ids].sort().reverse()).toEqual(ids); // newest first
    const succeeded = await fresh.test.get('/webhooks/deliveries?status=succeeded');
    expect(succeeded.body.data).toEqual([]);
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=nope', 'cursor'],
      ['status=weird', 'status'],
      ['colour=red', 'colour'],
    ]) {
      const r = await fresh.test.get(`/webhooks/deliveries?${q}`);
      expect([q, r.status, r.body.error.param]).toEqual([q, 400, param]);
    }
    const none = await fresh.test.get('/webhooks/deliveries?endpoint_id=not-a-uuid');
    expect([none.status, none.body.data]).toEqual([200, []]);
  });
});

import { useHostLookup } from '../../src/modules/webhooks/address';
import { TestMerchant, eventually, Receiver, sleep, useHarness } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';
import { emitEvent, verify } from './helpers';

const h = useHarness();
let rx: Receiver;

beforeAll(async () => {
  rx = await h.receiver();
});
afterAll(() => useHostLookup(null));

/** A fresh merchant with one test endpoint on the receiver (path tells endpoints apart). */
async function setup(body: Record<string, unknown> = {}) {
  const m = await h.merchant();
  const path = `/${Math.random().toString(36).slice(2)}`;
  const ep = (await m.test.post('/webhooks/endpoints', { url: `${rx.url}${path}`, mode: 'test', ...body })).body;
  const seen = () => rx.received.filter((r) => r.path === path);
  return { m, ep, path, seen };
}

const delivery = async (m: TestMerchant, id: string) => (await m.test.get(`/webhooks/deliveries/${id}`)).body;

describe('signed delivery', () => {
  it('signs with Standard Webhooks headers that the standardwebhooks verifier accepts', async () => {
    const { m, ep, seen } = await setup();
    const r = await m.test.post('/webhooks/trigger-test');
    expect(r.status).toBe(202);
    await eventually(async () => seen().length === 1, 10_000, 'the delivery');
    const req = seen()[0];
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe(r.body.event_id);
    expect(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const event = verify(ep.secret, req);
    expect(event).toMatchObject({ id: r.body.event_id, object: 'event', type: 'payment.succeeded', livemode: false });
    expect(Object.keys(event)).toEqual(['id', 'object', 'type', 'livemode', 'created_at', 'data']);
    expect(event.data.object).toMatchObject({
      object: 'payment',
      status: 'succeeded',
      amount: 49900,
      currency: 'INR',
      livemode: false,
    });
    // a tampered body or another secret does not verify
    expect(() => verify(ep.secret, { ...req, body: req.body.replace('49900', '1') })).toThrow();
    expect(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), req)).toThrow();

    const d = await eventually(async () => {
      const x = await delivery(m, r.body.deliveries[0].id);
      return x.status === 'succeeded' ? x : null;
    });
    expect(d).toMatchObject({
      attempts: 1,
      response_status: 200,
      error: null,
      response_body: 'ok',
      next_attempt_at: null,
    });
    expect(d.latency_ms).toBeGreaterThanOrEqual(0);
    expect(d.attempt_log).toEqual([
      {
        attempt: 1,
        attempted_at: d.last_attempt_at,
        response_status: 200,
        latency_ms: d.latency_ms,
        error: null,
        response_body: 'ok',
      },
    ]);
  });

  it('delivers a real payment.succeeded from a sandbox checkout, with the payment as GET shows it', async () => {
    const { m, ep, seen } = await setup({ enabled_events: ['payment.succeeded'] });
    await connect(m.test, 'stripe');
    const p = await createPayment(m.test);
    const { payment } = await pay(m.test, p);
    expect(payment.status).toBe('succeeded');
    await eventually(async () => seen().length === 1, 10_000, 'the payment event');
    const event = verify(ep.secret, seen()[0]);
    expect(event.type).toBe('payment.succeeded');
    expect(event.data.object).toMatchObject({ id: p.id, object: 'payment', status: 'succeeded', amount: p.amount });
  });
});

describe('retries', () => {
  it('retries a failure on the test clock and keeps the same webhook-id until it succeeds', async () => {
    const { m, ep, path, seen } = await setup();
    let calls = 0;
    rx.respond = (r) => (r.path === path && calls++ === 0 ? 500 : 200);
    try {
      const tt = await m.test.post('/webhooks/trigger-test');
      await eventually(
        async () => (await delivery(m, tt.body.deliveries[0].id)).attempts === 1,
        10_000,
        'the first attempt',
      );
      const first = await delivery(m, tt.body.deliveries[0].id);
      expect(first).toMatchObject({
        status: 'pending',
        attempts: 1,
        response_status: 500,
        error: 'HTTP 500',
        response_body: 'nope 500',
      });
      expect(Date.parse(first.next_attempt_at) - Date.parse(first.last_attempt_at)).toBe(5000);
      await sleep(300);
      expect(seen()).toHaveLength(1); // nothing before the 5 s on the test clock

      const adv = await m.test.post('/test-clock/advance', { seconds: 5 });
      expect(adv.status).toBe(200);
      // advance answers only once the due retry was sent
      expect(seen()).toHaveLength(2);
      expect(seen()[1].headers['webhook-id']).toBe(seen()[0].headers['webhook-id']);
      expect(seen()[1].body).toBe(seen()[0].body);
      verify(ep.secret, seen()[1]);
      const done = await delivery(m, tt.body.deliveries[0].id);
      expect(done).toMatchObject({
        status: 'succeeded',
        attempts: 2,
        response_status: 200,
        error: null,
        next_attempt_at: null,
      });
      expect(done.attempt_log.map((a: any) => a.response_status)).toEqual([500, 200]);
    } finally {
      rx.respond = () => 200;
    }
  });

  it('follows 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then fails', async () => {
    const { m, path, seen } = await setup();
    rx.respond = (r) => (r.path === path ? 503 : 200);
    try {
      const tt = await m.test.post('/webhooks/trigger-test');
      await eventually(async () => seen().length === 1, 10_000, 'the first attempt');
      const adv = await m.test.post('/test-clock/advance', { seconds: 2 * 24 * 3600 });
      expect(adv.status).toBe(200);
      expect(seen()).toHaveLength(8);
      expect(new Set(seen().map((r) => r.headers['webhook-id'])).size).toBe(1);
      const d = await delivery(m, tt.body.deliveries[0].id);
      expect(d).toMatchObject({ status: 'failed', attempts: 8, response_status: 503, next_attempt_at: null });
      const times = d.attempt_log.map((a: any) => Date.parse(a.attempted_at));
      const gaps = times.slice(1).map((x: number, i: number) => Math.round((x - times[i]) / 1000));
      expect(gaps).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);

      // a manual retry resends now, once
      rx.respond = () => 200;
      const retry = await m.test.post(`/webhooks/deliveries/${d.id}/retry`);
      expect([retry.status, retry.body.status, retry.body.id]).toEqual([200, 'pending', d.id]);
      await eventually(async () => (await delivery(m, d.id)).status === 'succeeded', 10_000, 'the manual retry');
      expect(seen()).toHaveLength(9);
      expect(seen()[8].headers['webhook-id']).toBe(seen()[0].headers['webhook-id']);
      expect((await delivery(m, d.id)).attempts).toBe(9);
    } finally {
      rx.respond = () => 200;
    }
  });

  it('disables an endpoint whose deliveries all failed for 5 days and records webhook_endpoint.disabled', async () => {
    const { m, ep, path, seen } = await setup();
    const watcherPath = `/watch-${Math.random().toString(36).slice(2)}`;
    const watcher = (
      await m.test.post('/webhooks/endpoints', {
        url: `${rx.url}${watcherPath}`,
        mode: 'test',
        enabled_events: ['webhook_endpoint.*'],
      })
    ).body;
    rx.respond = (r) => (r.path === path ? 500 : 200);
    try {
      await m.test.post('/webhooks/trigger-test', { endpoint_id: ep.id });
      await eventually(async () => seen().length === 1, 10_000, 'the first attempt');
      await h.clock.advance(m, 4 * 24 * 3600);
      expect((await m.test.get(`/webhooks/endpoints/${ep.id}`)).body.enabled).toBe(true); // 4 days: still on
      await h.clock.advance(m, 24 * 3600 + 60);
      await m.test.post('/webhooks/trigger-test', { endpoint_id: ep.id });
      await h.clock.advance(m, 1);
      const after = (await m.test.get(`/webhooks/endpoints/${ep.id}`)).body;
      expect(after).toMatchObject({ enabled: false, disabled_reason: 'failing' });
      const notes = rx.received.filter((r) => r.path === watcherPath);
      expect(notes).toHaveLength(1);
      const note = verify(watcher.secret, notes[0]);
      expect(note).toMatchObject({
        type: 'webhook_endpoint.disabled',
        data: { object: { id: ep.id, object: 'webhook_endpoint', enabled: false } },
      });
      expect(JSON.stringify(note)).not.toMatch(/secret_sealed|whsec_/);
      // enabling it again clears the reason
      const on = await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: true });
      expect(on.body).toMatchObject({ enabled: true, disabled_reason: null });
    } finally {
      rx.respond = () => 200;
    }
  });
});

describe('routing', () => {
  it('sends each endpoint only the event types it takes', async () => {
    const m = await h.merchant();
    const mk = async (p: string, events?: string[]) =>
      (
        await m.test.post('/webhooks/endpoints', {
          url: `${rx.url}${p}`,
          mode: 'test',
          ...(events ? { enabled_events: events } : {}),
        })
      ).body;
    const tag = Math.random().toString(36).slice(2);
    await mk(`/all-${tag}`);
    await mk(`/failed-${tag}`, ['payment.failed']);
    await mk(`/subs-${tag}`, ['subscription.*']);
    for (const type of ['payment.failed', 'subscription.created', 'subscription.cancelled', 'invoice.paid'])
      await emitEvent(h.app, m.id, 'test', type);
    await h.app.app.services.delivery.dispatcher.drain();
    const types = (p: string) =>
      rx.received
        .filter((r) => r.path === p)
        .map((r) => JSON.parse(r.body).type)
        .sort();
    await eventually(async () => types(`/all-${tag}`).length === 4, 10_000, 'all four');
    await sleep(200);
    expect(types(`/all-${tag}`)).toEqual([
      'invoice.paid',
      'payment.failed',
      'subscription.cancelled',
      'subscription.created',
    ]);
    expect(types(`/failed-${tag}`)).toEqual(['payment.failed']);
    expect(types(`/subs-${tag}`)).toEqual(['subscription.cancelled', 'subscription.created']);
  });

  it('never sends a live event to a test endpoint, nor a test event to a live endpoint', async () => {
    useHostLookup(async (host) => {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    });
    const { m, seen } = await setup();
    const live = (await m.live.post('/webhooks/endpoints', { url: 'https://hooks.example.com/live', mode: 'live' }))
      .body;
    expect(live.mode).toBe('live');
    const liveEvent = await emitEvent(h.app, m.id, 'live', 'payment.succeeded', { id: 'live_obj', object: 'payment' });
    const testEvent = await emitEvent(h.app, m.id, 'test', 'payment.succeeded', { id: 'test_obj', object: 'payment' });
    await h.app.app.services.delivery.dispatcher.drain();
    await eventually(async () => seen().length === 1, 10_000, 'the test event');
    await sleep(200);
    expect(seen().map((r) => r.headers['webhook-id'])).toEqual([testEvent]);
    const liveLog = (await m.live.get('/webhooks/deliveries')).body.data;
    expect(liveLog.map((d: any) => [d.event_id, d.endpoint_id, d.livemode])).toEqual([[liveEvent, live.id, true]]);
    expect(liveLog[0].error).toMatch(/host not found/);
    const testLog = (await m.test.get('/webhooks/deliveries')).body.data;
    expect(testLog.map((d: any) => d.event_id)).toEqual([testEvent]);
  });

  it('sends nothing to disabled or deleted endpoints, and fails their pending retries', async () => {
    const { m, ep, path, seen } = await setup();
    await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: false });
    const tt = await m.test.post('/webhooks/trigger-test');
    expect(tt.body.deliveries).toEqual([]);
    await emitEvent(h.app, m.id, 'test', 'payment.succeeded');
    await h.app.app.services.delivery.dispatcher.drain();
    await sleep(300);
    expect(seen()).toHaveLength(0);

    // a retry pending when the endpoint is disabled is not sent
    await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: true });
    rx.respond = (r) => (r.path === path ? 500 : 200);
    try {
      const d = (await m.test.post('/webhooks/trigger-test')).body.deliveries[0];
      await eventually(async () => (await delivery(m, d.id)).attempts === 1, 10_000, 'the first attempt');
      await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: false });
      rx.respond = () => 200;
      await h.clock.advance(m, 60);
      expect(seen()).toHaveLength(1);
      expect(await delivery(m, d.id)).toMatchObject({ status: 'failed', attempts: 1, error: 'endpoint disabled' });
      const retry = await m.test.post(`/webhooks/deliveries/${d.id}/retry`);
      expect([retry.status, retry.body.error.code]).toEqual([409, 'invalid_state_transition']);
    } finally {
      rx.respond = () => 200;
    }
    // deleted: nothing either
    await m.test.post(`/webhooks/endpoints/${ep.id}/toggle`, { enabled: true });
    await m.test.delete(`/webhooks/endpoints/${ep.id}`);
    await emitEvent(h.app, m.id, 'test', 'payment.succeeded');
    await h.app.app.services.delivery.dispatcher.drain();
    await sleep(300);
    expect(seen()).toHaveLength(1);
  });
});

describe('secret rolling', () => {
  it('signs with both secrets for 24 hours, then with the new one only', async () => {
    const { m, ep, seen } = await setup();
    const rolled = (await m.test.post(`/webhooks/endpoints/${ep.id}/roll-secret`)).body;
    await m.test.post('/webhooks/trigger-test');
    await eventually(async () => seen().length === 1, 10_000, 'the delivery');
    const sigs = seen()[0].headers['webhook-signature'].split(' ');
    expect(sigs).toHaveLength(2);
    expect(sigs.every((s) => s.startsWith('v1,'))).toBe(true);
    verify(ep.secret, seen()[0]); // receivers not yet updated
    verify(rolled.secret, seen()[0]); // receivers already updated

    await h.clock.advance(m, 24 * 3600 + 1);
    await m.test.post('/webhooks/trigger-test');
    await eventually(async () => seen().length === 2, 10_000, 'the second delivery');
    expect(seen()[1].headers['webhook-signature'].split(' ')).toHaveLength(1);
    verify(rolled.secret, seen()[1]);
    expect(() => verify(ep.secret, seen()[1])).toThrow();
  });
});

// SSRF at delivery (DNS rebinding, addresses stored earlier): ssrf.test.ts, with private networks refused.

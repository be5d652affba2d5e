/**
 * GET /metrics (docs/production.md, "Metrics"): Prometheus's text format through the real HTTP server, requests counted
 * by route pattern and status, latency histograms, queue depths read from PostgreSQL, and no tenant in any label.
 */
import { Client } from 'pg';
import { ADMIN_TOKEN, closedPortUrl, eventually, request, startTestApp, TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, recurringPlan } from '../subscriptions/helpers';
import { emitEvent } from '../webhooks/helpers';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
});

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus's text exposition format (version 0.0.4) strictly: every line is a HELP, a TYPE or a sample; every
 * sample belongs to a family with a TYPE (histograms: `_bucket`, `_sum`, `_count`); label values are quoted strings.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const sampleLine = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
    if (type) {
      types.set(type[1], type[2]);
      continue;
    }
    if (new RegExp(`^# HELP ${NAME} .*$`).test(line)) continue;
    const s = sampleLine.exec(line);
    if (!s) throw new Error(`not a line of the exposition format: ${line}`);
    const labels: Record<string, string> = {};
    const body = s[2] ?? '';
    const label = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    let at = 0;
    for (let l = label.exec(body); l; l = label.exec(body)) {
      labels[l[1]] = l[2].replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
      at = label.lastIndex;
    }
    if (at !== body.length) throw new Error(`labels do not parse: ${line}`);
    const raw = s[3];
    // Go's ParseFloat, Prometheus's parser, takes NaN and Inf in any case (prom-client writes `Nan`).
    const special = /^nan$/i.test(raw)
      ? NaN
      : /^\+?inf$/i.test(raw)
        ? Infinity
        : /^-inf$/i.test(raw)
          ? -Infinity
          : null;
    const value = special ?? Number(raw);
    if (special === null && Number.isNaN(value)) throw new Error(`not a value: ${line}`);
    const family = s[1].replace(/_(bucket|sum|count)$/, '');
    if (!types.has(s[1]) && !(types.get(family) === 'histogram' || types.get(family) === 'summary'))
      throw new Error(`sample without a TYPE: ${line}`);
    samples.push({ name: s[1], labels, value });
  }
  return { samples, types };
}

async function scrape(): Promise<Sample[]> {
  const r = await request(`${h.app.url}/metrics`, { key: ADMIN_TOKEN });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(r.text).samples;
}

/** The value of the one sample named `name` whose labels include `labels` (0 when none: a counter not yet moved). */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter(
    (s) =>
      s.name === name &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v) &&
      Object.keys(s.labels).length === Object.keys(labels).length,
  );
  if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${hits.length} samples`);
  return hits[0]?.value ?? 0;
}

describe('GET /metrics', () => {
  it('answers the operator token only: none, a wrong one or a merchant key is refused with 401', async () => {
    for (const key of [undefined, 'not-the-token', m.keys.test, m.keys.live]) {
      const r = await request(`${h.app.url}/metrics`, { key });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('invalid_api_key');
      expect(r.text).not.toMatch(/cadence_/);
    }
  });

  it('counts requests by route pattern and status, exactly, and times them in a histogram', async () => {
    const customer = (await m.test.post('/customers', { email: 'metrics@example.com' })).body;
    expect(customer.id).toBeTruthy();
    const before = await scrape();

    for (let i = 0; i < 3; i++) expect((await m.test.get(`/customers/${customer.id}`)).status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await m.test.get('/customers/00000000-0000-7000-8000-000000000000')).status).toBe(404);
    expect((await m.test.get('/no-such-route/12345')).status).toBe(404);
    expect((await m.test.gql('query { __typename }')).data).toEqual({ __typename: 'Query' });
    expect((await request(`${h.app.url}/readyz`)).status).toBe(200);

    const after = await scrape();
    const moved = (labels: Record<string, string>) =>
      valueOf(after, 'cadence_http_requests_total', labels) - valueOf(before, 'cadence_http_requests_total', labels);
    const route = '/v1/customers/{id}';
    expect(moved({ method: 'GET', route, status: '200' })).toBe(3);
    expect(moved({ method: 'GET', route, status: '404' })).toBe(2);
    expect(moved({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(moved({ method: 'POST', route: '/graphql', status: '200', operation: 'query' })).toBe(1);
    expect(moved({ method: 'GET', route: '/readyz', status: '200' })).toBe(1);
    expect(moved({ method: 'GET', route: '/metrics', status: '200' })).toBe(1); // the first scrape, counted once answered

    // Latency: every request of the route in its histogram, bucket by bucket up to +Inf.
    const count = (s: Sample[]) => valueOf(s, 'cadence_http_request_duration_seconds_count', { method: 'GET', route });
    expect(count(after) - count(before)).toBe(5);
    const buckets = after.filter(
      (s) =>
        s.name === 'cadence_http_request_duration_seconds_bucket' &&
        s.labels.route === route &&
        s.labels.method === 'GET',
    );
    expect(buckets.length).toBeGreaterThan(5);
    expect(buckets.find((b) => b.labels.le === '+Inf')!.value).toBe(count(after));
    const values = buckets.map((b) => b.value);
    expect([...values].sort((a, b) => a - b)).toEqual(values); // cumulative
    expect(valueOf(after, 'cadence_http_request_duration_seconds_sum', { method: 'GET', route })).toBeGreaterThan(0);
  });

  it('reports queue depths read from the database: a pending webhook delivery, a failed gateway command', async () => {
    const db = new Client({ connectionString: h.app.databaseUrl });
    await db.connect();
    const counts = async () =>
      (
        await db.query<{ pending: number; failed: number; deliveries: number; due: number }>(
          `select (select count(*) from gateway_commands where status = 'pending')::int as pending,
                  (select count(*) from gateway_commands where status = 'failed')::int as failed,
                  (select count(*) from webhook_deliveries where status = 'pending')::int as deliveries,
                  (select count(*) from subscriptions where next_action_at <= now())::int as due`,
        )
      ).rows[0];
    try {
      const start = await counts();
      const before = await scrape();
      expect(valueOf(before, 'cadence_gateway_commands_failed')).toBe(start.failed);
      expect(valueOf(before, 'cadence_webhook_deliveries_pending')).toBe(start.deliveries);

      // A delivery to a port nobody listens on: it fails and stays pending for its retry.
      const endpoint = await m.test.post('/webhooks/endpoints', { url: await closedPortUrl(), mode: 'test' });
      expect(endpoint.status).toBe(201);
      await emitEvent(h.app, m.id, 'test', 'payment.succeeded');
      await eventually(async () => (await counts()).deliveries > start.deliveries, 15_000, 'a pending delivery');
      // A gateway command given up, as the worker leaves one after GATEWAY_COMMAND_RETRY_SECONDS.
      await db.query(
        `insert into gateway_commands (id, created_at, merchant_id, mode, action, description, args, idempotency_key,
                                       status, attempts, next_attempt_at, give_up_at, completed_at, last_error)
         values (gen_random_uuid(), now(), $1, 'test', 'cancel_subscription', 'metrics test', '{}', 'metrics-test',
                 'failed', 3, null, now(), now(), 'given up')`,
        [m.id],
      );

      const now = await counts();
      const after = await scrape();
      expect(now.failed).toBe(start.failed + 1);
      expect(valueOf(after, 'cadence_gateway_commands_failed')).toBe(now.failed);
      expect(valueOf(after, 'cadence_gateway_commands_pending')).toBe(now.pending);
      expect(valueOf(after, 'cadence_webhook_deliveries_pending')).toBe(now.deliveries);
      expect(valueOf(after, 'cadence_webhook_deliveries_pending')).toBeGreaterThan(
        valueOf(before, 'cadence_webhook_deliveries_pending'),
      );
      expect(valueOf(after, 'cadence_subscription_actions_due')).toBe(now.due);
      // The failed attempt was counted by the process that made it (this one: WORKER on).
      await eventually(
        async () => valueOf(await scrape(), 'cadence_webhook_delivery_attempts_total', { result: 'retry' }) >= 1,
        15_000,
        'the failed attempt counted',
      );
    } finally {
      await db.end();
    }
  });

  it('reports the renewals billed in the last hour, by mode and status', async () => {
    const r = await h.merchant();
    await connect(r.test, 'stripe');
    const { plan } = await recurringPlan(r.test, { billing_frequency: 'daily' }, { amount: 1000 });
    const { subscription } = await authorise(r.test, await createSubscription(r.test, plan.id));
    expect(subscription.status).toBe('active');
    const renewals = (s: Sample[]) =>
      s
        .filter((x) => x.name === 'cadence_renewal_invoices_last_hour' && x.labels.mode === 'test')
        .reduce((sum, x) => sum + x.value, 0);
    const before = renewals(await scrape());
    await h.clock.advance(r, 2 * 86_400 + 60); // two daily renewals, charged by the sandbox
    const after = await scrape();
    expect(renewals(after) - before).toBe(2);
    expect(
      valueOf(after, 'cadence_renewal_invoices_last_hour', { mode: 'test', status: 'paid' }),
    ).toBeGreaterThanOrEqual(2);
  });

  it("reports the database pool, and Node's default process metrics", async () => {
    const s = await scrape();
    expect(valueOf(s, 'cadence_db_pool_max')).toBe(h.app.app.services.plainPool.options.max);
    for (const state of ['used', 'free', 'waiting', 'opening'])
      expect(Number.isFinite(valueOf(s, 'cadence_db_pool_connections', { state }))).toBe(true);
    expect(s.some((x) => x.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect(s.some((x) => x.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('carries no merchant, customer or request id, nor any raw URL, in any label', async () => {
    const customer = (await m.live.post('/customers', { email: 'labels@example.com' })).body;
    await m.live.get(`/customers/${customer.id}`);
    await m.live.get(`/customers/${customer.id}?expand=nothing`);
    await request(`${h.app.url}/v1/customers/${customer.id}/nowhere`, { key: m.keys.live });
    const s = await scrape();
    const values = s.flatMap((x) => Object.values(x.labels));
    expect(values.length).toBeGreaterThan(50);
    const forbidden = [m.id, customer.id, m.keys.test, m.keys.live, 'nowhere', 'expand'];
    for (const v of values) {
      for (const f of forbidden) expect(v).not.toContain(f);
      expect(v).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i); // no UUID
      expect(v).not.toMatch(/req_[0-9a-f]{8}/);
    }
    // Routes are patterns from code: a leading slash (or `unmatched`), never a query string.
    const routes = new Set(s.filter((x) => x.labels.route !== undefined).map((x) => x.labels.route));
    for (const r of routes) expect(r).toMatch(/^(\/[A-Za-z0-9_\-{}.*/,:]*|unmatched)$/);
    expect(routes.has('/v1/customers/{id}')).toBe(true);
  });
});

describe('GET /metrics under the METRICS setting', () => {
  it('off: 404 as any unknown URL; open: served without a key; operator without ADMIN_TOKEN: 404', async () => {
    for (const [overrides, key, status] of [
      [{ metrics: 'off' }, ADMIN_TOKEN, 404],
      [{ metrics: 'open' }, undefined, 200],
      [{ metrics: 'operator', adminToken: undefined }, undefined, 404],
    ] as const) {
      const s = await startTestApp(overrides);
      try {
        const r = await request(`${s.url}/metrics`, { key });
        expect(r.status).toBe(status);
        if (status === 404) expect(r.body.error.code).toBe('resource_not_found');
        else expect(parseExposition(r.text).samples.length).toBeGreaterThan(10);
      } finally {
        await s.close();
      }
    }
    // Each starts a service of its own (a fresh database, every migration).
  }, 300_000);
});

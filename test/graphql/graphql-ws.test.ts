/**
 * The GraphQL WebSocket channel (graphql-ws) under the rules of HTTP: a retired key is cut (4401) or refused
 * (`invalid_api_key`), every operation counts against the key's rate limit, subscriptions per socket and sockets per
 * key are capped (4429), a bad document answers an error and leaves the socket open, and one change is read once
 * however many subscribers it reaches, each of them only ever seeing its own merchant's and mode's records.
 */
import type { Client as WsClient } from 'graphql-ws';
import { Client as PgClient } from 'pg';
import WebSocket from 'ws';
import { eventually, TestMerchant, useHarness, sleep } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect as connectProvider, createPayment, pay } from '../payments/helpers';

const MAX_SUBSCRIPTIONS = 10;
const MAX_SOCKETS = 3;

const h = useHarness({ wsMaxSubscriptionsPerSocket: MAX_SUBSCRIPTIONS, wsMaxSocketsPerKey: MAX_SOCKETS });

const wsClient = useWsClients(h);

interface Closed {
  code: number;
  reason: string;
}

interface Sock {
  client: WsClient;
  /** The first close of the socket. */
  closed: Promise<Closed>;
  closedWith(): Closed | null;
}

/** Opens a socket with the key (connection_init); resolves once it is acknowledged or closed. */
async function openSocket(key: string): Promise<Sock> {
  let closedWith: Closed | null = null;
  let onClosed!: (e: Closed) => void;
  const closed = new Promise<Closed>((r) => (onClosed = r));
  let settle!: () => void;
  const settled = new Promise<void>((r) => (settle = r));
  const client = wsClient(key, {
    lazy: false,
    onNonLazyError: () => undefined,
    on: {
      connected: () => settle(),
      closed: (e) => {
        const { code, reason } = e as Closed;
        closedWith ??= { code, reason };
        onClosed(closedWith);
        settle();
      },
    },
  });
  await settled;
  return { client, closed, closedWith: () => closedWith };
}

interface Outcome {
  data?: any;
  errors?: any[];
  /** The socket closed before the operation was answered. */
  closed?: Closed;
}

/** Runs one query or mutation over the socket. */
function run(client: WsClient, query: string, variables?: Record<string, unknown>): Promise<Outcome> {
  return new Promise((resolve) => {
    let last: any;
    client.subscribe(
      { query, variables },
      {
        next: (v) => {
          last = v;
        },
        error: (e) => resolve(Array.isArray(e) ? { errors: e } : { closed: e as Closed }),
        complete: () => resolve({ data: last?.data, errors: last?.errors }),
      },
    );
  });
}

interface Watch {
  events: any[];
  errors: any[];
  done: boolean;
  stop(): void;
}

/** A subscription that collects what it receives. */
function watch(client: WsClient, query: string, variables?: Record<string, unknown>): Watch {
  const w: Watch = { events: [], errors: [], done: false, stop: () => undefined };
  w.stop = client.subscribe(
    { query, variables },
    {
      next: (v) => {
        if (v.errors) w.errors.push(...v.errors);
        else w.events.push(v.data);
      },
      error: (e) => {
        w.errors.push(e);
        w.done = true;
      },
      complete: () => {
        w.done = true;
      },
    },
  );
  return w;
}

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`not settled within ${ms} ms`)))]);

const count = async (sql: string, params: unknown[]) =>
  Number((await h.app.orm.em.getConnection().execute(sql, params))[0].n);

const CREATE_ENDPOINT =
  'mutation { createWebhookEndpoint(input: { url: "http://127.0.0.1:9/hook", mode: TEST }) { id secret } }';
const endpointsOf = (m: TestMerchant) =>
  count('select count(*) as n from webhook_endpoints where merchant_id = ?', [m.id]);
const PAYMENT_UPDATED = 'subscription($id: ID) { paymentUpdated(id: $id) { id status } }';

describe('a retired key', () => {
  it('grace_seconds 0: an open socket is closed with 4401 at once, and the old key does nothing more over a socket', async () => {
    const x = await h.merchant();
    const s = await openSocket(x.keys.test);
    expect((await run(s.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: x.id } });
    const sub = watch(s.client, PAYMENT_UPDATED);
    await sleep(200);

    const rolled = await x.test.post('/api-keys/roll', { grace_seconds: 0 });
    expect(rolled.status).toBe(200);
    // Pushed by the roll's change: no operation needed for the socket to go.
    expect(await within(s.closed, 3000)).toEqual({ code: 4401, reason: 'Unauthorized' });
    expect(await eventually(() => sub.done)).toBe(true);

    // A new socket with the old key is refused at connection_init; nothing is created.
    const again = await openSocket(x.keys.test);
    expect(again.closedWith()?.code).toBe(4403);
    expect(await endpointsOf(x)).toBe(0);
    // The new key works over a socket.
    const fresh = await openSocket(rolled.body.secret_key);
    expect((await run(fresh.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: x.id } });
  });

  it('an operation sent right after the roll is refused (invalid_api_key, then 4401) and creates nothing', async () => {
    const x = await h.merchant();
    const s = await openSocket(x.keys.test);
    expect((await run(s.client, '{ merchant { id } }')).data).toBeDefined();
    expect((await x.test.post('/api-keys/roll', { grace_seconds: 0 })).status).toBe(200);
    const r = await run(s.client, CREATE_ENDPOINT);
    // Either the operation's answer or the push's close comes first (then the client, retrying the operation on a new
    // connection with the retired key, is refused at connection_init: 4403); the endpoint is never created.
    if (r.errors) {
      expect(r.errors[0].extensions).toMatchObject({
        code: 'invalid_api_key',
        type: 'authentication_error',
        http: { status: 401 },
      });
    } else {
      expect([4401, 4403]).toContain(r.closed?.code);
    }
    expect((await within(s.closed, 3000)).code).toBe(4401);
    expect(await endpointsOf(x)).toBe(0);
  });

  it('is checked again on every operation, also when no roll was announced (key cache expiry)', async () => {
    const x = await h.merchant();
    const s = await openSocket(x.keys.test);
    expect((await run(s.client, '{ merchant { id } }')).data).toBeDefined();
    // Expired behind the service's back: no NOTIFY, so only the per-operation check (after the 5 s key cache) sees it.
    await h.app.orm.em
      .getConnection()
      .execute(`update api_keys set expires_at = now() where merchant_id = ? and mode = 'test'`, [x.id]);
    await sleep(5300);
    expect(s.closedWith()).toBeNull();
    const r = await run(s.client, CREATE_ENDPOINT);
    expect(r.errors?.[0].extensions).toMatchObject({
      code: 'invalid_api_key',
      type: 'authentication_error',
      http: { status: 401 },
    });
    expect(r.errors?.[0].extensions.requestId).toMatch(/^req_/);
    expect((await within(s.closed, 3000)).code).toBe(4401);
    expect(await endpointsOf(x)).toBe(0);
  }, 20_000);

  it('with a grace period, the socket keeps working until the key expires, then is closed with 4401', async () => {
    const x = await h.merchant();
    const s = await openSocket(x.keys.test);
    const rolled = await x.test.post('/api-keys/roll', { grace_seconds: 2 });
    expect(rolled.status).toBe(200);
    const expires = Date.parse(rolled.body.previous_key_expires_at);
    await sleep(300);
    expect((await run(s.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: x.id } });
    expect(s.closedWith()).toBeNull();
    // A socket opened during the grace period is cut at the same moment.
    const late = await openSocket(x.keys.test);
    expect(late.closedWith()).toBeNull();
    const [a, b] = await within(Promise.all([s.closed, late.closed]), 5000);
    expect([a.code, b.code]).toEqual([4401, 4401]);
    expect(Date.now()).toBeGreaterThanOrEqual(expires);
    expect(Date.now() - expires).toBeLessThan(1500);
  });
});

describe('rate limit', () => {
  it('every operation on a socket counts against the key, in the same budget as HTTP; over it, the socket stays open', async () => {
    const slow = await h.merchant({ rate_limit_per_second: 5 });
    const s = await openSocket(slow.keys.test);
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        run(s.client, 'mutation($n: String!) { createProduct(input: { name: $n, type: ONE_TIME }) { id } }', {
          n: `P${i}`,
        }),
      ),
    );
    // HTTP shares the budget the socket used up.
    const http = await slow.test.get('/products');
    expect(http.status).toBe(429);

    const ok = outcomes.filter((o) => o.data?.createProduct);
    const limited = outcomes.filter((o) => o.errors?.[0]?.extensions?.code === 'rate_limited');
    expect(ok.length + limited.length).toBe(30);
    expect(ok.length).toBeGreaterThanOrEqual(5);
    expect(ok.length).toBeLessThanOrEqual(10); // 5 a second, bursts of twice that
    const e = limited[0].errors![0];
    expect(e.extensions).toMatchObject({
      code: 'rate_limited',
      type: 'rate_limit_error',
      param: null,
      http: { status: 429 },
    });
    expect(e.extensions.http.headers['Retry-After']).toMatch(/^\d+$/);
    expect(e.message).toMatch(/Too many requests/);
    // A refused mutation changes nothing.
    expect(await count('select count(*) as n from products where merchant_id = ?', [slow.id])).toBe(ok.length);

    expect(s.closedWith()).toBeNull();
    await sleep(1100);
    expect((await run(s.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: slow.id } });
  });
});

describe('caps', () => {
  it(`at most ${MAX_SUBSCRIPTIONS} subscriptions per socket: one more is answered rate_limited, the rest keep running`, async () => {
    const c = await h.merchant();
    const s = await openSocket(c.keys.test);
    const subs = Array.from({ length: MAX_SUBSCRIPTIONS }, () => watch(s.client, PAYMENT_UPDATED));
    await sleep(400);
    const over = await run(s.client, PAYMENT_UPDATED);
    expect(over.errors?.[0].extensions).toMatchObject({
      code: 'rate_limited',
      type: 'rate_limit_error',
      http: { status: 429 },
    });
    expect(over.errors?.[0].message).toMatch(new RegExp(`at most ${MAX_SUBSCRIPTIONS}`));
    expect(subs.every((w) => !w.done && w.errors.length === 0)).toBe(true);
    // Queries are not subscriptions: still answered on the full socket.
    expect((await run(s.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: c.id } });
    // Completing one frees its place.
    subs[0].stop();
    await sleep(200);
    const next = watch(s.client, PAYMENT_UPDATED);
    await sleep(300);
    expect(next.done).toBe(false);
    expect(next.errors).toEqual([]);
    expect(s.closedWith()).toBeNull();
  });

  it(`at most ${MAX_SOCKETS} sockets per key: one more is closed with 4429 at connection_init`, async () => {
    const c = await h.merchant();
    const open = [];
    for (let i = 0; i < MAX_SOCKETS; i++) open.push(await openSocket(c.keys.test));
    expect(open.every((s) => s.closedWith() === null)).toBe(true);
    const refused = await openSocket(c.keys.test);
    expect(refused.closedWith()).toEqual({ code: 4429, reason: 'Too many connections for this API key' });
    // Per key: the merchant's other mode is unaffected.
    const live = await openSocket(c.keys.live);
    expect(live.closedWith()).toBeNull();
    // A closed socket frees its place.
    await open[0].client.dispose();
    await sleep(200);
    const later = await openSocket(c.keys.test);
    expect(later.closedWith()).toBeNull();
    expect((await run(later.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: c.id } });
  });

  it('a message over 1 MiB closes the socket (1009); one under it is answered', async () => {
    const c = await h.merchant();
    const s = await openSocket(c.keys.test);
    const padded = (n: number) => `{ merchant { id } } # ${'x'.repeat(n)}`;
    expect((await run(s.client, padded(500_000))).data).toEqual({ merchant: { id: c.id } });
    const r = await run(s.client, padded(1_100_000));
    expect(r.closed?.code).toBe(1009);
  });
});

describe('bad documents', () => {
  it('a syntax error or an over-limit document answers an error for that operation; the socket keeps working', async () => {
    const c = await h.merchant();
    const s = await openSocket(c.keys.test);
    const sub = watch(s.client, PAYMENT_UPDATED);

    const syntax = await run(s.client, '{ merchant { id }');
    expect(syntax.errors?.[0].extensions).toMatchObject({
      code: 'parameter_invalid',
      type: 'invalid_request_error',
      http: { status: 400 },
    });
    expect(syntax.errors?.[0].message).toMatch(/Syntax Error/);

    const aliases = await run(
      s.client,
      `{ ${Array.from({ length: 21 }, (_, i) => `a${i}: merchant { id }`).join(' ')} }`,
    );
    expect(aliases.errors?.[0].extensions).toMatchObject({ code: 'query_too_complex', http: { status: 400 } });
    expect(aliases.errors?.[0].message).toMatch(/Aliases limit of 20/);

    const deep = await run(
      s.client,
      `{ __schema { types { fields { type { ${'ofType { '.repeat(400)}name${' }'.repeat(400)} } } } } }`,
    );
    expect(deep.errors?.[0].extensions).toMatchObject({ code: 'query_too_complex', http: { status: 400 } });

    const tokens = await run(s.client, `{ ${'merchant { id } '.repeat(1500)} }`);
    expect(tokens.errors?.[0].extensions).toMatchObject({ code: 'query_too_complex', http: { status: 400 } });

    // Nested past what graphql-js's recursive parser survives, inside the token limit.
    const nested = await run(s.client, `{ merchant(x: ${'['.repeat(2400)}${']'.repeat(2400)}) { id } }`);
    expect(nested.errors?.[0].extensions).toMatchObject({ code: 'query_too_complex', http: { status: 400 } });
    const unknown = await run(s.client, '{ nope }');
    expect(unknown.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', http: { status: 400 } });

    const twoOps = await run(s.client, 'query A { merchant { id } } query B { merchant { name } }');
    expect(twoOps.errors?.[0].extensions).toMatchObject({ code: 'parameter_invalid', http: { status: 400 } });

    expect(s.closedWith()).toBeNull();
    expect(sub.done).toBe(false);
    expect((await run(s.client, '{ merchant { id } }')).data).toEqual({ merchant: { id: c.id } });
    // An operation the resolvers refuse answers in the same terms.
    const missing = await run(s.client, '{ payment(id: "00000000-0000-7000-8000-000000000000") { id } }');
    expect(missing.errors?.[0].extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
  });
});

/** A graphql-ws socket driven by hand, for messages the client library cannot build (it stringifies recursively). */
async function rawSocket(key: string) {
  const ws = new WebSocket(`${h.app.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  const inbox: any[] = [];
  ws.on('message', (d) => inbox.push(JSON.parse(String(d))));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = async () => {
    expect(await eventually(() => inbox.length > 0)).toBe(true);
    return inbox.shift();
  };
  ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } }));
  expect(await next()).toEqual({ type: 'connection_ack' });
  return { ws, next };
}

describe('over-deep variables', () => {
  it('are refused before anything walks them (parameter_invalid, as over HTTP); the socket keeps working', async () => {
    const c = await h.merchant();
    await connectProvider(c.test, 'stripe');
    const { ws, next } = await rawSocket(c.keys.test);
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const query = 'mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id } }';
    ws.send(
      `{"id":"d","type":"subscribe","payload":{"query":${JSON.stringify(query)},"variables":{"input":` +
        `{"amount":49900,"currency":"INR","customerEmail":"a@example.com","metadata":${deep}}}}}`,
    );
    const answer = await next();
    expect(answer).toMatchObject({ id: 'd', type: 'error' });
    expect(answer.payload[0].extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'input',
      http: { status: 400 },
    });
    expect(answer.payload[0].message).toMatch(/nested too deeply/);
    expect(await count('select count(*) as n from payments where merchant_id = ?', [c.id])).toBe(0);

    ws.send(JSON.stringify({ id: 'q', type: 'subscribe', payload: { query: '{ merchant { id } }' } }));
    expect(await next()).toEqual({ id: 'q', type: 'next', payload: { data: { merchant: { id: c.id } } } });
    ws.close();
  });
});

describe('fan-out', () => {
  it('one payment change reaches every subscriber of its merchant and mode with one read, and nobody else', async () => {
    const a = await h.merchant();
    const b = await h.merchant();
    await connectProvider(a.test, 'stripe');
    await connectProvider(b.test, 'stripe');
    const p = await createPayment(a.test);

    // A's subscribers: 3 sockets x 10 subscriptions (half of them by id).
    const mine: Watch[] = [];
    for (let i = 0; i < MAX_SOCKETS; i++) {
      const s = await openSocket(a.keys.test);
      for (let j = 0; j < MAX_SUBSCRIPTIONS; j++)
        mine.push(watch(s.client, PAYMENT_UPDATED, j % 2 ? { id: p.id } : {}));
    }
    // Others: merchant B (everything, and A's payment by id) and A's live mode.
    const bs = await openSocket(b.keys.test);
    const live = await openSocket(a.keys.live);
    const others = [
      watch(bs.client, PAYMENT_UPDATED),
      watch(bs.client, PAYMENT_UPDATED, { id: p.id }),
      watch(live.client, PAYMENT_UPDATED),
      watch(live.client, PAYMENT_UPDATED, { id: p.id }),
    ];
    await sleep(600);

    // The change as the service announces it, NOTIFYed from outside so only the fan-out's reads are counted.
    const pg = new PgClient({ connectionString: h.app.databaseUrl });
    await pg.connect();
    try {
      h.app.sql.reset();
      const change = { topic: 'payment', merchantId: a.id, mode: 'test', id: p.id };
      await pg.query('select pg_notify($1, $2)', ['cadence_changes', JSON.stringify(change)]);
      expect(await eventually(() => mine.every((w) => w.events.length === 1))).toBe(true);
      const reads = h.app.sql.count;
      // 30 subscribers, one read of the payment (once per subscriber before: 30).
      expect(reads).toBeLessThanOrEqual(2);
    } finally {
      await pg.end();
    }
    for (const w of mine) {
      expect(w.errors).toEqual([]);
      expect(w.events).toEqual([{ paymentUpdated: { id: p.id, status: 'PENDING' } }]);
    }
    await sleep(300);
    for (const w of others) {
      expect(w.events).toEqual([]);
      expect(w.errors).toEqual([]);
    }

    // B's own change reaches B only.
    const bp = await createPayment(b.test);
    await pay(b.test, bp);
    await eventually(() => others[0].events.length > 0);
    await sleep(300);
    expect(others[0].events.at(-1)).toEqual({ paymentUpdated: { id: bp.id, status: 'SUCCEEDED' } });
    expect(others[0].events.every((e) => e.paymentUpdated.id === bp.id)).toBe(true);
    expect(mine.every((w) => w.events.length === 1)).toBe(true);
    expect(others.slice(1).every((w) => w.events.length === 0)).toBe(true);
  });
});

import { TestMerchant, useHarness } from '../harness';
import {
  connect,
  countRows,
  createPayment,
  modeOf,
  pay,
  paymentBody,
  postEvent,
  PROVIDERS,
  sandboxCredentials,
  stripeEvent,
} from '../payments/helpers';

/** Gateway connections and their sandbox credentials (docs/sandbox.md). */

const h = useHarness();

describe.each(PROVIDERS)('%s connections', (provider) => {
  let m: TestMerchant;
  beforeEach(async () => {
    m = await h.merchant();
  });

  it('connects, never returns the credentials, lists and deletes', async () => {
    const credentials = sandboxCredentials(provider, 'test');
    const r = await m.test.post('/providers/connections', { provider, credentials });
    expect(r.status).toBe(201);
    const c = r.body;
    expect(Object.keys(c).sort()).toEqual(
      expect.arrayContaining([
        'id',
        'object',
        'provider',
        'mode',
        'status',
        'is_default',
        'credentials_hint',
        'webhook_url',
        'created_at',
      ]),
    );
    expect(c).toMatchObject({
      object: 'provider_connection',
      provider,
      mode: 'test',
      status: 'active',
      is_default: true,
    });
    expect(c).not.toHaveProperty('credentials');
    const id = provider === 'stripe' ? credentials.secret_key : credentials.key_id;
    expect(c.credentials_hint).toBe(`${id.slice(0, provider === 'stripe' ? 8 : 9)}...${id.slice(-4)}`);
    const secrets = Object.values(credentials);
    const list = await m.test.get('/providers/connections');
    expect(list.status).toBe(200);
    // The list envelope, like every other list; over GraphQL a Relay
    // connection.
    expect(list.body).toEqual({
      object: 'list',
      data: [expect.objectContaining({ id: c.id })],
      has_more: false,
      next_cursor: null,
    });
    const g = await m.test.gql(
      '{ providerConnections { edges { node { id provider mode isDefault credentialsHint webhookUrl } } totalCount } }',
    );
    expect(g.data.providerConnections.totalCount).toBe(1);
    expect(g.data.providerConnections.edges.map((e: any) => e.node)).toEqual([
      {
        id: c.id,
        provider: provider.toUpperCase(),
        mode: 'TEST',
        isDefault: true,
        credentialsHint: c.credentials_hint,
        webhookUrl: c.webhook_url,
      },
    ]);
    for (const text of [r.text, list.text, JSON.stringify(g)]) for (const s of secrets) expect(text).not.toContain(s);
    // Stored sealed: no secret in the row.
    const [row] = await h.app.orm.em.getConnection().execute('select * from provider_connections where id = ?', [c.id]);
    for (const s of secrets) expect(JSON.stringify(row)).not.toContain(s);
    // The sandbox, which the connect call registered a webhook with, seals what it keeps too (docs/sandbox.md) ...
    const sandboxRows = await h.app.orm.em
      .getConnection()
      .execute(
        'select (select json_agg(w) from sandbox_webhooks w) as hooks, (select json_agg(k) from sandbox_idempotency_keys k) as keys',
      );
    expect(JSON.stringify(sandboxRows[0].hooks)).toContain(provider); // the rows are there
    for (const s of secrets) expect(JSON.stringify(sandboxRows)).not.toContain(s);
    // ... and still signs its gateway webhooks with the secret: a payment completes through them.
    const paid = await pay(m.test, await createPayment(m.test));
    expect(paid.payment.status).toBe('succeeded');

    const arr = list.body.data;
    expect(arr.map((x: any) => x.id)).toEqual([c.id]);

    const del = await m.test.delete(`/providers/connections/${c.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ id: c.id, object: 'provider_connection', deleted: true });
    const after = await m.test.get('/providers/connections');
    expect(after.body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    const again = await m.test.delete(`/providers/connections/${c.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('resource_not_found');

    // Its webhook URL is gone too.
    const ev = stripeEvent(credentials.webhook_secret, 'checkout.session.completed', {});
    expect((await postEvent(c.webhook_url, ev)).status).toBe(404);

    // No connection: 409 provider_not_connected.
    const p = await m.test.post('/payments', paymentBody());
    expect(p.status).toBe(409);
    expect(p.body.error).toMatchObject({ type: 'invalid_request_error', code: 'provider_not_connected' });
    const named = await m.test.post('/payments', paymentBody({ provider }));
    expect(named.status).toBe(409);
    expect(named.body.error).toMatchObject({ code: 'provider_not_connected', param: 'provider' });

    // And it can be connected again.
    const re = await m.test.post('/providers/connections', {
      provider,
      credentials: sandboxCredentials(provider, 'test'),
    });
    expect(re.status).toBe(201);
    expect(re.body.id).not.toBe(c.id);
  });

  const bad: [string, Record<string, string>][] =
    provider === 'stripe'
      ? [
          ['a live key in test mode', { secret_key: 'sk_live_abcdefabcdefabcdef', webhook_secret: 'whsec_not-shown' }],
          ['a publishable key', { secret_key: 'pk_test_abcdefabcdefabcdef', webhook_secret: 'whsec_not-shown' }],
          [
            'a webhook secret without whsec_',
            { secret_key: 'sk_test_abcdefabcdefabcdef', webhook_secret: 'not-a-signing-secret' },
          ],
        ]
      : [
          [
            'a live key id in test mode',
            { key_id: 'rzp_live_abcdefabcdef', key_secret: 'secret-one-1234', webhook_secret: 'secret-two-5678' },
          ],
          [
            'a key id of another kind',
            { key_id: 'key_abcdefabcdef', key_secret: 'secret-one-1234', webhook_secret: 'secret-two-5678' },
          ],
        ];
  it.each(bad)('rejects %s: 400 parameter_invalid on credentials, nothing stored', async (_label, credentials) => {
    const r = await m.test.post('/providers/connections', { provider, credentials });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'parameter_invalid',
      param: 'credentials',
    });
    for (const s of Object.values(credentials)) expect(r.text).not.toContain(s);
    expect(await countRows(h.app, 'provider_connections', 'merchant_id = ?', [m.id])).toBe(0);
  });

  it('a live-mode connection takes live keys only', async () => {
    const r = await m.live.post('/providers/connections', {
      provider,
      credentials: sandboxCredentials(provider, 'test'),
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'credentials' });
    const ok = await m.live.post('/providers/connections', {
      provider,
      credentials: sandboxCredentials(provider, 'live'),
    });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ mode: 'live', is_default: true });
    const p = await createPayment(m.live);
    expect(p.livemode).toBe(true);
    expect((await pay(m.live, p)).payment.status).toBe('succeeded');
  });

  it('checks the shape of credentials', async () => {
    const full = sandboxCredentials(provider, 'test');
    const missingKey = provider === 'stripe' ? 'webhook_secret' : 'key_secret';
    const { [missingKey]: _gone, ...missing } = full;
    const r1 = await m.test.post('/providers/connections', { provider, credentials: missing });
    expect(r1.status).toBe(400);
    expect(r1.body.error).toMatchObject({ code: 'parameter_missing', param: `credentials.${missingKey}` });
    const foreign = provider === 'stripe' ? { key_id: 'rzp_test_x' } : { secret_key: 'sk_test_x' };
    const r2 = await m.test.post('/providers/connections', { provider, credentials: { ...full, ...foreign } });
    expect(r2.status).toBe(400);
    expect(r2.body.error.code).toBe('parameter_unknown');
    const r3 = await m.test.post('/providers/connections', { provider: 'paypal', credentials: full });
    expect(r3.status).toBe(400);
    expect(r3.body.error).toMatchObject({ code: 'parameter_invalid', param: 'provider' });
    const r4 = await m.test.post('/providers/connections', { provider });
    expect(r4.status).toBe(400);
    expect(r4.body.error).toMatchObject({ code: 'parameter_missing', param: 'credentials' });
    expect(await countRows(h.app, 'provider_connections', 'merchant_id = ?', [m.id])).toBe(0);
  });

  it('one connection per provider and mode: 409 provider_already_connected, also when racing', async () => {
    await connect(m.test, provider);
    const dup = await m.test.post('/providers/connections', {
      provider,
      credentials: sandboxCredentials(provider, 'test'),
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ type: 'invalid_request_error', code: 'provider_already_connected' });

    // The other mode is separate.
    const live = await m.live.post('/providers/connections', {
      provider,
      credentials: sandboxCredentials(provider, 'live'),
    });
    expect(live.status).toBe(201);
    expect(live.body).toMatchObject({ mode: 'live', is_default: true });

    const other = await h.merchant();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        other.test.post('/providers/connections', { provider, credentials: sandboxCredentials(provider, 'test') }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body.error.code).toBe('provider_already_connected');
    }
    expect(await countRows(h.app, 'provider_connections', 'merchant_id = ? and mode = ?', [other.id, 'test'])).toBe(1);
    const list = await other.test.get('/providers/connections');
    const arr = list.body.data;
    expect(arr).toHaveLength(1);
    expect(arr[0].is_default).toBe(true);
    // The winner works end to end.
    const p = await createPayment(other.test);
    expect((await pay(other.test, p)).payment.status).toBe('succeeded');
  });
});

describe('sandbox secrets stored before sealing', () => {
  it('are sealed when the sandbox starts, and events are still signed with them', async () => {
    const m = await h.merchant();
    const credentials = sandboxCredentials('razorpay', 'test');
    expect((await m.test.post('/providers/connections', { provider: 'razorpay', credentials })).status).toBe(201);
    const conn = h.app.orm.em.getConnection();
    // As an older version stored it: in plain text.
    await h.sandbox.stop();
    await conn.execute(
      `update sandbox_webhooks set secret = ? where provider = 'razorpay'
      and account_key = (select account_key from sandbox_webhooks where provider = 'razorpay' order by created_at desc limit 1)`,
      [credentials.webhook_secret],
    );
    expect(JSON.stringify(await conn.execute('select secret from sandbox_webhooks'))).toContain(
      credentials.webhook_secret,
    );
    await h.sandbox.start();
    expect(JSON.stringify(await conn.execute('select secret from sandbox_webhooks'))).not.toContain(
      credentials.webhook_secret,
    );
    const paid = await pay(m.test, await createPayment(m.test));
    expect(paid.payment.status).toBe('succeeded');
  });
});

describe('sandbox answers stored before sealing', () => {
  it('have their secret sealed when the sandbox starts; payments still go through', async () => {
    const m = await h.merchant();
    const credentials = sandboxCredentials('stripe', 'test');
    expect((await m.test.post('/providers/connections', { provider: 'stripe', credentials })).status).toBe(201);
    const conn = h.app.orm.em.getConnection();
    // The webhook endpoint's stored answer, as an older version kept it: its secret in plain text.
    const [stored] = await conn.execute(`select id from sandbox_idempotency_keys
      where provider = 'stripe' and response->>'object' = 'webhook_endpoint' order by created_at desc limit 1`);
    await h.sandbox.stop();
    await conn.execute(
      `update sandbox_idempotency_keys set response = jsonb_set(response, '{secret}', to_jsonb(?::text)) where id = ?`,
      [credentials.webhook_secret, stored.id],
    );
    expect(JSON.stringify(await conn.execute('select response from sandbox_idempotency_keys'))).toContain(
      credentials.webhook_secret,
    );
    await h.sandbox.start();
    expect(JSON.stringify(await conn.execute('select response from sandbox_idempotency_keys'))).not.toContain(
      credentials.webhook_secret,
    );
    const paid = await pay(m.test, await createPayment(m.test));
    expect(paid.payment.status).toBe('succeeded');
  });
});

describe('default connection', () => {
  it('the first connection of a mode is the default; is_default moves it; deleting the default promotes another', async () => {
    const m = await h.merchant();
    const s = await connect(m.test, 'stripe');
    expect(s.connection.is_default).toBe(true);
    const r = await connect(m.test, 'razorpay');
    expect(r.connection.is_default).toBe(false);
    expect((await createPayment(m.test)).provider).toBe('stripe');

    const list = async () => {
      const got = await m.test.get('/providers/connections');
      return Object.fromEntries(
        (Array.isArray(got.body) ? got.body : got.body.data).map((c: any) => [c.provider, c.is_default]),
      );
    };
    expect(await list()).toEqual({ stripe: true, razorpay: false });

    await m.test.delete(`/providers/connections/${s.connection.id}`);
    expect(await list()).toEqual({ razorpay: true });
    expect((await createPayment(m.test)).provider).toBe('razorpay');

    const s2 = await connect(m.test, 'stripe', { is_default: true });
    expect(s2.connection.is_default).toBe(true);
    expect(await list()).toEqual({ stripe: true, razorpay: false });
    expect((await createPayment(m.test)).provider).toBe('stripe');
    expect(modeOf(m.test)).toBe('test');
  });

  it('a payment keeps its connection; deleting the connection of a paid payment makes refunds answer provider_not_connected', async () => {
    const m = await h.merchant();
    const s = await connect(m.test, 'stripe');
    const p = await createPayment(m.test);
    await pay(m.test, p);
    expect((await m.test.delete(`/providers/connections/${s.connection.id}`)).status).toBe(200);
    const r = await m.test.post(`/payments/${p.id}/refund`, {});
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('provider_not_connected');
    expect((await m.test.get(`/payments/${p.id}`)).body).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
  });
});

/**
 * The operator API (docs/api.md): POST /v1/admin/merchants validation, the answer, keys stored only as
 * hashes, and a new merchant's empty catalog.
 */
import crypto from 'node:crypto';
import { ADMIN_TOKEN, Client_, request, useHarness } from '../harness';
import { gqlRequest, REQUEST_ID } from '../harness/http';

const h = useHarness();

const create = (body: unknown) =>
  request(`${h.app.url}/v1/admin/merchants`, { key: ADMIN_TOKEN, method: 'POST', body });
const merchantCount = async () =>
  Number((await h.app.orm.em.getConnection().execute('select count(*)::int as n from merchants'))[0].n);
const keyCount = async () =>
  Number((await h.app.orm.em.getConnection().execute('select count(*)::int as n from api_keys'))[0].n);

describe('validation', () => {
  const cases: [string, unknown, string, string | null][] = [
    ['missing name', {}, 'parameter_missing', 'name'],
    ['null name', { name: null }, 'parameter_invalid', 'name'], // as for every required field sent as null
    ['empty name', { name: '' }, 'parameter_missing', 'name'],
    ['blank name', { name: '   ' }, 'parameter_missing', 'name'],
    ['name not a string', { name: 42 }, 'parameter_invalid', 'name'],
    ['state_code of 1 digit', { name: 'A', state_code: '7' }, 'parameter_invalid', 'state_code'],
    ['state_code of 3 digits', { name: 'A', state_code: '290' }, 'parameter_invalid', 'state_code'],
    ['state_code of letters', { name: 'A', state_code: 'KA' }, 'parameter_invalid', 'state_code'],
    ['state_code as a number', { name: 'A', state_code: 29 }, 'parameter_invalid', 'state_code'],
    ['short gstin', { name: 'A', gstin: '29ABCDE1234F1Z' }, 'parameter_invalid', 'gstin'],
    ['gstin with a wrong check character', { name: 'A', gstin: '29ABCDE1234F1Z5' }, 'parameter_invalid', 'gstin'],
    ['gstin without a state', { name: 'A', gstin: 'XXABCDE1234F1Z5' }, 'parameter_invalid', 'gstin'],
    ['unknown currency', { name: 'A', reporting_currency: 'XYZ' }, 'parameter_invalid', 'reporting_currency'],
    ['currency too long', { name: 'A', reporting_currency: 'INRR' }, 'parameter_invalid', 'reporting_currency'],
    ['rate limit 0', { name: 'A', rate_limit_per_second: 0 }, 'parameter_invalid', 'rate_limit_per_second'],
    ['rate limit negative', { name: 'A', rate_limit_per_second: -5 }, 'parameter_invalid', 'rate_limit_per_second'],
    ['rate limit fractional', { name: 'A', rate_limit_per_second: 1.5 }, 'parameter_invalid', 'rate_limit_per_second'],
    ['rate limit as text', { name: 'A', rate_limit_per_second: '10' }, 'parameter_invalid', 'rate_limit_per_second'],
    ['unknown field', { name: 'A', bogus_field: 1 }, 'parameter_unknown', 'bogus_field'],
    ['camelCase field', { name: 'A', reportingCurrency: 'USD' }, 'parameter_unknown', 'reportingCurrency'],
    ['body not an object', ['A'], 'parameter_invalid', null],
  ];

  it.each(cases)('%s: 400, nothing created', async (_name, body, code, param) => {
    const [merchants, keys] = [await merchantCount(), await keyCount()];
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
    expect([await merchantCount(), await keyCount()]).toEqual([merchants, keys]);
  });
});

describe('a new merchant', () => {
  it('answers 201 with its fields and one test and one live key', async () => {
    const r = await create({
      name: '  Acme Pvt Ltd  ',
      gstin: '29ABCDE1234F1ZW',
      reporting_currency: 'usd',
      rate_limit_per_second: 25,
    });
    expect(r.status).toBe(201);
    expect(r.headers.get('request-id')).toMatch(REQUEST_ID);
    expect(r.body).toMatchObject({
      object: 'merchant',
      name: 'Acme Pvt Ltd',
      gstin: '29ABCDE1234F1ZW',
      state_code: '29', // from the GSTIN
      reporting_currency: 'USD',
      rate_limit_per_second: 25,
    });
    expect(r.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(Object.keys(r.body.api_keys).sort()).toEqual(['live', 'test']);
    expect(r.body.api_keys.test).toMatch(/^sk_test_[0-9A-Za-z]{32,}$/);
    expect(r.body.api_keys.live).toMatch(/^sk_live_[0-9A-Za-z]{32,}$/);
    expect(r.body.api_keys.test.slice(8)).not.toBe(r.body.api_keys.live.slice(8));
    // nothing else that looks like key material
    expect(JSON.stringify({ ...r.body, api_keys: null })).not.toMatch(/sk_(test|live)_|hash/i);
  });

  it('defaults: INR, no GSTIN, the server rate limit', async () => {
    const r = await create({ name: 'Plain' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      gstin: null,
      state_code: null,
      reporting_currency: 'INR',
      rate_limit_per_second: null,
    });
    const s = await create({ name: 'Stated', state_code: '07' });
    expect(s.body.state_code).toBe('07');
  });

  it('issues different keys every time', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => create({ name: `M${i}` })));
    const keys = results.flatMap((r) => [r.body.api_keys.test, r.body.api_keys.live]);
    expect(new Set(keys).size).toBe(10);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(5);
  });

  it('stores its keys only as hashes', async () => {
    const r = await create({ name: 'Hashed' });
    const { test, live } = r.body.api_keys as { test: string; live: string };
    const rows: Record<string, unknown>[] = await h.app.orm.em
      .getConnection()
      .execute('select * from api_keys where merchant_id = ?', [r.body.id]);
    expect(rows).toHaveLength(2);
    const dump = JSON.stringify(rows);
    for (const key of [test, live]) {
      expect(dump).not.toContain(key);
      expect(dump).not.toContain(key.slice(8)); // the random part
      expect(dump).not.toContain(key.slice(8, 24)); // nor a large piece of it
      expect(dump).not.toContain(Buffer.from(key).toString('base64'));
    }
    // one row per mode; what is stored is a one-way digest
    const sha = (k: string) => crypto.createHash('sha256').update(k).digest('hex');
    const byMode = Object.fromEntries(rows.map((x) => [x.mode, x]));
    expect(Object.keys(byMode).sort()).toEqual(['live', 'test']);
    expect(byMode.test.key_hash).toBe(sha(test));
    expect(byMode.live.key_hash).toBe(sha(live));
    // nor anywhere in the merchants table
    const merchant = await h.app.orm.em.getConnection().execute('select * from merchants where id = ?', [r.body.id]);
    expect(JSON.stringify(merchant)).not.toContain(test.slice(8, 24));
  });

  it('its keys work, in their own mode, and start with an empty catalog', async () => {
    const r = await create({ name: 'Empty' });
    const test = new Client_(h.app.url, r.body.api_keys.test);
    const live = new Client_(h.app.url, r.body.api_keys.live);
    // another merchant's catalog exists meanwhile
    const other = await h.merchant();
    await other.test.post('/products', { name: 'theirs', type: 'one_time' });
    await other.test.post('/product-families', { name: 'theirs' });
    for (const c of [test, live]) {
      for (const path of ['/products', '/product-families']) {
        expect((await c.get(path)).body).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
      }
      const g = await c.gql('{ merchant { id } products { totalCount } productFamilies { totalCount } }');
      expect(g.data).toEqual({
        merchant: { id: r.body.id },
        products: { totalCount: 0 },
        productFamilies: { totalCount: 0 },
      });
    }
    const p = await live.post('/products', { name: 'Live one', type: 'one_time' });
    expect(p.body.livemode).toBe(true);
    const q = await test.post('/products', { name: 'Test one', type: 'one_time' });
    expect(q.body.livemode).toBe(false);
  });

  it('the operator token reaches createMerchant through GraphQL too; a merchant key does not', async () => {
    const ok = await gqlRequest(
      h.app.url,
      ADMIN_TOKEN,
      'mutation { createMerchant(input: { name: "Via GQL", stateCode: "27" }) { id object stateCode apiKeys { test live } } }',
    );
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.createMerchant).toMatchObject({ object: 'merchant', stateCode: '27' });
    expect(ok.body.data.createMerchant.apiKeys.test).toMatch(/^sk_test_/);
    const m = await h.merchant();
    const before = await merchantCount();
    const no = await gqlRequest(
      h.app.url,
      m.keys.test,
      'mutation { createMerchant(input: { name: "Sneaky" }) { id } }',
    );
    expect(no.body.errors[0].extensions).toMatchObject({ code: 'invalid_api_key', http: { status: 401 } });
    const rest = await request(`${h.app.url}/v1/admin/merchants`, { key: m.keys.live, body: { name: 'Sneaky' } });
    expect(rest.status).toBe(401);
    expect(await merchantCount()).toBe(before);
  });
});

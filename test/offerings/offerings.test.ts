import { TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { attach, ok, offering, order, pkg, product, rnd } from './helpers';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
});

const current = async (c = m.test) => {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await ok(c.get(`/offerings?limit=100${cursor ? `&cursor=${cursor}` : ''}`));
    all.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return all.filter((o) => o.is_current).map((o) => o.id);
};

describe('offerings and packages over REST', () => {
  it('creates, retrieves and lists offerings and packages in the documented shape', async () => {
    const o = await m.test.post('/offerings', {
      lookup_key: 'default',
      name: 'Default',
      description: 'The standard paywall',
      metadata: { team: 'growth' },
    });
    expect(o.status).toBe(201);
    expect(o.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      object: 'offering',
      lookup_key: 'default',
      name: 'Default',
      description: 'The standard paywall',
      is_current: false,
      metadata: { team: 'growth' },
      packages: [],
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const p = await m.test.post('/packages', {
      lookup_key: '$rc_monthly',
      name: 'Monthly',
      description: 'Billed monthly',
    });
    expect(p.status).toBe(201);
    expect(p.body).toEqual({
      id: expect.any(String),
      object: 'package',
      lookup_key: '$rc_monthly',
      name: 'Monthly',
      description: 'Billed monthly',
      product_ids: [],
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
    });
    expect((await m.test.get(`/offerings/${o.body.id}`)).body).toEqual(o.body);
    expect((await m.test.get(`/packages/${p.body.id}`)).body).toEqual(p.body);
    const list = await ok(m.test.get('/offerings?lookup_key=default'));
    expect(list).toEqual({ object: 'list', data: [o.body], has_more: false, next_cursor: null });
    expect((await ok(m.test.get('/packages?lookup_key=$rc_monthly'))).data).toEqual([p.body]);
    expect((await ok(m.test.get('/packages?limit=1'))).data).toHaveLength(1);
  });

  it('answers 409 lookup_key_exists for a taken key, also when creates race', async () => {
    const key = `dup_${rnd()}`;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => m.test.post('/offerings', { lookup_key: key, name: 'Dup' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(7).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'lookup_key_exists',
        param: 'lookup_key',
      });
      expect(r.text).not.toMatch(/constraint|unique|insert/i);
    }
    expect((await ok(m.test.get(`/offerings?lookup_key=${key}`))).data).toHaveLength(1);
    const pk = `$rc_${rnd()}`;
    const packages = await Promise.all(
      Array.from({ length: 6 }, () => m.test.post('/packages', { lookup_key: pk, name: 'P' })),
    );
    expect(packages.map((r) => r.status).sort()).toEqual([201, ...Array(5).fill(409)]);
    // The same key in the other mode, or for another merchant, is another key.
    expect((await m.live.post('/offerings', { lookup_key: key, name: 'Live' })).status).toBe(201);
    expect((await (await h.merchant()).test.post('/offerings', { lookup_key: key, name: 'Other' })).status).toBe(201);
  });

  const BAD: [string, Record<string, unknown>, number, string, string][] = [
    ['/offerings', { name: 'x' }, 400, 'parameter_missing', 'lookup_key'],
    ['/offerings', { lookup_key: 'x' }, 400, 'parameter_missing', 'name'],
    ['/offerings', { lookup_key: 'has space', name: 'x' }, 400, 'parameter_invalid', 'lookup_key'],
    ['/offerings', { lookup_key: 'k'.repeat(201), name: 'x' }, 400, 'parameter_invalid', 'lookup_key'],
    ['/offerings', { lookup_key: 'ok', name: '' }, 400, 'parameter_invalid', 'name'],
    ['/offerings', { lookup_key: 'ok', name: 'n'.repeat(256) }, 400, 'parameter_invalid', 'name'],
    ['/offerings', { lookup_key: 'ok', name: 'x', bogus_field: 1 }, 400, 'parameter_unknown', 'bogus_field'],
    ['/offerings', { lookup_key: 'ok', name: 'x', metadata: { a: 1 } }, 400, 'parameter_invalid', 'metadata.a'],
    [
      '/offerings',
      { lookup_key: 'ok', name: 'x', metadata: { ['k'.repeat(41)]: 'v' } },
      400,
      'parameter_invalid',
      `metadata.${'k'.repeat(41)}`,
    ],
    ['/offerings', { lookup_key: 'ok', name: 'x', metadata: { a: '\ud800' } }, 400, 'parameter_invalid', 'metadata'],
    ['/offerings', { lookup_key: 'ok', name: 'x', is_current: 'yes' }, 400, 'parameter_invalid', 'is_current'],
    [
      '/offerings',
      { lookup_key: 'ok', name: 'x', description: 'd'.repeat(5001) },
      400,
      'parameter_invalid',
      'description',
    ],
    ['/packages', { name: 'x' }, 400, 'parameter_missing', 'lookup_key'],
    ['/packages', { lookup_key: 'tab\tkey', name: 'x' }, 400, 'parameter_invalid', 'lookup_key'],
    ['/packages', { lookup_key: 'ok', name: 'x', product_ids: [] }, 400, 'parameter_unknown', 'product_ids'],
  ];
  it.each(
    BAD.map(
      ([path, body, status, code, param]) =>
        [path, JSON.stringify(body).slice(0, 60), body, status, code, param] as const,
    ),
  )('POST %s %s answers %i %s (%s) and creates nothing', async (path, _label, body, status, code, param) => {
    const before = (await ok(m.test.get(`${path}?limit=100`))).data.length;
    const r = await m.test.post(path, body);
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code, param });
    expect((await ok(m.test.get(`${path}?limit=100`))).data.length).toBe(before);
  });
});

describe('package positions', () => {
  it('appends by default, inserts at a position and shifts the rest, and moves an attached package', async () => {
    const o = await offering(m.test);
    const [a, b, c, d, e] = await Promise.all([1, 2, 3, 4, 5].map(() => pkg(m.test)));
    expect((await attach(m.test, o.id, a.id)).packages.map((p: any) => [p.id, p.position])).toEqual([[a.id, 0]]);
    await attach(m.test, o.id, b.id);
    expect(await order(m.test, o.id)).toEqual([a.id, b.id]);
    await attach(m.test, o.id, c.id, 0); // inserted first: a and b move down
    expect(await order(m.test, o.id)).toEqual([c.id, a.id, b.id]);
    await attach(m.test, o.id, d.id, 1);
    expect(await order(m.test, o.id)).toEqual([c.id, d.id, a.id, b.id]);
    await attach(m.test, o.id, e.id, 99); // past the end: last
    expect(await order(m.test, o.id)).toEqual([c.id, d.id, a.id, b.id, e.id]);
    // Moves: down, up, past the end; the ones between shift
    await attach(m.test, o.id, c.id, 3);
    expect(await order(m.test, o.id)).toEqual([d.id, a.id, b.id, c.id, e.id]);
    await attach(m.test, o.id, e.id, 0);
    expect(await order(m.test, o.id)).toEqual([e.id, d.id, a.id, b.id, c.id]);
    await attach(m.test, o.id, d.id, 50);
    expect(await order(m.test, o.id)).toEqual([e.id, a.id, b.id, c.id, d.id]);
    // Attaching again without a position leaves it where it is (idempotent)
    const again = await attach(m.test, o.id, b.id);
    expect(again.packages.map((p: any) => p.id)).toEqual([e.id, a.id, b.id, c.id, d.id]);
    // The answer of GET /offerings carries the same order
    const listed = (await ok(m.test.get('/offerings?limit=100'))).data.find((x: any) => x.id === o.id);
    expect(listed.packages.map((p: any) => p.id)).toEqual([e.id, a.id, b.id, c.id, d.id]);
    expect(listed.packages[0]).toMatchObject({
      object: 'package',
      lookup_key: e.lookup_key,
      position: 0,
      product_ids: [],
    });
  });

  it('keeps positions dense when attaches and moves race on one offering', async () => {
    const o = await offering(m.test);
    const packages = await Promise.all(Array.from({ length: 12 }, () => pkg(m.test)));
    const results = await Promise.all(
      packages.map((p, i) =>
        m.test.post(`/offerings/${o.id}/packages`, i % 3 ? { package_id: p.id } : { package_id: p.id, position: 0 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    const ids = await order(m.test, o.id); // asserts positions 0..11
    expect([...ids].sort()).toEqual(packages.map((p) => p.id).sort());
    const moves = await Promise.all(
      packages.map((p, i) => m.test.post(`/offerings/${o.id}/packages`, { package_id: p.id, position: (i * 5) % 12 })),
    );
    expect(moves.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect([...(await order(m.test, o.id))].sort()).toEqual(packages.map((p) => p.id).sort());
  });

  it('validates the attach body and the ids', async () => {
    const o = await offering(m.test);
    const p = await pkg(m.test);
    const cases: [unknown, number, string, string | null][] = [
      [{}, 400, 'parameter_missing', 'package_id'],
      [{ package_id: p.id, position: -1 }, 400, 'parameter_invalid', 'position'],
      [{ package_id: p.id, position: 1.5 }, 400, 'parameter_invalid', 'position'],
      [{ package_id: p.id, bogus: true }, 400, 'parameter_unknown', 'bogus'],
      [{ package_id: unknownId() }, 404, 'resource_not_found', 'package_id'],
      [{ package_id: 'not-a-uuid' }, 404, 'resource_not_found', 'package_id'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await m.test.post(`/offerings/${o.id}/packages`, body);
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    }
    const none = await m.test.post(`/offerings/${unknownId()}/packages`, { package_id: p.id });
    expect([none.status, none.body.error.code]).toEqual([404, 'resource_not_found']);
    expect(await order(m.test, o.id)).toEqual([]);
  });

  it('holds at most 50 packages per offering', async () => {
    const o = await offering(m.test);
    const packages = await Promise.all(Array.from({ length: 51 }, () => pkg(m.test)));
    const r = await Promise.all(packages.map((p) => m.test.post(`/offerings/${o.id}/packages`, { package_id: p.id })));
    expect(r.filter((x) => x.status === 200)).toHaveLength(50);
    const refused = r.filter((x) => x.status !== 200);
    expect(refused.map((x) => [x.status, x.body.error.code, x.body.error.param])).toEqual([
      [400, 'parameter_invalid', 'package_id'],
    ]);
    expect(await order(m.test, o.id)).toHaveLength(50);
  });
});

describe('exactly one current offering per merchant and mode', () => {
  it('is_current on create and make-current move the flag; make-current is idempotent', async () => {
    const mm = await h.merchant();
    const a = await offering(mm.test, { is_current: true });
    expect(a.is_current).toBe(true);
    expect(await current(mm.test)).toEqual([a.id]);
    const b = await offering(mm.test, { is_current: true });
    expect(await current(mm.test)).toEqual([b.id]);
    expect((await ok(mm.test.get(`/offerings/${a.id}`))).is_current).toBe(false);
    const c = await offering(mm.test);
    expect(c.is_current).toBe(false);
    const made = await ok(mm.test.post(`/offerings/${c.id}/make-current`));
    expect(made).toMatchObject({ id: c.id, is_current: true });
    expect(await current(mm.test)).toEqual([c.id]);
    expect(await ok(mm.test.post(`/offerings/${c.id}/make-current`))).toMatchObject({ id: c.id, is_current: true });
    expect(await current(mm.test)).toEqual([c.id]);
    // The other mode has its own current offering
    const live = await offering(mm.live, { is_current: true });
    expect(await current(mm.live)).toEqual([live.id]);
    expect(await current(mm.test)).toEqual([c.id]);
    // Another merchant's or mode's offering cannot be made current here
    for (const client of [mm.live, m.test]) {
      const r = await client.post(`/offerings/${c.id}/make-current`);
      expect([r.status, r.body.error.code]).toEqual([404, 'resource_not_found']);
    }
    expect(await current(mm.test)).toEqual([c.id]);
  });

  it('stays exactly one when creates and switches race', async () => {
    const mm = await h.merchant();
    const creates = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        mm.test.post('/offerings', { lookup_key: `race_${i}`, name: `R${i}`, is_current: true }),
      ),
    );
    expect(creates.map((r) => r.status)).toEqual(Array(10).fill(201));
    const now = await current(mm.test);
    expect(now).toHaveLength(1);
    // The survivor is one of them (the last to commit), and the others answered is_current true when they were made.
    expect(creates.map((r) => r.body.id)).toContain(now[0]);
    const switches = await Promise.all(
      [...creates, ...creates].map((r, i) =>
        mm.test.post(`/offerings/${r.body.id}/make-current`).then((x) => [i, x] as const),
      ),
    );
    expect(switches.map(([, x]) => x.status)).toEqual(Array(20).fill(200));
    expect(await current(mm.test)).toHaveLength(1);
    // mixed: creating current offerings while switching
    const mixed = await Promise.all([
      ...creates.slice(0, 5).map((r) => mm.test.post(`/offerings/${r.body.id}/make-current`)),
      ...Array.from({ length: 5 }, (_, i) =>
        mm.test.post('/offerings', { lookup_key: `mix_${i}`, name: 'M', is_current: true }),
      ),
    ]);
    expect(mixed.map((r) => r.status).sort()).toEqual([...Array(5).fill(200), ...Array(5).fill(201)]);
    expect(await current(mm.test)).toHaveLength(1);
  });
});

describe('package products', () => {
  it('links products idempotently and lists them oldest first', async () => {
    const p = await pkg(m.test);
    const one = await product(m.test);
    const two = await product(m.test);
    const r = await ok(
      m.test.post(`/packages/${p.id}/products`, { product_ids: [two.product.id, one.product.id, two.product.id] }),
    );
    expect(r).toMatchObject({ id: p.id, object: 'package', product_ids: [one.product.id, two.product.id] });
    const again = await ok(m.test.post(`/packages/${p.id}/products`, { product_ids: [one.product.id] }));
    expect(again.product_ids).toEqual([one.product.id, two.product.id]);
    const raced = await Promise.all(
      Array.from({ length: 8 }, () =>
        m.test.post(`/packages/${p.id}/products`, { product_ids: [one.product.id, two.product.id] }),
      ),
    );
    expect(raced.map((x) => x.status)).toEqual(Array(8).fill(200));
    expect((await ok(m.test.get(`/packages/${p.id}`))).product_ids).toEqual([one.product.id, two.product.id]);
  });

  it('refuses products of another merchant or mode, unknown ones and bad bodies, linking none', async () => {
    const p = await pkg(m.test);
    const mine = await product(m.test);
    const other = await h.merchant();
    const theirs = await ok(other.test.post('/products', { name: 'Theirs', type: 'subscription' }), 201);
    const live = await ok(m.live.post('/products', { name: 'Live', type: 'subscription' }), 201);
    const cases: [unknown, number, string, string][] = [
      [{ product_ids: [mine.product.id, theirs.id] }, 404, 'resource_not_found', 'product_ids[1]'],
      [{ product_ids: [live.id] }, 404, 'resource_not_found', 'product_ids[0]'],
      [{ product_ids: [unknownId()] }, 404, 'resource_not_found', 'product_ids[0]'],
      [{ product_ids: [mine.product.id, 'nope'] }, 404, 'resource_not_found', 'product_ids[1]'],
      [{ product_ids: [] }, 400, 'parameter_invalid', 'product_ids'],
      [{}, 400, 'parameter_missing', 'product_ids'],
      [{ product_ids: [mine.product.id] }, 200, '', ''],
      [{ product_ids: mine.product.id }, 400, 'parameter_invalid', 'product_ids'], // REST: a list is an array (GraphQL would coerce one id)
      [{ product_ids: Array(51).fill(mine.product.id) }, 400, 'parameter_invalid', 'product_ids'],
    ];
    for (const [body, status, code, param] of cases) {
      const r = await m.test.post(`/packages/${p.id}/products`, body);
      if (status === 200) {
        expect(r.status).toBe(200);
        continue;
      }
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    }
    expect((await ok(m.test.get(`/packages/${p.id}`))).product_ids).toEqual([mine.product.id]);
  });

  it('holds at most 50 products per package', async () => {
    const p = await pkg(m.test);
    const ids: string[] = [];
    for (let i = 0; i < 51; i++)
      ids.push((await ok(m.test.post('/products', { name: `P${i}`, type: 'one_time' }), 201)).id);
    await ok(m.test.post(`/packages/${p.id}/products`, { product_ids: ids.slice(0, 30) }));
    const r = await m.test.post(`/packages/${p.id}/products`, { product_ids: ids.slice(30) }); // 21 more: 51
    expect([r.status, r.body.error.code, r.body.error.param]).toEqual([400, 'parameter_invalid', 'product_ids']);
    expect((await ok(m.test.get(`/packages/${p.id}`))).product_ids).toHaveLength(30);
    await ok(m.test.post(`/packages/${p.id}/products`, { product_ids: ids.slice(30, 50) }));
    expect((await ok(m.test.get(`/packages/${p.id}`))).product_ids).toHaveLength(50);
  });
});

describe('paywalls', () => {
  it('creates one paywall per offering with a template and free-form config', async () => {
    const o = await offering(m.test);
    const config = {
      title: 'Go Pro',
      colors: { primary: '#ff0066' },
      features: ['No ads', 'Offline'],
      badge: { text: 'Save 20%', show: true },
    };
    const r = await m.test.post('/paywalls', {
      name: 'Main',
      offering_id: o.id,
      template: 'feature_comparison',
      config,
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.any(String),
      object: 'paywall',
      name: 'Main',
      offering_id: o.id,
      template: 'feature_comparison',
      config,
      livemode: false,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(await ok(m.test.get(`/paywalls/${r.body.id}`))).toEqual(r.body);
    expect((await ok(m.test.get(`/paywalls?offering_id=${o.id}`))).data).toEqual([r.body]);
    expect((await ok(m.test.get('/paywalls?offering_id=nope'))).data).toEqual([]);
    const second = await m.test.post('/paywalls', { name: 'Second', offering_id: o.id, template: 'simple' });
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'paywall_exists',
      param: 'offering_id',
    });
    const plain = await ok(
      m.test.post('/paywalls', { name: 'Plain', offering_id: (await offering(m.test)).id, template: 'sliding_cards' }),
      201,
    );
    expect(plain.config).toEqual({});
  });

  it('answers paywall_exists to all but one of racing creates', async () => {
    const o = await offering(m.test);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        m.test.post('/paywalls', { name: `P${i}`, offering_id: o.id, template: 'simple', config: { i } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('paywall_exists');
    expect((await ok(m.test.get(`/paywalls?offering_id=${o.id}`))).data).toHaveLength(1);
  });

  it('limits config to 16 KiB as JSON and 16 levels, and validates the rest', async () => {
    const o = await offering(m.test);
    // {"s":"..."} is 8 bytes plus the string: exactly 16384 bytes passes, one more does not
    const exact = { s: 'x'.repeat(16384 - 8) };
    expect(Buffer.byteLength(JSON.stringify(exact))).toBe(16384);
    const over = { s: 'x'.repeat(16384 - 7) };
    const multibyte = { s: 'é'.repeat(8189) }; // 2 bytes each: 16378 + 8 = 16386 bytes, 8197 characters
    let deep: any = { leaf: true };
    for (let i = 1; i < 16; i++) deep = { d: deep }; // 16 levels
    const tooDeep = { d: deep };
    const cases: [unknown, number, string | null][] = [
      [over, 400, 'config'],
      [multibyte, 400, 'config'],
      [tooDeep, 400, 'config'],
      [[1, 2], 400, 'config'],
      ['text', 400, 'config'],
      [{ s: '\udc00' }, 400, 'config'],
    ];
    for (const [config, status, param] of cases) {
      const r = await m.test.post('/paywalls', { name: 'P', offering_id: o.id, template: 'simple', config });
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, 'parameter_invalid', param]);
    }
    const bad: [unknown, number, string, string][] = [
      [{ offering_id: o.id, template: 'simple' }, 400, 'parameter_missing', 'name'],
      [{ name: 'P', offering_id: o.id }, 400, 'parameter_missing', 'template'],
      [{ name: 'P', offering_id: o.id, template: 'carousel' }, 400, 'parameter_invalid', 'template'],
      [{ name: 'P', offering_id: unknownId(), template: 'simple' }, 404, 'resource_not_found', 'offering_id'],
      [{ name: 'P', template: 'simple' }, 400, 'parameter_missing', 'offering_id'],
    ];
    for (const [body, status, code, param] of bad) {
      const r = await m.test.post('/paywalls', body);
      expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    }
    expect((await ok(m.test.get(`/paywalls?offering_id=${o.id}`))).data).toEqual([]);
    const made = await ok(
      m.test.post('/paywalls', { name: 'P', offering_id: o.id, template: 'simple', config: exact }),
      201,
    );
    expect(made.config).toEqual(exact);
    const deepOk = await ok(
      m.test.post('/paywalls', {
        name: 'D',
        offering_id: (await offering(m.test)).id,
        template: 'simple',
        config: deep,
      }),
      201,
    );
    expect(deepOk.config).toEqual(deep);
  });
});

describe('tenancy', () => {
  it("answers 404 for another merchant's or mode's offerings, packages and paywalls, exactly like an unknown id", async () => {
    const o = await offering(m.test);
    const p = await pkg(m.test);
    const w = await ok(m.test.post('/paywalls', { name: 'T', offering_id: o.id, template: 'simple' }), 201);
    const other = await h.merchant();
    const paths = [`/offerings/${o.id}`, `/packages/${p.id}`, `/paywalls/${w.id}`];
    for (const client of [other.test, other.live, m.live]) {
      for (const path of paths) {
        const r = await client.get(path);
        const none = await client.get(path.replace(/[0-9a-f-]{36}$/, unknownId()));
        expect([r.status, r.body.error.code, r.body.error.param]).toEqual([404, 'resource_not_found', null]);
        expect(r.body.error.message.replace(/'[^']+'/, '<id>')).toBe(
          none.body.error.message.replace(/'[^']+'/, '<id>'),
        );
      }
      const theirOffering = await offering(client);
      const theirPackage = await pkg(client);
      // Their offering with my package, my offering with their package, my package with their products
      const a = await client.post(`/offerings/${theirOffering.id}/packages`, { package_id: p.id });
      expect([a.status, a.body.error.param]).toEqual([404, 'package_id']);
      const b = await client.post(`/offerings/${o.id}/packages`, { package_id: theirPackage.id });
      expect([b.status, b.body.error.param]).toEqual([404, null]);
      const c = await client.post(`/packages/${p.id}/products`, { product_ids: [unknownId()] });
      expect([c.status, c.body.error.param]).toEqual([404, null]);
      const d = await client.post('/paywalls', { name: 'X', offering_id: o.id, template: 'simple' });
      expect([d.status, d.body.error.param]).toEqual([404, 'offering_id']);
      const e = await client.post(`/offerings/${o.id}/make-current`);
      expect(e.status).toBe(404);
      for (const list of ['/offerings?limit=100', '/packages?limit=100', '/paywalls?limit=100']) {
        const r = await ok(client.get(list));
        for (const id of [o.id, p.id, w.id]) expect(r.data.map((x: any) => x.id)).not.toContain(id);
      }
    }
    // The same over GraphQL: not found, and not listed
    for (const client of [other.test, m.live]) {
      for (const [field, id] of [
        ['offering', o.id],
        ['package', p.id],
        ['paywall', w.id],
      ]) {
        const x = await client.gql(`query($id: ID!) { ${field}(id: $id) { id } }`, { id });
        expect(x.errors![0].extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
      }
      const lists = await client.gql(
        '{ offerings(first: 100) { edges { node { id } } } packages(first: 100) { edges { node { id } } } paywalls(first: 100) { edges { node { id } } } }',
      );
      expect(JSON.stringify(lists.data)).not.toMatch(new RegExp(`${o.id}|${p.id}|${w.id}`));
    }
    // Nothing of mine changed
    expect(await order(m.test, o.id)).toEqual([]);
    expect((await ok(m.test.get(`/offerings/${o.id}`))).is_current).toBe(false);
  });
});

describe('GraphQL', () => {
  it('creates and reads the same records REST shows', async () => {
    const made = await m.test.gql(
      `mutation($o: CreateOfferingInput!, $p: CreatePackageInput!) {
        o: createOffering(input: $o) { id object lookupKey isCurrent metadata }
        p: createPackage(input: $p) { id object lookupKey productIds }
      }`,
      {
        o: { lookupKey: `gql_${rnd()}`, name: 'G', metadata: { k: 'v' } },
        p: { lookupKey: `gql_${rnd()}`, name: 'GP' },
      },
    );
    expect(made.errors).toBeUndefined();
    const { o, p } = made.data;
    const one = await product(m.test);
    const linked = await m.test.gql(
      'mutation($id: ID!, $ids: [ID!]!) { linkPackageProducts(packageId: $id, input: { productIds: $ids }) { id productIds } }',
      {
        id: p.id,
        ids: [one.product.id],
      },
    );
    expect(linked.data.linkPackageProducts.productIds).toEqual([one.product.id]);
    const attached = await m.test.gql(
      `mutation($id: ID!, $pkg: ID!) { attachPackage(offeringId: $id, input: { packageId: $pkg, position: 0 }) {
        id packages { id position productIds products { id plans { id } } } } }`,
      { id: o.id, pkg: p.id },
    );
    expect(attached.errors).toBeUndefined();
    expect(attached.data.attachPackage.packages).toEqual([
      {
        id: p.id,
        position: 0,
        productIds: [one.product.id],
        products: [{ id: one.product.id, plans: [{ id: one.monthly.id }, { id: one.yearly.id }] }],
      },
    ]);
    const paywall = await m.test.gql(
      'mutation($o: ID!) { createPaywall(input: { name: "W", offeringId: $o, template: SLIDING_CARDS, config: { a: [1, 2] } }) { id template config offeringId } }',
      { o: o.id },
    );
    expect(paywall.data.createPaywall).toMatchObject({
      template: 'SLIDING_CARDS',
      config: { a: [1, 2] },
      offeringId: o.id,
    });
    const current = await m.test.gql('mutation($id: ID!) { makeOfferingCurrent(id: $id) { id isCurrent } }', {
      id: o.id,
    });
    expect(current.data.makeOfferingCurrent).toEqual({ id: o.id, isCurrent: true });

    const read = await m.test.gql(
      `query($o: ID!, $p: ID!, $w: ID!) {
        offering(id: $o) { id lookupKey isCurrent packages { id position } }
        package(id: $p) { id productIds }
        paywall(id: $w) { id name }
        offerings(first: 100) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } }
        packages(first: 100) { totalCount edges { node { id } } }
        paywalls(first: 100, offeringId: $o) { totalCount edges { node { id } } }
      }`,
      { o: o.id, p: p.id, w: paywall.data.createPaywall.id },
    );
    expect(read.errors).toBeUndefined();
    const rest = await ok(m.test.get(`/offerings/${o.id}`));
    expect(read.data.offering).toEqual({
      id: o.id,
      lookupKey: rest.lookup_key,
      isCurrent: true,
      packages: [{ id: p.id, position: 0 }],
    });
    expect(read.data.package).toEqual({ id: p.id, productIds: [one.product.id] });
    expect(read.data.paywalls).toEqual({ totalCount: 1, edges: [{ node: { id: paywall.data.createPaywall.id } }] });
    expect(read.data.offerings.edges.map((e: any) => e.node.id)).toContain(o.id);
    // the same error codes and params as REST
    const dup = await m.test.gql(
      'mutation($o: ID!) { createPaywall(input: { name: "W2", offeringId: $o, template: SIMPLE }) { id } }',
      { o: o.id },
    );
    expect(dup.errors![0].extensions).toMatchObject({
      code: 'paywall_exists',
      param: 'offering_id',
      http: { status: 409 },
    });
    const taken = await m.test.gql(
      'mutation($k: String!) { createOffering(input: { lookupKey: $k, name: "again" }) { id } }',
      { k: o.lookupKey },
    );
    expect(taken.errors![0].extensions).toMatchObject({
      code: 'lookup_key_exists',
      param: 'lookup_key',
      http: { status: 409 },
    });
  });
});

/**
 * The assignment engine behind POST /offerings/resolve (docs/growth.md): bucketing against
 * values computed here independently, stickiness across edits and stops, targeting, the order of running
 * experiments, and one enrolment per customer under concurrent resolves. Through the real resolve endpoint; the
 * service directly where resolve's own checks would hide the engine's.
 */
import { Mode } from '../../src/core/entity';
import { TestMerchant, useHarness } from '../harness';
import { customers, expectedVariant, offering, ok, resolve, running, serviceCtx, sql, twoArms } from './helpers';

const h = useHarness();
let m: TestMerchant;
let o1: string;
let o2: string;
let o3: string;

beforeAll(async () => {
  m = await h.merchant();
  [o1, o2, o3] = [await offering(m.test), await offering(m.test), await offering(m.test)];
});

const enrolments = (experimentId: string) =>
  sql<{ customer_id: string; variant_id: string }>(
    h,
    'select customer_id, variant_id from experiment_enrolments where experiment_id = ? order by id',
    [experimentId],
  );

/** Stops every running experiment of the merchant's test mode, so each test starts from none. */
afterEach(async () => {
  const list = await ok(m.test.get('/experiments?status=running&limit=100'));
  for (const e of list.data) await ok(m.test.post(`/experiments/${e.id}/stop`));
});

it('buckets every customer exactly as SHA-256 mod 100 over the variants sorted by id, and enrols each once', async () => {
  const e = await running(m.test, {
    name: 'Three arms',
    variants: [
      { key: 'control', offering_id: o1, traffic_percent: 20, is_control: true },
      { key: 'annual', offering_id: o2, traffic_percent: 30 },
      { key: 'lifetime', offering_id: o3, traffic_percent: 50 },
    ],
  });
  const ids = await customers(h, m, 60);
  const seen = new Map<string, number>();
  for (const id of ids) {
    const got = await resolve(m.test, id);
    const want = expectedVariant(e, id);
    expect([id, got]).toEqual([id, { experiment_id: e.id, variant_id: want.id, variant_key: (want as any).key }]);
    seen.set(want.id, (seen.get(want.id) ?? 0) + 1);
  }
  expect(seen.size).toBe(3); // 60 customers land in all three ranges
  const rows = await enrolments(e.id);
  expect(rows.map((r) => r.customer_id)).toEqual(ids);
  // and resolve serves the variant's offering
  const full = await ok(m.test.post('/offerings/resolve', { customer_id: ids[0], attributes: {} }));
  expect(full.offering.id).toBe(e.variants.find((v: any) => v.id === full.experiment.variant_id).offering_id);
});

it('keeps enrolled customers in their variant across edits of split, targeting and name; new customers follow the edits', async () => {
  const e = await running(m.test, twoArms(o1, o2));
  const before = await customers(h, m, 30);
  const first = new Map<string, string>();
  for (const id of before) first.set(id, (await resolve(m.test, id))!.variant_id);
  expect(new Set(first.values()).size).toBe(2);
  const control = e.variants.find((v: any) => v.is_control);
  const treatment = e.variants.find((v: any) => !v.is_control);
  // Everything new to the treatment, and a targeting the enrolled customers do not match.
  await ok(
    m.test.post(`/experiments/${e.id}`, {
      name: 'Edited while running',
      targeting: { country: 'NZ' },
      variants: [
        { key: control.key, traffic_percent: 0 },
        { key: treatment.key, traffic_percent: 100 },
      ],
    }),
  );
  for (const id of before) expect([id, (await resolve(m.test, id))?.variant_id]).toEqual([id, first.get(id)]);
  const after = await customers(h, m, 10);
  for (const id of after) {
    expect(await resolve(m.test, id)).toBeNull(); // not in NZ
    expect((await resolve(m.test, id, { country: 'NZ' }))?.variant_id).toBe(treatment.id);
  }
  // an enrolled customer's row never changes
  const rows = await enrolments(e.id);
  for (const r of rows) if (first.has(r.customer_id)) expect(r.variant_id).toBe(first.get(r.customer_id));
});

it('targets by attribute: scalar, array, array attribute, missing attribute', async () => {
  const e = await running(m.test, twoArms(o1, o2, { targeting: { country: 'IN', platform: ['ios', 'android'] } }));
  const [scalarAndArray, arrayAttribute, missing, wrong, sharedList] = await customers(h, m, 5);
  expect((await resolve(m.test, scalarAndArray, { country: 'IN', platform: 'android' }))?.experiment_id).toBe(e.id);
  expect((await resolve(m.test, arrayAttribute, { country: ['US', 'IN'], platform: 'ios' }))?.experiment_id).toBe(e.id);
  expect(await resolve(m.test, missing, { country: 'IN' })).toBeNull();
  expect(await resolve(m.test, wrong, { country: 'IN', platform: 'web' })).toBeNull();
  expect((await resolve(m.test, sharedList, { country: 'IN', platform: ['web', 'ios'] }))?.experiment_id).toBe(e.id);
  // the unmatched were not enrolled; a later matching resolve enrols them
  expect((await enrolments(e.id)).map((r) => r.customer_id).sort()).toEqual(
    [scalarAndArray, arrayAttribute, sharedList].sort(),
  );
  expect((await resolve(m.test, missing, { country: 'IN', platform: 'ios' }))?.experiment_id).toBe(e.id);
  // a bad attribute is a 400 naming it
  const bad = await m.test.post('/offerings/resolve', {
    customer_id: wrong,
    attributes: { platform: [{ os: 'ios' }] },
  });
  expect([bad.status, bad.body.error?.param]).toEqual([400, 'attributes.platform[0]']);
});

it('serves the first running experiment (by start) that matches; a sticky enrolment first; a stopped experiment to nobody', async () => {
  const older = await running(m.test, twoArms(o1, o2, { targeting: { plan: 'pro' } }));
  const newer = await running(m.test, twoArms(o2, o3));
  const [pro, basic, both] = await customers(h, m, 3);
  expect((await resolve(m.test, pro, { plan: 'pro' }))?.experiment_id).toBe(older.id);
  expect((await resolve(m.test, basic, { plan: 'basic' }))?.experiment_id).toBe(newer.id);
  // enrolled in the newer one, the customer stays there even when the older one now matches
  expect((await resolve(m.test, basic, { plan: 'pro' }))?.experiment_id).toBe(newer.id);
  expect((await resolve(m.test, both, { plan: 'pro' }))?.experiment_id).toBe(older.id);

  await ok(m.test.post(`/experiments/${older.id}/stop`));
  // no longer served: the customer moves on to the next running experiment that matches, and is enrolled there
  const moved = await resolve(m.test, pro, { plan: 'pro' });
  expect(moved?.experiment_id).toBe(newer.id);
  expect(moved?.variant_id).toBe(expectedVariant(newer, pro).id);
  await ok(m.test.post(`/experiments/${newer.id}/stop`));
  expect(await resolve(m.test, pro, { plan: 'pro' })).toBeNull();
  expect(await resolve(m.test, basic)).toBeNull();
  // the stopped experiments' enrolments stay, for their results
  expect((await enrolments(older.id)).map((r) => r.customer_id).sort()).toEqual([pro, both].sort());
  expect((await enrolments(newer.id)).map((r) => r.customer_id).sort()).toEqual([basic, pro].sort());
  // a draft is never served
  await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
  expect(await resolve(m.test, both)).toBeNull();
});

it('enrols a customer once under 20 concurrent resolves: one row, one variant for all', async () => {
  const e = await running(m.test, twoArms(o1, o2));
  const [id] = await customers(h, m, 1);
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => m.test.post('/offerings/resolve', { customer_id: id, attributes: {} })),
  );
  expect(answers.map((r) => r.status)).toEqual(new Array(20).fill(200));
  const variants = new Set(answers.map((r) => r.body.experiment?.variant_id));
  expect([...variants]).toEqual([expectedVariant(e, id).id]);
  expect(await enrolments(e.id)).toEqual([{ customer_id: id, variant_id: expectedVariant(e, id).id }]);
});

it('enrols once under concurrent resolves racing a split edit: every answer is the stored variant', async () => {
  const e = await running(m.test, twoArms(o1, o2));
  const ids = await customers(h, m, 8);
  const control = e.variants.find((v: any) => v.is_control);
  const treatment = e.variants.find((v: any) => !v.is_control);
  const edit = m.test.post(`/experiments/${e.id}`, {
    variants: [
      { key: control.key, traffic_percent: 100 },
      { key: treatment.key, traffic_percent: 0 },
    ],
  });
  const answers = await Promise.all(
    ids.flatMap((id) => Array.from({ length: 5 }, () => resolve(m.test, id).then((x) => [id, x!.variant_id] as const))),
  );
  await ok(edit);
  const rows = await enrolments(e.id);
  expect(rows.map((r) => r.customer_id).sort()).toEqual([...ids].sort());
  const stored = new Map(rows.map((r) => [r.customer_id, r.variant_id]));
  for (const [id, variant] of answers) expect(variant).toBe(stored.get(id));
});

describe('the service entry point (what resolve calls)', () => {
  it('refuses a customer of another tenant: 404 customer_id, nothing enrolled', async () => {
    const e = await running(m.test, twoArms(o1, o2));
    const other = await h.merchant();
    const [theirs] = await customers(h, other, 1);
    const [liveOne] = await customers(h, m, 1, Mode.LIVE);
    const experiments = h.app.app.services.experiments;
    for (const id of [theirs, liveOne, '00000000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      await expect(experiments.assignment(serviceCtx(h, m), id, {})).rejects.toMatchObject({
        code: 'resource_not_found',
        param: 'customer_id',
      });
    }
    expect(await enrolments(e.id)).toEqual([]);
  });

  it('answers the assignment resolve needs, and null outside any experiment', async () => {
    const [id] = await customers(h, m, 1);
    const experiments = h.app.app.services.experiments;
    expect(await experiments.assignment(serviceCtx(h, m), id, {})).toBeNull();
    const e = await running(m.test, twoArms(o1, o2));
    const want = expectedVariant(e, id) as any;
    expect(await experiments.assignment(serviceCtx(h, m), id, { any: 'thing' })).toEqual({
      experimentId: e.id,
      variantId: want.id,
      variantKey: want.key,
      offeringId: want.offering_id,
    });
    // the live mode has no running experiment and sees none of the test mode's
    const [live] = await customers(h, m, 1, Mode.LIVE);
    expect(await experiments.assignment(serviceCtx(h, m, Mode.LIVE), live, {})).toBeNull();
  });
});

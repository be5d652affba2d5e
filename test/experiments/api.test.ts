/**
 * Experiments through REST and GraphQL: create and its validation (docs/growth.md), list, retrieve, edit, start and
 * stop with 409 experiment_not_draft / experiment_not_running on the wrong state (raced too), tenancy.
 */
import { TestMerchant, useHarness } from '../harness';
import { errorFingerprint, unknownId } from '../harness/http';
import { offering, ok, twoArms } from './helpers';

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;
let o1: string;
let o2: string;
let o3: string;

beforeAll(async () => {
  m = await h.merchant();
  other = await h.merchant();
  o1 = await offering(m.test);
  o2 = await offering(m.test);
  o3 = await offering(m.test);
});

const listIds = async (c = m.test) => (await ok(c.get('/experiments?limit=100'))).data.map((e: any) => e.id);

describe('POST /experiments', () => {
  it('creates a draft with its variants, ordered by id', async () => {
    const body = twoArms(o1, o2, { targeting: { country: 'IN', platform: ['ios', 'android'] } }, [40, 60]);
    const e = await ok(m.test.post('/experiments', body), 201);
    expect(e).toMatchObject({
      object: 'experiment',
      name: body.name,
      status: 'draft',
      targeting: { country: 'IN', platform: ['ios', 'android'] },
      started_at: null,
      stopped_at: null,
      livemode: false,
    });
    expect(e.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(e.created_at).toMatch(/Z$/);
    expect(e.variants.map((v: any) => v.id)).toEqual([...e.variants.map((v: any) => v.id)].sort());
    const byKey = Object.fromEntries(e.variants.map((v: any) => [v.key, v]));
    expect(byKey.a).toMatchObject({
      object: 'experiment_variant',
      name: 'Control',
      offering_id: o1,
      traffic_percent: 40,
      is_control: true,
    });
    expect(byKey.b).toMatchObject({ name: 'Annual first', offering_id: o2, traffic_percent: 60, is_control: false });
    expect(await ok(m.test.get(`/experiments/${e.id}`))).toEqual(e);
  });

  it('defaults targeting to {} (everyone) and a variant name to its key; takes three arms and an A/A offering', async () => {
    const e = await ok(
      m.test.post('/experiments', {
        name: 'Three arms',
        variants: [
          { key: 'control', offering_id: o1, traffic_percent: 34, is_control: true },
          { key: 'b', offering_id: o1, traffic_percent: 33 },
          { key: 'c', offering_id: o3, traffic_percent: 33, is_control: false },
        ],
      }),
      201,
    );
    expect(e.targeting).toEqual({});
    expect(e.variants.map((v: any) => v.name).sort()).toEqual(['b', 'c', 'control']);
  });

  const base = () => twoArms(o1, o2);
  const variant = (i: number, patch: Record<string, unknown>) => {
    const b = base();
    b.variants[i] = { ...b.variants[i], ...patch } as any;
    return b;
  };
  const cases: [string, () => unknown, number, string, string | null][] = [
    ['no name', () => ({ ...base(), name: undefined }), 400, 'parameter_missing', 'name'],
    ['an empty name', () => ({ ...base(), name: '' }), 400, 'parameter_invalid', 'name'],
    ['a name over 255 characters', () => ({ ...base(), name: 'x'.repeat(256) }), 400, 'parameter_invalid', 'name'],
    ['no variants', () => ({ ...base(), variants: undefined }), 400, 'parameter_missing', 'variants'],
    ['one variant', () => ({ ...base(), variants: [base().variants[0]] }), 400, 'parameter_invalid', 'variants'],
    ['traffic not summing to 100', () => variant(1, { traffic_percent: 40 }), 400, 'parameter_invalid', 'variants'],
    [
      'a fractional traffic_percent',
      () => variant(1, { traffic_percent: 50.5 }),
      400,
      'parameter_invalid',
      'variants[1].traffic_percent',
    ],
    [
      'a negative traffic_percent',
      () => variant(1, { traffic_percent: -10 }),
      400,
      'parameter_invalid',
      'variants[1].traffic_percent',
    ],
    [
      'traffic_percent over 100',
      () => variant(0, { traffic_percent: 101 }),
      400,
      'parameter_invalid',
      'variants[0].traffic_percent',
    ],
    [
      'a missing traffic_percent',
      () => variant(1, { traffic_percent: undefined }),
      400,
      'parameter_missing',
      'variants[1].traffic_percent',
    ],
    ['two controls', () => variant(1, { is_control: true }), 400, 'parameter_invalid', 'variants[1].is_control'],
    ['no control', () => variant(0, { is_control: false }), 400, 'parameter_invalid', 'variants'],
    ['a duplicate key', () => variant(1, { key: 'a' }), 400, 'parameter_invalid', 'variants[1].key'],
    ['a key with spaces', () => variant(0, { key: 'a b' }), 400, 'parameter_invalid', 'variants[0].key'],
    [
      'a key over 64 characters',
      () => variant(0, { key: 'k'.repeat(65) }),
      400,
      'parameter_invalid',
      'variants[0].key',
    ],
    [
      'an unknown offering',
      () => variant(1, { offering_id: unknownId() }),
      404,
      'resource_not_found',
      'variants[1].offering_id',
    ],
    [
      'a malformed offering id',
      () => variant(0, { offering_id: 'nope' }),
      404,
      'resource_not_found',
      'variants[0].offering_id',
    ],
    [
      'a nested targeting value',
      () => ({ ...base(), targeting: { country: { eq: 'IN' } } }),
      400,
      'parameter_invalid',
      'targeting.country',
    ],
    [
      'a null in a targeting list',
      () => ({ ...base(), targeting: { platform: ['ios', null] } }),
      400,
      'parameter_invalid',
      'targeting.platform[1]',
    ],
    [
      'an empty targeting list',
      () => ({ ...base(), targeting: { platform: [] } }),
      400,
      'parameter_invalid',
      'targeting.platform',
    ],
    ['targeting that is a list', () => ({ ...base(), targeting: ['ios'] }), 400, 'parameter_invalid', 'targeting'],
    ['an unknown field', () => ({ ...base(), bogus_field: 1 }), 400, 'parameter_unknown', 'bogus_field'],
    ['an unknown variant field', () => variant(0, { weight: 5 }), 400, 'parameter_unknown', 'variants[0].weight'],
    [
      '21 variants',
      () => ({
        ...base(),
        variants: Array.from({ length: 21 }, (_, i) => ({
          key: `v${i}`,
          offering_id: o1,
          traffic_percent: i ? 5 : 0,
          is_control: i === 0,
        })),
      }),
      400,
      'parameter_invalid',
      'variants',
    ],
  ];

  it.each(cases)('refuses %s (%i %s, param %s) and creates nothing', async (_name, body, status, code, param) => {
    const before = await listIds();
    const r = await m.test.post('/experiments', body());
    expect([r.status, r.body.error?.code, r.body.error?.param]).toEqual([status, code, param]);
    expect(await listIds()).toEqual(before);
  });

  it("refuses another merchant's offering and the live mode's offering exactly like an unknown one", async () => {
    const theirs = await offering(other.test);
    const live = await offering(m.live);
    const ghost = unknownId();
    const none = await m.test.post('/experiments', twoArms(o1, ghost));
    for (const id of [theirs, live]) {
      const r = await m.test.post('/experiments', twoArms(o1, id));
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: 'resource_not_found', param: 'variants[1].offering_id' });
      expect(errorFingerprint(r, id)).toEqual(errorFingerprint(none, ghost));
    }
  });
});

describe('lists', () => {
  it('GET /experiments answers the list envelope, newest first, paged, filtered by status', async () => {
    const a = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    const b = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    await ok(m.test.post(`/experiments/${a.id}/start`));
    const page = await ok(m.test.get('/experiments?limit=1'));
    expect(page).toMatchObject({ object: 'list', has_more: true });
    expect(page.data.map((e: any) => e.id)).toEqual([b.id]);
    const next = await ok(m.test.get(`/experiments?limit=1&cursor=${page.next_cursor}`));
    expect(next.data.map((e: any) => e.id)).toEqual([a.id]);
    expect(next.data[0].variants).toHaveLength(2);
    const runningIds = (await ok(m.test.get('/experiments?status=running&limit=100'))).data.map((e: any) => e.id);
    expect(runningIds).toContain(a.id);
    expect(runningIds).not.toContain(b.id);
    expect((await m.test.get('/experiments?status=paused')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'status',
    });
    expect((await m.test.get('/experiments?limit=101')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
    });
  });
});

describe('start and stop', () => {
  it('moves draft -> running -> stopped, stamping the times', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    const started = await ok(m.test.post(`/experiments/${e.id}/start`));
    expect(started).toMatchObject({ id: e.id, status: 'running', stopped_at: null });
    expect(new Date(started.started_at).getTime()).toBeGreaterThan(0);
    const stopped = await ok(m.test.post(`/experiments/${e.id}/stop`));
    expect(stopped).toMatchObject({ status: 'stopped', started_at: started.started_at });
    expect(new Date(stopped.stopped_at).getTime()).toBeGreaterThanOrEqual(new Date(started.started_at).getTime());
  });

  it('answers 409 experiment_not_draft / experiment_not_running on the wrong state, naming it, and changes nothing', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    const illegal = async (command: string, status: string) => {
      const before = await ok(m.test.get(`/experiments/${e.id}`));
      const r = await m.test.post(`/experiments/${e.id}/${command}`);
      const code = command === 'start' ? 'experiment_not_draft' : 'experiment_not_running';
      expect([r.status, r.body.error?.code, r.body.error?.type]).toEqual([409, code, 'invalid_request_error']);
      expect(r.body.error.message).toContain(status);
      expect(r.body.error.message).toContain(command);
      expect(await ok(m.test.get(`/experiments/${e.id}`))).toEqual(before);
    };
    await illegal('stop', 'draft');
    await ok(m.test.post(`/experiments/${e.id}/start`));
    await illegal('start', 'running');
    await ok(m.test.post(`/experiments/${e.id}/stop`));
    await illegal('start', 'stopped');
    await illegal('stop', 'stopped');
    const edit = await m.test.post(`/experiments/${e.id}`, { name: 'Renamed' });
    expect([edit.status, edit.body.error?.code]).toEqual([409, 'invalid_state_transition']);
  });

  it('starts once under 10 concurrent starts, and stops once under 10 concurrent stops', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    for (const command of ['start', 'stop']) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => m.test.post(`/experiments/${e.id}/${command}`)),
      );
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      const code = command === 'start' ? 'experiment_not_draft' : 'experiment_not_running';
      expect(answers.filter((r) => r.status === 409 && r.body.error.code === code)).toHaveLength(9);
    }
    const final = await ok(m.test.get(`/experiments/${e.id}`));
    expect(final.status).toBe('stopped');
  });
});

describe('POST /experiments/{id} (edit)', () => {
  it('changes name, targeting and the split while draft, and a variant offering', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    const edited = await ok(
      m.test.post(`/experiments/${e.id}`, {
        name: 'Renamed',
        targeting: { country: ['IN', 'LK'] },
        variants: [
          { key: 'a', traffic_percent: 20, name: 'Monthly first' },
          { key: 'b', traffic_percent: 80, offering_id: o3 },
        ],
      }),
    );
    expect(edited).toMatchObject({ name: 'Renamed', targeting: { country: ['IN', 'LK'] }, status: 'draft' });
    const byKey = Object.fromEntries(edited.variants.map((v: any) => [v.key, v]));
    expect(byKey.a).toMatchObject({ traffic_percent: 20, name: 'Monthly first', offering_id: o1, is_control: true });
    expect(byKey.b).toMatchObject({ traffic_percent: 80, offering_id: o3, name: 'Annual first' });
    expect(await ok(m.test.get(`/experiments/${e.id}`))).toEqual(edited);
  });

  it('changes the split of a running experiment but not its offerings; refuses bad edits and changes nothing', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    await ok(m.test.post(`/experiments/${e.id}/start`));
    const split = await ok(
      m.test.post(`/experiments/${e.id}`, {
        variants: [
          { key: 'a', traffic_percent: 10 },
          { key: 'b', traffic_percent: 90 },
        ],
      }),
    );
    expect(split.variants.map((v: any) => [v.key, v.traffic_percent]).sort()).toEqual([
      ['a', 10],
      ['b', 90],
    ]);
    const before = await ok(m.test.get(`/experiments/${e.id}`));
    const refused: [Record<string, unknown>, number, string, string | null][] = [
      [{ variants: [{ key: 'b', offering_id: o3 }] }, 409, 'invalid_state_transition', null],
      [{ variants: [{ key: 'a', traffic_percent: 50 }] }, 400, 'parameter_invalid', 'variants'],
      [{ variants: [{ key: 'zz', traffic_percent: 0 }] }, 400, 'parameter_invalid', 'variants[0].key'],
      [
        {
          variants: [
            { key: 'a', traffic_percent: 5 },
            { key: 'a', traffic_percent: 5 },
          ],
        },
        400,
        'parameter_invalid',
        'variants[1].key',
      ],
      [{ variants: [{ key: 'a', traffic_percent: 1.5 }] }, 400, 'parameter_invalid', 'variants[0].traffic_percent'],
      [{ variants: [{ key: 'a', is_control: false }] }, 400, 'parameter_unknown', 'variants[0].is_control'],
      [{ variants: [{ key: 'b', offering_id: unknownId() }] }, 404, 'resource_not_found', 'variants[0].offering_id'],
      [{ targeting: { country: [] } }, 400, 'parameter_invalid', 'targeting.country'],
      [{ name: '' }, 400, 'parameter_invalid', 'name'],
      [{ status: 'stopped' }, 400, 'parameter_unknown', 'status'],
    ];
    for (const [body, status, code, param] of refused) {
      const r = await m.test.post(`/experiments/${e.id}`, body);
      expect([JSON.stringify(body), r.status, r.body.error?.code, r.body.error?.param]).toEqual([
        JSON.stringify(body),
        status,
        code,
        param,
      ]);
    }
    expect(await ok(m.test.get(`/experiments/${e.id}`))).toEqual(before);
  });
});

describe('tenancy', () => {
  it('answers 404 to another merchant and to the other mode for every experiment route, like an unknown id', async () => {
    const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
    const ghost = unknownId();
    const calls: [string, string, Record<string, unknown>?][] = [
      ['get', ''],
      ['get', '/results'],
      ['post', '', { name: 'Stolen' }],
      ['post', '/start'],
      ['post', '/stop'],
    ];
    for (const client of [other.test, other.live, m.live]) {
      for (const [method, suffix, body] of calls) {
        const call = (id: string) =>
          method === 'get'
            ? client.get(`/experiments/${id}${suffix}`)
            : client.post(`/experiments/${id}${suffix}`, body ?? {});
        const theirs = await call(e.id);
        const none = await call(ghost);
        expect([method, suffix, theirs.status, theirs.body.error?.code]).toEqual([
          method,
          suffix,
          404,
          'resource_not_found',
        ]);
        expect(errorFingerprint(theirs, e.id)).toEqual(errorFingerprint(none, ghost));
      }
      expect(await listIds(client)).not.toContain(e.id);
    }
    const mine = await ok(m.test.get(`/experiments/${e.id}`));
    expect(mine).toMatchObject({ name: e.name, status: 'draft' });
  });
});

describe('GraphQL', () => {
  const FIELDS =
    'id object name status targeting startedAt stoppedAt livemode variants { id key name offeringId trafficPercent isControl }';

  it('creates, starts, reads, lists and stops experiments, and reads dashboard-shaped results', async () => {
    const created = await m.test.gql(
      `mutation($input: CreateExperimentInput!) { createExperiment(input: $input) { ${FIELDS} } }`,
      {
        input: {
          name: 'GraphQL test',
          targeting: { platform: ['ios'] },
          variants: [
            { key: 'a', offeringId: o1, trafficPercent: 50, isControl: true },
            { key: 'b', offeringId: o2, trafficPercent: 50 },
          ],
        },
      },
    );
    const e = created.data.createExperiment;
    expect(e).toMatchObject({
      object: 'experiment',
      status: 'DRAFT',
      targeting: { platform: ['ios'] },
      livemode: false,
    });
    const started = await m.test.gql(`mutation($id: ID!) { startExperiment(id: $id) { status startedAt } }`, {
      id: e.id,
    });
    expect(started.data.startExperiment.status).toBe('RUNNING');
    const again = await m.test.gql(`mutation($id: ID!) { startExperiment(id: $id) { status } }`, { id: e.id });
    expect(again.errors![0].extensions).toMatchObject({ code: 'experiment_not_draft', http: { status: 409 } });
    const read = await m.test.gql(`query($id: ID!) { experiment(id: $id) { ${FIELDS} } }`, { id: e.id });
    expect(read.data.experiment).toMatchObject({ id: e.id, status: 'RUNNING', variants: e.variants });
    const list = await m.test.gql(
      `{ experiments(first: 100, status: RUNNING) { totalCount edges { node { id variants { key } } } pageInfo { hasNextPage } } }`,
    );
    expect(list.data.experiments.edges.map((x: any) => x.node.id)).toContain(e.id);
    expect(list.data.experiments.totalCount).toBe(list.data.experiments.edges.length);
    const results = await m.test.gql(
      `query($id: ID!) { experimentResults(id: $id) {
        experimentId name status currency totalVisitors winnerVariantId
        sampleRatioMismatch { chiSquare pValue degreesOfFreedom warning }
        variants { variantId key name isControl offeringId trafficPercent visitors conversions conversionRate trialStarts revenue mrr chanceToWin
          mrrLift { expected ciLow ciHigh } isWinner } } }`,
      { id: e.id },
    );
    expect(results.errors).toBeUndefined();
    const r = results.data.experimentResults;
    expect(r).toMatchObject({
      experimentId: e.id,
      name: 'GraphQL test',
      status: 'RUNNING',
      currency: 'INR',
      totalVisitors: 0,
      winnerVariantId: null,
    });
    expect(r.sampleRatioMismatch).toEqual({ chiSquare: 0, pValue: 1, degreesOfFreedom: 1, warning: false });
    expect(r.variants.map((v: any) => v.variantId)).toEqual(e.variants.map((v: any) => v.id));
    const control = r.variants.find((v: any) => v.isControl);
    expect(control).toMatchObject({
      chanceToWin: null,
      mrrLift: null,
      visitors: 0,
      conversionRate: 0,
      isWinner: false,
    });
    expect(r.variants.find((v: any) => !v.isControl).chanceToWin).toBeCloseTo(0.5, 6);
    const stopped = await m.test.gql(`mutation($id: ID!) { stopExperiment(id: $id) { status stoppedAt } }`, {
      id: e.id,
    });
    expect(stopped.data.stopExperiment.status).toBe('STOPPED');
    const theirs = await other.test.gql(`query($id: ID!) { experimentResults(id: $id) { experimentId } }`, {
      id: e.id,
    });
    expect(theirs.errors![0].extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
  });

  it('names the offending variant field in a GraphQL validation error', async () => {
    const r = await m.test.gql(`mutation($input: CreateExperimentInput!) { createExperiment(input: $input) { id } }`, {
      input: {
        name: 'x',
        variants: [
          { key: 'a', offeringId: o1, trafficPercent: 50, isControl: true },
          { key: 'b', offeringId: o2, trafficPercent: -50 },
        ],
      },
    });
    expect(r.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'variants[1].traffic_percent' });
  });
});

import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import {
  billableSubscription,
  errorOf,
  interceptPool,
  keysOf,
  report,
  rnd,
  stored,
  summary,
  totals,
  usageBody,
} from './helpers';

/** Usage ingestion (docs/usage.md): validation, billability, exact sums, de-duplication, batches. */

const h = useHarness();
let m: TestMerchant;
let sub: any;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
  sub = await billableSubscription(m.test);
  expect(sub.status).toBe('active');
});

describe('POST /usage/events', () => {
  it('answers 201 with the event and the billing period it was counted in', async () => {
    const s = await billableSubscription(m.test);
    const now = await h.clock.now(m);
    const r = await m.test.post(
      '/usage/events',
      usageBody(s.id, {
        quantity: 2.5,
        unit: 'GB-hours',
        event_type: 'storage.gb_hours',
        metadata: { region: 'ap-south-1' },
      }),
    );
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/),
      object: 'usage_event',
      subscription_id: s.id,
      event_type: 'storage.gb_hours',
      quantity: 2.5,
      unit: 'GB-hours',
      metadata: { region: 'ap-south-1' },
      timestamp: expect.any(String),
      billing_period_start: s.current_period_start,
      billing_period_end: s.current_period_end,
      idempotency_key: null,
      livemode: false,
      created_at: expect.any(String),
    });
    // The default timestamp is the merchant's now (the test clock).
    expect(Math.abs(new Date(r.body.timestamp).getTime() - now.getTime())).toBeLessThan(5000);

    const at = new Date(new Date(s.current_period_start).getTime() + 60_000).toISOString();
    const given = await report(m.test, s.id, { timestamp: at, quantity: 0 });
    expect(given).toMatchObject({ timestamp: at, quantity: 0, billing_period_start: s.current_period_start });
    expect(await totals(m.test, s.id)).toEqual([
      `${s.current_period_start} api_calls 0 calls`,
      `${s.current_period_start} storage.gb_hours 2.5 GB-hours`,
    ]);
  });

  it('is one SQL statement per event (subscription check, key, sums and event together)', async () => {
    const s = await billableSubscription(m.test);
    await report(m.test, s.id); // the key is cached, the unit registered
    // Every statement on the service's pool (the event's runs on it directly), and none through the ORM's builder.
    const seen: string[] = [];
    const noted = (text: string, pass: () => Promise<unknown>) => {
      seen.push(text);
      return pass();
    };
    await interceptPool(h.app, noted, async () => {
      for (const extra of [{}, { idempotency_key: `k-${rnd()}` }]) {
        h.app.sql.reset();
        seen.length = 0;
        expect((await report(m.test, s.id, { quantity: 3, ...extra })).quantity).toBe(3); // 201, checked by report
        expect(seen).toHaveLength(1);
        expect(seen[0]).toMatch(/insert into usage_events/);
        expect(h.app.sql.count).toBe(0);
      }
    });
  });

  const CASES: [string, Record<string, unknown>, number, string, string][] = [
    ['empty event_type', { event_type: '' }, 400, 'parameter_invalid', 'event_type'],
    ['event_type with a space', { event_type: 'api calls' }, 400, 'parameter_invalid', 'event_type'],
    ['event_type of 101 characters', { event_type: 'x'.repeat(101) }, 400, 'parameter_invalid', 'event_type'],
    ['no event_type', { event_type: undefined }, 400, 'parameter_missing', 'event_type'],
    ['a negative quantity', { quantity: -1 }, 400, 'parameter_invalid', 'quantity'],
    ['a quantity above 1e15', { quantity: 1e15 + 2 }, 400, 'parameter_invalid', 'quantity'],
    ['13 decimal places', { quantity: 0.1234567890123 }, 400, 'parameter_invalid', 'quantity'],
    ['a tiny quantity (1e-13)', { quantity: 1e-13 }, 400, 'parameter_invalid', 'quantity'],
    ['a quantity as a string', { quantity: '5' }, 400, 'parameter_invalid', 'quantity'],
    ['no quantity', { quantity: undefined }, 400, 'parameter_missing', 'quantity'],
    ['an empty unit', { unit: '' }, 400, 'parameter_invalid', 'unit'],
    ['a blank unit', { unit: '   ' }, 400, 'parameter_invalid', 'unit'],
    ['a unit of 51 characters', { unit: 'u'.repeat(51) }, 400, 'parameter_invalid', 'unit'],
    ['a unit with a newline', { unit: 'a\nb' }, 400, 'parameter_invalid', 'unit'],
    ['no unit', { unit: undefined }, 400, 'parameter_missing', 'unit'],
    ['metadata not an object', { metadata: 'x' }, 400, 'parameter_invalid', 'metadata'],
    ['a metadata value not a string', { metadata: { a: 1 } }, 400, 'parameter_invalid', 'metadata.a'],
    [
      '51 metadata keys',
      { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) },
      400,
      'parameter_invalid',
      'metadata',
    ],
    ['a timestamp that is no date', { timestamp: 'yesterday' }, 400, 'parameter_invalid', 'timestamp'],
    ['a timestamp 10 minutes ahead', { timestamp: 'FUTURE' }, 400, 'parameter_invalid', 'timestamp'],
    [
      'a timestamp before the subscription began',
      { timestamp: '2001-01-01T00:00:00Z' },
      400,
      'parameter_invalid',
      'timestamp',
    ],
    ['an empty idempotency_key', { idempotency_key: '' }, 400, 'parameter_invalid', 'idempotency_key'],
    [
      'an idempotency_key of 256 characters',
      { idempotency_key: 'k'.repeat(256) },
      400,
      'parameter_invalid',
      'idempotency_key',
    ],
    ['an unknown field', { bogus_field: 1 }, 400, 'parameter_unknown', 'bogus_field'],
    ['no subscription_id', { subscription_id: undefined }, 400, 'parameter_missing', 'subscription_id'],
    [
      'an unknown subscription',
      { subscription_id: '0190a0a0-0000-7000-8000-000000000000' },
      404,
      'resource_not_found',
      'subscription_id',
    ],
    ['a malformed subscription id', { subscription_id: 'sub_123' }, 404, 'resource_not_found', 'subscription_id'],
  ];

  it.each(CASES)('%s: %s %s on %s, nothing stored', async (_name, overrides, status, code, param) => {
    const before = await stored(h.app, sub.id);
    const body = { ...overrides };
    if (body.timestamp === 'FUTURE')
      body.timestamp = new Date((await h.clock.now(m)).getTime() + 10 * 60_000).toISOString();
    const r = await m.test.post('/usage/events', usageBody(sub.id, body));
    expect(errorOf(r)).toEqual([status, code, param]);
    expect(r.body.error.type).toBe('invalid_request_error');
    expect(await stored(h.app, sub.id)).toEqual(before);
  });

  it('accepts a timestamp up to 5 minutes ahead, and the largest quantity', async () => {
    const s = await billableSubscription(m.test);
    const soon = new Date((await h.clock.now(m)).getTime() + 4 * 60_000).toISOString();
    expect((await report(m.test, s.id, { timestamp: soon })).timestamp).toBe(soon);
    expect((await report(m.test, s.id, { quantity: 1e15, event_type: 'big' })).quantity).toBe(1e15);
    expect((await report(m.test, s.id, { quantity: 1e-12, event_type: 'tiny' })).quantity).toBe(1e-12);
    expect(
      (await summary(m.test, s.id)).aggregations.find((a: any) => a.event_type === 'tiny').total_quantity_decimal,
    ).toBe('0.000000000001');
  });

  it('409 subscription_not_billable for a subscription still at checkout, or cancelled; nothing stored', async () => {
    const { plan } = await recurringPlan(m.test);
    const created = await createSubscription(m.test, plan.id);
    expect(created.status).toBe('created');
    const cancelled = await billableSubscription(m.test);
    expect((await ok(m.test.post(`/subscriptions/${cancelled.id}/cancel`))).status).toBe('cancelled');
    for (const s of [created, cancelled]) {
      const r = await m.test.post('/usage/events', usageBody(s.id));
      expect(errorOf(r)).toEqual([409, 'subscription_not_billable', 'subscription_id']);
      expect(r.body.error.message).toContain(s.id);
      expect(await stored(h.app, s.id)).toEqual({ events: 0, aggregates: 0, units: 0 });
    }
  });

  it('takes usage while paused', async () => {
    const s = await billableSubscription(m.test);
    expect((await ok(m.test.post(`/subscriptions/${s.id}/pause`))).status).toBe('paused');
    expect((await report(m.test, s.id)).billing_period_start).toBe(s.current_period_start);
  });

  it('an event type keeps its first unit on a subscription: another unit is refused (400 unit), nothing stored', async () => {
    const s = await billableSubscription(m.test);
    await report(m.test, s.id, { unit: 'calls' });
    const before = await stored(h.app, s.id);
    const r = await m.test.post('/usage/events', usageBody(s.id, { unit: 'requests' }));
    expect(errorOf(r)).toEqual([400, 'parameter_invalid', 'unit']);
    expect(r.body.error.message).toContain("'calls'");
    expect(await stored(h.app, s.id)).toEqual(before);
    // Another event type, or another subscription, is free to use it.
    await report(m.test, s.id, { event_type: 'other', unit: 'requests' });
    await report(m.test, sub.id, { event_type: `t_${rnd()}`, unit: 'requests' });
  });

  it('sums are exact decimals: ten events of 0.1 are 1, 0.1 + 0.2 is 0.3', async () => {
    const s = await billableSubscription(m.test);
    for (let i = 0; i < 10; i++) await report(m.test, s.id, { event_type: 'tenths', quantity: 0.1 });
    await report(m.test, s.id, { event_type: 'pair', quantity: 0.1 });
    await report(m.test, s.id, { event_type: 'pair', quantity: 0.2 });
    await report(m.test, s.id, { event_type: 'wide', quantity: 1e15 });
    await report(m.test, s.id, { event_type: 'wide', quantity: 0.000000000001 });
    const aggs = (await summary(m.test, s.id)).aggregations;
    const by = (t: string) => aggs.find((a: any) => a.event_type === t);
    expect([...Array(10)].reduce((x) => x + 0.1, 0)).not.toBe(1); // what adding floats gives
    expect(by('tenths')).toMatchObject({ total_quantity: 1, total_quantity_decimal: '1', event_count: 10 });
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(by('pair')).toMatchObject({ total_quantity: 0.3, total_quantity_decimal: '0.3' });
    expect(by('wide').total_quantity_decimal).toBe('1000000000000000.000000000001');
  });

  it('concurrent events on one subscription all count (slots spread the row locks; the summary adds them)', async () => {
    const s = await billableSubscription(m.test);
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => m.test.post('/usage/events', usageBody(s.id, { quantity: 0.1 }))),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(40).fill(201));
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 4 calls`]);
    const st = await stored(h.app, s.id);
    expect(st.events).toBe(40);
    expect(st.aggregates).toBeGreaterThanOrEqual(1);
    expect(st.aggregates).toBeLessThanOrEqual(8);
  });

  describe('single events arriving together share one statement (usage.store.ts reportGroupSql)', () => {
    /** Statements on the service's pool that insert usage events, while `run` runs. */
    async function eventStatements<T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> {
      let statements = 0;
      const counted = (text: string, pass: () => Promise<unknown>) => {
        if (/insert into usage_events/.test(text)) statements++;
        return pass();
      };
      const result = await interceptPool(h.app, counted, run);
      return { result, statements };
    }

    it('60 concurrent events over three subscriptions: each its own answer, all counted, in fewer statements than events', async () => {
      const subs = [
        await billableSubscription(m.test),
        await billableSubscription(m.test),
        await billableSubscription(m.test),
      ];
      const bodies = Array.from({ length: 60 }, (_, i) =>
        usageBody(subs[i % 3].id, {
          quantity: (i % 5) / 10,
          event_type: i % 2 ? 'odd' : 'even',
          unit: i % 2 ? 'o' : 'e',
          idempotency_key: i % 4 ? `g-${rnd(8)}` : undefined,
        }),
      );
      const { result: answers, statements } = await eventStatements(() =>
        Promise.all(bodies.map((b) => m.test.post('/usage/events', b))),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(60).fill(201));
      expect(statements).toBeLessThan(60);
      answers.forEach((r, i) => {
        const s = subs[i % 3];
        expect(r.body).toMatchObject({
          subscription_id: s.id,
          event_type: bodies[i].event_type,
          quantity: bodies[i].quantity,
          unit: bodies[i].unit,
          idempotency_key: bodies[i].idempotency_key ?? null,
          billing_period_start: s.current_period_start,
          billing_period_end: s.current_period_end,
        });
      });
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(60);
      // Sums per subscription and event type, worked out here: quantities (i % 5) / 10 for i = 0..59.
      for (const [k, s] of subs.entries()) {
        const expected = (parity: number) => {
          const mine = [...Array(60).keys()].filter((i) => i % 3 === k && i % 2 === parity);
          return { tenths: mine.reduce((a, i) => a + (i % 5), 0), count: mine.length };
        };
        const aggs = (await summary(m.test, s.id)).aggregations;
        for (const [type, parity] of [
          ['even', 0],
          ['odd', 1],
        ] as const) {
          const e = expected(parity);
          const a = aggs.find((x: any) => x.event_type === type);
          expect(a.total_quantity_decimal).toBe(e.tenths % 10 ? (e.tenths / 10).toFixed(1) : String(e.tenths / 10));
          expect(a.event_count).toBe(e.count);
        }
        expect((await stored(h.app, s.id)).events).toBe(20);
      }
    });

    it('a new event type raced with two units: the first registered keeps it, events with the other are refused (400 unit), nothing of theirs stored', async () => {
      const s = await billableSubscription(m.test);
      const units = Array.from({ length: 20 }, (_, i) => (i % 2 ? 'bytes' : 'items'));
      const answers = await Promise.all(
        units.map((unit) => m.test.post('/usage/events', usageBody(s.id, { event_type: 'contested', unit }))),
      );
      const won = answers.find((r) => r.status === 201)!.body.unit;
      answers.forEach((r, i) => {
        if (units[i] === won) expect(r.status).toBe(201);
        else {
          expect(errorOf(r)).toEqual([400, 'parameter_invalid', 'unit']);
          expect(r.body.error.message).toContain(`'${won}'`);
        }
      });
      expect(await stored(h.app, s.id)).toEqual({ events: 10, aggregates: expect.any(Number), units: 1 });
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} contested 10 ${won}`]);
    });

    it('events that fit and events that do not, sent together: each gets the answer it gets alone, only the good ones are stored', async () => {
      const s = await billableSubscription(m.test);
      await report(m.test, s.id, { event_type: 'fixed', unit: 'calls' });
      const cancelled = await billableSubscription(m.test);
      expect((await ok(m.test.post(`/subscriptions/${cancelled.id}/cancel`))).status).toBe('cancelled');
      const future = new Date((await h.clock.now(m)).getTime() + 10 * 60_000).toISOString();
      const usedKey = `used-${rnd()}`;
      const first = await report(m.test, s.id, { idempotency_key: usedKey, quantity: 7 });
      const cases: [Record<string, unknown>, number, string | null][] = [
        [usageBody(s.id, { quantity: 2 }), 201, null],
        [usageBody(cancelled.id), 409, 'subscription_not_billable'],
        [usageBody('0190a0a0-0000-7000-8000-000000000000'), 404, 'resource_not_found'],
        [usageBody(s.id, { timestamp: future }), 400, 'parameter_invalid'],
        [usageBody(s.id, { timestamp: '2001-01-01T00:00:00Z' }), 400, 'parameter_invalid'],
        [usageBody(s.id, { event_type: 'fixed', unit: 'other' }), 400, 'parameter_invalid'],
        [usageBody(s.id, { idempotency_key: usedKey, quantity: 99 }), 201, null],
        [usageBody(s.id, { quantity: 3 }), 201, null],
      ];
      const answers = await Promise.all(cases.map(([b]) => m.test.post('/usage/events', b)));
      expect(answers.map((r) => [r.status, r.body.error?.code ?? null])).toEqual(
        cases.map(([, status, code]) => [status, code]),
      );
      expect(answers[6].body).toEqual(first); // the used key answers its first event
      expect(await totals(m.test, s.id)).toEqual([
        `${s.current_period_start} api_calls 12 calls`,
        `${s.current_period_start} fixed 1 calls`,
      ]);
      expect((await stored(h.app, s.id)).events).toBe(4);
      expect(await stored(h.app, cancelled.id)).toEqual({ events: 0, aggregates: 0, units: 0 });
    });

    it('a group statement that fails (the connection dropped) wrote nothing: its events are written one by one, each once', async () => {
      const s = await billableSubscription(m.test);
      let failed = 0;
      // The first group statement fails as a dropped connection would, before it reaches PostgreSQL.
      const dropFirstGroup = (text: string, pass: () => Promise<unknown>) =>
        /jsonb_array_elements\(\$1::jsonb\) with ordinality/.test(text) && failed++ === 0
          ? Promise.reject(new Error('Connection terminated unexpectedly'))
          : pass();
      const answers = await interceptPool(h.app, dropFirstGroup, () =>
        Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            m.test.post('/usage/events', usageBody(s.id, { quantity: 1, idempotency_key: `drop-${rnd()}-${i}` })),
          ),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(12);
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 12 calls`]);
      expect((await stored(h.app, s.id)).events).toBe(12);
    });

    it('two tenants at once: each event lands with its own merchant and mode', async () => {
      const other = await h.merchant();
      await connect(other.test, 'stripe');
      const mine = await billableSubscription(m.test);
      const theirs = await billableSubscription(other.test);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? other.test : m.test).post('/usage/events', usageBody((i % 2 ? theirs : mine).id, { quantity: 1 })),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
      // A subscription of the other merchant is not found, even among events sent together.
      const crossed = await Promise.all([
        m.test.post('/usage/events', usageBody(theirs.id)),
        other.test.post('/usage/events', usageBody(mine.id)),
      ]);
      expect(crossed.map(errorOf)).toEqual([
        [404, 'resource_not_found', 'subscription_id'],
        [404, 'resource_not_found', 'subscription_id'],
      ]);
      const rows = await h.app.orm.em
        .getConnection()
        .execute<{ merchant_id: string; mode: string; subscription_id: string; n: string }[]>(
          'select merchant_id, mode, subscription_id, count(*) as n from usage_events where subscription_id in (?, ?) group by 1, 2, 3 order by 1',
          [mine.id, theirs.id],
        );
      expect(rows.map((r) => [r.merchant_id, r.mode, r.subscription_id, Number(r.n)]).sort()).toEqual(
        [
          [m.id, 'test', mine.id, 10],
          [other.id, 'test', theirs.id, 10],
        ].sort(),
      );
    });
  });

  describe('idempotency_key in the body', () => {
    it('the same key answers the first event (201) and counts nothing twice, whatever the second request says', async () => {
      const s = await billableSubscription(m.test);
      const key = `evt-${rnd()}`;
      const first = await report(m.test, s.id, { idempotency_key: key, quantity: 5 });
      expect(first.idempotency_key).toBe(key);
      const again = await m.test.post('/usage/events', usageBody(s.id, { idempotency_key: key, quantity: 5 }));
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first);
      // Another quantity, even a subscription that cannot take usage: the key already counted, the first event answers.
      expect(await report(m.test, s.id, { idempotency_key: key, quantity: 7 })).toEqual(first);
      expect(await report(m.test, sub.id, { idempotency_key: key, event_type: 'never', unit: 'other' })).toEqual(first);
      expect((await summary(m.test, sub.id)).aggregations.map((a: any) => a.event_type)).not.toContain('never');
      expect((await report(m.test, sub.id, { event_type: 'never', unit: 'mine' })).unit).toBe('mine'); // nothing was registered
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 5 calls`]);
      expect((await stored(h.app, s.id)).events).toBe(1);
    });

    it('keys are per merchant and mode: the same key in live mode or for another merchant is another event', async () => {
      const other = await h.merchant();
      await connect(other.test, 'stripe');
      const s2 = await billableSubscription(other.test);
      const key = `shared-${rnd()}`;
      const a = await report(m.test, sub.id, { idempotency_key: key });
      const b = await report(other.test, s2.id, { idempotency_key: key });
      expect(b.id).not.toBe(a.id);
    });

    it('raced: 20 identical requests answer one event, counted once', async () => {
      const s = await billableSubscription(m.test);
      const key = `race-${rnd()}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          m.test.post('/usage/events', usageBody(s.id, { idempotency_key: key, quantity: 2 })),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 2 calls`]);
      expect((await summary(m.test, s.id)).aggregations[0].event_count).toBe(1);
      expect((await stored(h.app, s.id)).events).toBe(1);
    });

    it('raced on a new event type: the unit is registered once, every request answers the one event', async () => {
      const s = await billableSubscription(m.test);
      const key = `race-unit-${rnd()}`;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () =>
          m.test.post('/usage/events', usageBody(s.id, { idempotency_key: key, event_type: 'fresh', unit: 'u' })),
        ),
      );
      expect(answers.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(answers.map((r) => r.body.id)).size).toBe(1);
      expect(await stored(h.app, s.id)).toEqual({ events: 1, aggregates: 1, units: 1 });
    });
  });

  describe('Idempotency-Key header', () => {
    it('replays the first answer byte for byte with Idempotent-Replayed; another body is idempotency_key_reused', async () => {
      const s = await billableSubscription(m.test);
      const key = `hdr-${rnd()}`;
      const at = (ms: number) => new Date(new Date(s.current_period_start).getTime() + ms).toISOString();
      const body = usageBody(s.id, { quantity: 4, timestamp: at(1000) });
      const first = await m.test.post('/usage/events', body, { 'Idempotency-Key': key });
      expect(first.status).toBe(201);
      const again = await m.test.post('/usage/events', body, { 'Idempotency-Key': key });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      const other = await m.test.post('/usage/events', usageBody(s.id, { quantity: 5 }), { 'Idempotency-Key': key });
      expect(errorOf(other)).toEqual([400, 'idempotency_key_reused', 'Idempotency-Key']);
      const when = await m.test.post('/usage/events', { ...body, timestamp: at(2000) }, { 'Idempotency-Key': key });
      expect(errorOf(when)).toEqual([400, 'idempotency_key_reused', 'Idempotency-Key']);
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 4 calls`]);
    });

    it('raced: 20 identical requests create one event (the others replay it or are told it is in flight)', async () => {
      const s = await billableSubscription(m.test);
      const key = `hdr-race-${rnd()}`;
      const body = usageBody(s.id, { quantity: 3 });
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => m.test.post('/usage/events', body, { 'Idempotency-Key': key })),
      );
      for (const r of answers)
        expect([
          [201, undefined],
          [409, 'idempotency_key_in_use'],
        ]).toContainEqual([r.status, r.body.error?.code]);
      const ids = new Set(answers.filter((r) => r.status === 201).map((r) => r.body.id));
      expect(ids.size).toBe(1);
      expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 3 calls`]);
    });

    it('a malformed header is 400 naming Idempotency-Key', async () => {
      const r = await m.test.post('/usage/events', usageBody(sub.id), { 'Idempotency-Key': 'k'.repeat(256) });
      expect(errorOf(r)).toEqual([400, 'parameter_invalid', 'Idempotency-Key']);
    });
  });

  it('GraphQL reportUsage: the same event in camelCase; errors carry the API error code and param', async () => {
    const s = await billableSubscription(m.test);
    const q = `mutation($input: ReportUsageInput!) { reportUsage(input: $input) {
      id object subscriptionId eventType quantity unit metadata timestamp billingPeriodStart billingPeriodEnd idempotencyKey livemode createdAt } }`;
    const r = await m.test.gql(q, {
      input: { subscriptionId: s.id, eventType: 'gql', quantity: 0.5, unit: 'calls', idempotencyKey: `g-${rnd()}` },
    });
    expect(r.errors).toBeUndefined();
    expect(r.data.reportUsage).toMatchObject({
      object: 'usage_event',
      subscriptionId: s.id,
      quantity: 0.5,
      billingPeriodStart: s.current_period_start,
      livemode: false,
    });
    const bad = await m.test.gql(q, { input: { subscriptionId: s.id, eventType: 'gql', quantity: -2, unit: 'calls' } });
    expect(bad.errors![0].extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'quantity',
      http: { status: 400 },
    });
    const busy = await m.test.gql(q, {
      input: { subscriptionId: '0190a0a0-0000-7000-8000-000000000000', eventType: 'gql', quantity: 1, unit: 'calls' },
    });
    expect(busy.errors![0].extensions).toMatchObject({
      code: 'resource_not_found',
      param: 'subscription_id',
      http: { status: 404 },
    });
  });
});

describe('POST /usage/events/batch', () => {
  const batch = (events: Record<string, unknown>[]) => m.test.post('/usage/events/batch', { events });

  it('1,000 events in one request: 201, a list in input order, every one counted, across subscriptions', async () => {
    const s1 = await billableSubscription(m.test);
    const s2 = await billableSubscription(m.test);
    const events = Array.from({ length: 1000 }, (_, i) =>
      usageBody(i % 2 ? s2.id : s1.id, {
        event_type: i % 3 ? 'api_calls' : 'storage',
        unit: i % 3 ? 'calls' : 'GB',
        quantity: 0.1,
        metadata: { n: String(i), note: i % 100 ? 'x' : 'é 😀 ₹' },
      }),
    );
    const r = await batch(events);
    expect(r.status).toBe(201);
    // A large answer goes out as bytes (rest-shim/router.ts sendJson): its length is in bytes, not characters.
    expect(r.text.length).toBeGreaterThan(16 * 1024);
    expect(Number(r.headers.get('content-length'))).toBe(Buffer.byteLength(r.text));
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.body.object).toBe('list');
    expect(r.body.data).toHaveLength(1000);
    r.body.data.forEach((e: any, i: number) => {
      expect(e).toMatchObject({
        object: 'usage_event',
        subscription_id: events[i].subscription_id,
        metadata: { n: String(i), note: i % 100 ? 'x' : 'é 😀 ₹' },
        quantity: 0.1,
      });
      expect(e.billing_period_start).toBe((i % 2 ? s2 : s1).current_period_start);
      expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/); // UUID v7, as single events
    });
    expect(new Set(r.body.data.map((e: any) => e.id)).size).toBe(1000);
    // Tenths counted by hand: n events of 0.1 are n/10 exactly.
    const tenths = (sub: any, type: string) => {
      const n = events.filter((e) => e.subscription_id === sub.id && e.event_type === type).length;
      return `${Math.floor(n / 10)}${n % 10 ? `.${n % 10}` : ''}`;
    };
    for (const s of [s1, s2]) {
      expect(tenths(s, 'api_calls')).toBe('33.3'); // 500 events each, 167 of them storage
      expect(await totals(m.test, s.id)).toEqual([
        `${s.current_period_start} api_calls ${tenths(s, 'api_calls')} calls`,
        `${s.current_period_start} storage ${tenths(s, 'storage')} GB`,
      ]);
    }
    expect((await stored(h.app, s1.id)).events + (await stored(h.app, s2.id)).events).toBe(1000);
  });

  it('more than 1,000 events, or none: 400 on events, nothing stored', async () => {
    const s = await billableSubscription(m.test);
    const big = await batch(Array.from({ length: 1001 }, () => usageBody(s.id)));
    expect(errorOf(big)).toEqual([400, 'parameter_invalid', 'events']);
    expect(errorOf(await batch([]))).toEqual([400, 'parameter_invalid', 'events']);
    expect(errorOf(await m.test.post('/usage/events/batch', {}))).toEqual([400, 'parameter_missing', 'events']);
    expect(await stored(h.app, s.id)).toEqual({ events: 0, aggregates: 0, units: 0 });
  });

  it('all or nothing: one bad event refuses the batch, naming it (events[i].field), and nothing is stored', async () => {
    const s = await billableSubscription(m.test);
    const { plan } = await recurringPlan(m.test);
    const created = await createSubscription(m.test, plan.id);
    const good = () => usageBody(s.id, { idempotency_key: `b-${rnd()}` });
    const cases: [Record<string, unknown>, number, number, string, string][] = [
      [{ quantity: -1 }, 3, 400, 'parameter_invalid', 'events[3].quantity'],
      [{ event_type: 'a b' }, 0, 400, 'parameter_invalid', 'events[0].event_type'],
      [{ event_type: 'x'.repeat(101) }, 2, 400, 'parameter_invalid', 'events[2].event_type'],
      [{ quantity: 'x' }, 1, 400, 'parameter_invalid', 'events[1].quantity'],
      [{ unit: undefined }, 2, 400, 'parameter_missing', 'events[2].unit'],
      [{ bogus: true }, 1, 400, 'parameter_unknown', 'events[1].bogus'],
      [{ timestamp: '1999-01-01T00:00:00Z' }, 3, 400, 'parameter_invalid', 'events[3].timestamp'],
      [{ unit: 'other' }, 3, 400, 'parameter_invalid', 'events[3].unit'], // events 0..2 fixed the unit as calls
      [
        { subscription_id: '0190a0a0-0000-7000-8000-000000000000' },
        2,
        404,
        'resource_not_found',
        'events[2].subscription_id',
      ],
      [{ subscription_id: created.id }, 1, 409, 'subscription_not_billable', 'events[1].subscription_id'],
    ];
    const keysBefore = await keysOf(h.app, m.id);
    for (const [bad, at, status, code, param] of cases) {
      const events = [good(), good(), good(), good(), good()];
      events[at] = usageBody(s.id, bad);
      const r = await batch(events);
      expect([bad, ...errorOf(r)]).toEqual([bad, status, code, param]);
      expect(await stored(h.app, s.id)).toEqual({ events: 0, aggregates: 0, units: 0 });
    }
    expect(await keysOf(h.app, m.id)).toBe(keysBefore);
    const last = Array.from({ length: 1000 }, () => usageBody(s.id));
    last[999] = usageBody(s.id, { quantity: 1e16 });
    expect(errorOf(await batch(last))).toEqual([400, 'parameter_invalid', 'events[999].quantity']);
    expect(await stored(h.app, s.id)).toEqual({ events: 0, aggregates: 0, units: 0 });
  });

  it('a unit registered before is kept: a batch with another unit is refused at that event', async () => {
    const s = await billableSubscription(m.test);
    await report(m.test, s.id, { unit: 'calls' });
    const r = await batch([usageBody(s.id, { event_type: 'x', unit: 'a' }), usageBody(s.id, { unit: 'requests' })]);
    expect(errorOf(r)).toEqual([400, 'parameter_invalid', 'events[1].unit']);
    expect((await stored(h.app, s.id)).events).toBe(1);
  });

  it('keys: a key used before answers its event, a key repeated in the batch answers the same event; each counted once', async () => {
    const s = await billableSubscription(m.test);
    const old = await report(m.test, s.id, { idempotency_key: `old-${rnd()}`, quantity: 1 });
    const dup = `dup-${rnd()}`;
    const events = [
      usageBody(s.id, { idempotency_key: old.idempotency_key, quantity: 100 }),
      usageBody(s.id, { idempotency_key: dup, quantity: 2 }),
      usageBody(s.id, { quantity: 4 }),
      usageBody(s.id, { idempotency_key: dup, quantity: 2 }),
    ];
    const r = await batch(events);
    expect(r.status).toBe(201);
    expect(r.body.data[0]).toEqual(old);
    expect(r.body.data[3]).toEqual(r.body.data[1]);
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 7 calls`]);
    // The whole batch again (a client retry): nothing new, the keyed events answered as before.
    const again = await batch(events);
    expect(again.body.data[1]).toEqual(r.body.data[1]);
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 11 calls`]); // the unkeyed one counts again
  });

  it('a retried batch answers the events its keys made, even once the subscription no longer takes usage; nothing else registered', async () => {
    const s = await billableSubscription(m.test);
    const events = [
      usageBody(s.id, { idempotency_key: `rt-${rnd()}`, quantity: 2 }),
      usageBody(s.id, { idempotency_key: `rt-${rnd()}`, quantity: 3 }),
    ];
    const first = await batch(events);
    expect(first.status).toBe(201);
    // The same keys saying something else (another event type, and a unit that type would then be stuck with):
    // answered by the stored events, and the other event type gets no unit from events that were not written.
    const other = await batch(events.map((e) => ({ ...e, event_type: 'other', unit: 'stuck' })));
    expect(other.status).toBe(201);
    expect(other.body.data).toEqual(first.body.data);
    expect(await stored(h.app, s.id)).toEqual({ events: 2, aggregates: 1, units: 1 });
    expect((await report(m.test, s.id, { event_type: 'other', unit: 'free' })).unit).toBe('free');

    expect((await ok(m.test.post(`/subscriptions/${s.id}/cancel`))).status).toBe('cancelled');
    const again = await batch(events);
    expect(again.status).toBe(201);
    expect(again.body.data).toEqual(first.body.data);
    // An event without a used key is refused as usual, and the batch with it changes nothing.
    const mixed = await batch([...events, usageBody(s.id, { quantity: 1 })]);
    expect(errorOf(mixed)).toEqual([409, 'subscription_not_billable', 'events[2].subscription_id']);
    expect(await totals(m.test, s.id)).toEqual([
      `${s.current_period_start} api_calls 5 calls`,
      `${s.current_period_start} other 1 free`,
    ]);
  });

  it('raced: 10 identical keyed batches count each event once', async () => {
    const s = await billableSubscription(m.test);
    const events = Array.from({ length: 50 }, (_, i) =>
      usageBody(s.id, { idempotency_key: `rb-${rnd()}-${i}`, quantity: 1 }),
    );
    const answers = await Promise.all(Array.from({ length: 10 }, () => batch(events)));
    expect(answers.map((r) => r.status)).toEqual(Array(10).fill(201));
    for (const r of answers)
      expect(r.body.data.map((e: any) => e.id)).toEqual(answers[0].body.data.map((e: any) => e.id));
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 50 calls`]);
    expect((await stored(h.app, s.id)).events).toBe(50);
  });

  it('raced: 8 batches sharing half their keys (some new event types) count each key once and answer every event', async () => {
    // A batch first tries to take all its keys as new; one taken before or meanwhile makes it write nothing and go
    // again skipping the taken keys (usage.store.ts writeBatch). Both rounds are raced here, with and without new units.
    const s = await billableSubscription(m.test);
    const shared = Array.from({ length: 20 }, (_, i) =>
      usageBody(s.id, { idempotency_key: `sh-${rnd()}-${i}`, quantity: 1 }),
    );
    const batches = Array.from({ length: 8 }, (_, b) => [
      ...shared,
      ...Array.from({ length: 20 }, (_, i) =>
        usageBody(s.id, {
          idempotency_key: `own-${rnd()}-${b}-${i}`,
          quantity: 10,
          ...(b % 2 ? { event_type: `t${b}`, unit: 'u' } : {}),
        }),
      ),
    ]);
    const answers = await Promise.all(batches.map((events) => batch(events)));
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(201));
    // The shared keys answer one event each, whichever batch wrote it.
    for (const r of answers)
      expect(r.body.data.slice(0, 20).map((e: any) => e.id)).toEqual(
        answers[0].body.data.slice(0, 20).map((e: any) => e.id),
      );
    expect(new Set(answers.flatMap((r) => r.body.data.slice(20).map((e: any) => e.id))).size).toBe(160);
    expect(await totals(m.test, s.id)).toEqual([
      `${s.current_period_start} api_calls ${20 + 4 * 20 * 10} calls`,
      ...[1, 3, 5, 7].map((b) => `${s.current_period_start} t${b} 200 u`),
    ]);
    expect((await stored(h.app, s.id)).events).toBe(20 + 160);
  });

  it('Idempotency-Key on a batch replays the whole answer', async () => {
    const s = await billableSubscription(m.test);
    const key = `hb-${rnd()}`;
    const body = { events: [usageBody(s.id), usageBody(s.id, { quantity: 2 })] };
    const first = await m.test.post('/usage/events/batch', body, { 'Idempotency-Key': key });
    const again = await m.test.post('/usage/events/batch', body, { 'Idempotency-Key': key });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 3 calls`]);
  });

  it('GraphQL reportUsageBatch', async () => {
    const s = await billableSubscription(m.test);
    const r = await m.test.gql(
      'mutation($input: ReportUsageBatchInput!) { reportUsageBatch(input: $input) { object data { id eventType quantity } } }',
      {
        input: {
          events: [
            { subscriptionId: s.id, eventType: 'a', quantity: 1, unit: 'u' },
            { subscriptionId: s.id, eventType: 'b', quantity: 2, unit: 'u' },
          ],
        },
      },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.reportUsageBatch.object).toBe('list');
    expect(r.data.reportUsageBatch.data.map((e: any) => [e.eventType, e.quantity])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    const bad = await m.test.gql(
      'mutation($input: ReportUsageBatchInput!) { reportUsageBatch(input: $input) { object } }',
      {
        input: {
          events: [
            { subscriptionId: s.id, eventType: 'a', quantity: 1, unit: 'u' },
            { subscriptionId: s.id, eventType: 'a', quantity: -1, unit: 'u' },
          ],
        },
      },
    );
    expect(bad.errors![0].extensions).toMatchObject({ code: 'parameter_invalid', param: 'events[1].quantity' });
  });
});

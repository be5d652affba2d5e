import { version as uuidVersion } from 'uuid';
import { TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { ok } from '../subscriptions/helpers';
import { UsagePartitions } from '../../src/modules/usage/usage.partitions';
import {
  billableSubscription,
  errorOf,
  partitionOf,
  partitions,
  report,
  stored,
  summary,
  totals,
  usageBody,
} from './helpers';

/** The usage summary (docs/usage.md): sums per billing period and event type, periods by the test clock, partitions. */

const h = useHarness();
const DAY = 86_400_000;
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
});

const ms = (iso: string) => new Date(iso).getTime();
const iso = (t: number) => new Date(t).toISOString();

describe('GET /usage/summary', () => {
  it('a subscription without usage answers an empty list; a missing, malformed or unknown id is refused', async () => {
    const s = await billableSubscription(m.test);
    expect(await summary(m.test, s.id)).toEqual({ object: 'usage_summary', subscription_id: s.id, aggregations: [] });
    expect(errorOf(await m.test.get('/usage/summary'))).toEqual([400, 'parameter_missing', 'subscription_id']);
    expect(errorOf(await m.test.get('/usage/summary?subscription_id=nope'))).toEqual([
      404,
      'resource_not_found',
      'subscription_id',
    ]);
    expect(errorOf(await m.test.get('/usage/summary?subscription_id=0190a0a0-0000-7000-8000-000000000000'))).toEqual([
      404,
      'resource_not_found',
      'subscription_id',
    ]);
    expect(errorOf(await m.test.get(`/usage/summary?subscription_id=${s.id}&bogus=1`))).toEqual([
      400,
      'parameter_unknown',
      'bogus',
    ]);
  });

  it('one aggregation per period and event type: newest period first, event types in byte order, ids stable', async () => {
    const s = await billableSubscription(m.test);
    for (const [type, q] of [
      ['b', 1],
      ['a', 2],
      ['C', 3],
      ['a', 0.5],
    ] as const)
      await report(m.test, s.id, { event_type: type, quantity: q, unit: 'u' });
    const first = await summary(m.test, s.id);
    expect(first.aggregations).toEqual(
      [
        ['C', 3, '3', 1],
        ['a', 2.5, '2.5', 2],
        ['b', 1, '1', 1],
      ].map(([type, total, decimal, count]) => ({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        object: 'usage_aggregation',
        billing_period_start: s.current_period_start,
        billing_period_end: s.current_period_end,
        event_type: type,
        total_quantity: total,
        total_quantity_decimal: decimal,
        unit: 'u',
        event_count: count,
      })),
    );
    const ids = first.aggregations.map((a: any) => a.id);
    expect(new Set(ids).size).toBe(3);
    // The id names (subscription, period, event type): a UUID v5, the same however the sums move.
    await report(m.test, s.id, { event_type: 'a', quantity: 1, unit: 'u' });
    const later = await summary(m.test, s.id);
    expect(later.aggregations.map((a: any) => a.id)).toEqual(ids);
    expect(uuidVersion(ids[0])).toBe(5);
    expect(later.aggregations[1].total_quantity_decimal).toBe('3.5');
  });

  it('is read from the aggregates, never the events', async () => {
    const s = await billableSubscription(m.test);
    await report(m.test, s.id, { quantity: 6 });
    await h.app.orm.em.getConnection().execute('delete from usage_events where subscription_id = ?', [s.id]);
    expect(await totals(m.test, s.id)).toEqual([`${s.current_period_start} api_calls 6 calls`]);
  });

  it('GraphQL usageSummary: the same numbers in camelCase; an unknown id is 404', async () => {
    const s = await billableSubscription(m.test);
    await report(m.test, s.id, { quantity: 0.1 });
    await report(m.test, s.id, { quantity: 0.2 });
    const q = `query($id: ID!) { usageSummary(subscriptionId: $id) { object subscriptionId aggregations {
      id object billingPeriodStart billingPeriodEnd eventType totalQuantity totalQuantityDecimal unit eventCount } } }`;
    const r = await m.test.gql(q, { id: s.id });
    expect(r.errors).toBeUndefined();
    const rest = await summary(m.test, s.id);
    const a = rest.aggregations[0];
    expect(r.data.usageSummary).toEqual({
      object: 'usage_summary',
      subscriptionId: s.id,
      aggregations: [
        {
          id: a.id,
          object: 'usage_aggregation',
          billingPeriodStart: a.billing_period_start,
          billingPeriodEnd: a.billing_period_end,
          eventType: 'api_calls',
          totalQuantity: 0.3,
          totalQuantityDecimal: '0.3',
          unit: 'calls',
          eventCount: 2,
        },
      ],
    });
    const none = await m.test.gql(q, { id: '0190a0a0-0000-7000-8000-000000000000' });
    expect(none.errors![0].extensions).toMatchObject({
      code: 'resource_not_found',
      param: 'subscription_id',
      http: { status: 404 },
    });
  });
});

describe('billing period attribution (test clock)', () => {
  it('across a renewal: two periods, newest first; back-dated events land in the earlier one, bounds [start, end)', async () => {
    const s = await billableSubscription(m.test);
    const p1 = { start: s.current_period_start, end: s.current_period_end };
    expect((await report(m.test, s.id, { quantity: 1 })).billing_period_start).toBe(p1.start);
    await h.clock.advance(m, new Date(ms(p1.end) + 1000));
    const renewed = await ok(m.test.get(`/subscriptions/${s.id}`));
    expect(renewed.current_period_start).toBe(p1.end);
    const p2 = { start: renewed.current_period_start, end: renewed.current_period_end };

    expect(await report(m.test, s.id, { quantity: 2 })).toMatchObject({
      billing_period_start: p2.start,
      billing_period_end: p2.end,
    });
    const back = await report(m.test, s.id, { quantity: 4, timestamp: iso(ms(p1.start) + 3_600_000) });
    expect(back).toMatchObject({ billing_period_start: p1.start, billing_period_end: p1.end });
    expect((await report(m.test, s.id, { quantity: 8, timestamp: p2.start })).billing_period_start).toBe(p2.start);
    expect((await report(m.test, s.id, { quantity: 16, timestamp: iso(ms(p1.end) - 1) })).billing_period_start).toBe(
      p1.start,
    );
    // A batch places each of its events too.
    const b = await ok(
      m.test.post('/usage/events/batch', {
        events: [usageBody(s.id, { quantity: 32, timestamp: p1.start }), usageBody(s.id, { quantity: 64 })],
      }),
      201,
    );
    expect(b.data.map((e: any) => e.billing_period_start)).toEqual([p1.start, p2.start]);

    expect(await totals(m.test, s.id)).toEqual([`${p2.start} api_calls 74 calls`, `${p1.start} api_calls 53 calls`]);
    const before = await m.test.post('/usage/events', usageBody(s.id, { timestamp: iso(ms(p1.start) - 1) }));
    expect(errorOf(before)).toEqual([400, 'parameter_invalid', 'timestamp']);
    expect(before.body.error.message).toContain(p1.start);
  });

  it('a trial is a billing period of its own; the first paid period starts where it ends', async () => {
    const s = await billableSubscription(m.test, { trial_period_days: 7 });
    expect(s.status).toBe('trialing');
    expect([s.current_period_start, s.current_period_end]).toEqual([s.trial_start, s.trial_end]);
    expect(await report(m.test, s.id, { quantity: 1 })).toMatchObject({
      billing_period_start: s.trial_start,
      billing_period_end: s.trial_end,
    });
    await h.clock.advance(m, 8 * 86_400);
    const active = await ok(m.test.get(`/subscriptions/${s.id}`));
    expect(active.status).toBe('active');
    expect(active.current_period_start).toBe(s.trial_end);
    expect((await report(m.test, s.id, { quantity: 2 })).billing_period_start).toBe(active.current_period_start);
    expect(
      (await report(m.test, s.id, { quantity: 4, timestamp: iso(ms(s.trial_end) - 1000) })).billing_period_start,
    ).toBe(s.trial_start);
    expect(await totals(m.test, s.id)).toEqual([
      `${active.current_period_start} api_calls 2 calls`,
      `${s.trial_start} api_calls 5 calls`,
    ]);
  });
});

describe('monthly partitions', () => {
  it('a month without a partition gets one when an event needs it (single, batch, concurrent); events months apart', async () => {
    const mm = await h.merchant();
    await connect(mm.test, 'stripe');
    const s = await billableSubscription(mm.test, { billing_frequency: 'yearly' });
    const t0 = await h.clock.now(mm);
    const initial = await partitions(h.app);
    expect(initial).toContain(partitionOf(t0));
    await report(mm.test, s.id, { quantity: 1 });

    // About 4, 6 and 8 months on: none of these months has a partition yet (the migration made -1..+2).
    const later = [130, 195, 260].map((d) => new Date(t0.getTime() + d * DAY));
    for (const t of later) expect(initial).not.toContain(partitionOf(t));

    await h.clock.advance(mm, later[0]);
    expect((await report(mm.test, s.id, { quantity: 2 })).billing_period_start).toBe(s.current_period_start);
    expect(await partitions(h.app)).toContain(partitionOf(later[0]));

    await h.clock.advance(mm, later[1]);
    const b = await ok(
      mm.test.post('/usage/events/batch', {
        events: [
          usageBody(s.id, { quantity: 4 }),
          usageBody(s.id, { quantity: 8, timestamp: iso(t0.getTime() + 60_000) }),
        ],
      }),
      201,
    );
    expect(b.data.map((e: any) => partitionOf(e.timestamp))).toEqual([partitionOf(later[1]), partitionOf(t0)]);
    expect(await partitions(h.app)).toContain(partitionOf(later[1]));

    await h.clock.advance(mm, later[2]);
    const raced = await Promise.all(
      Array.from({ length: 12 }, () => mm.test.post('/usage/events', usageBody(s.id, { quantity: 16 }))),
    );
    expect(raced.map((r) => r.status)).toEqual(Array(12).fill(201));

    const names = await partitions(h.app);
    expect(names).toContain(partitionOf(later[2]));
    expect(new Set(names).size).toBe(names.length);
    // Each event sits in the partition of its month.
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ part: string; n: string }[]>(
        'select tableoid::regclass::text as part, count(*) as n from usage_events where subscription_id = ? group by 1 order by 1',
        [s.id],
      );
    expect(Object.fromEntries(rows.map((r) => [r.part, Number(r.n)]))).toEqual({
      [partitionOf(t0)]: 2,
      [partitionOf(later[0])]: 1,
      [partitionOf(later[1])]: 1,
      [partitionOf(later[2])]: 12,
    });
    // One yearly period holds them all.
    expect(await totals(mm.test, s.id)).toEqual([`${s.current_period_start} api_calls 207 calls`]);
    expect(await stored(h.app, s.id)).toMatchObject({ events: 16 });
  });

  it('two processes making the same month at once: one partition, no error', async () => {
    const pool = h.app.app.services.plainPool;
    const t = new Date(Date.UTC(2091, 4, 15));
    const makers = [new UsagePartitions(pool), new UsagePartitions(pool), new UsagePartitions(pool)];
    await Promise.all(makers.flatMap((p) => [p.repair(t), p.ensure([t])]));
    expect((await partitions(h.app)).filter((n) => n === 'usage_events_2091_05')).toHaveLength(1);
    // It is a real partition: a row of that month goes in and is found there.
    const conn = h.app.orm.em.getConnection();
    const [row] = await conn.execute<{ part: string }[]>(
      `insert into usage_events (id, "timestamp", merchant_id, mode, subscription_id, period_start, period_end, event_type, unit, quantity)
       values ('0190a0a0-0000-7000-8000-0000000000aa', '2091-05-20T00:00:00Z', '0190a0a0-0000-7000-8000-0000000000bb', 'test',
               '0190a0a0-0000-7000-8000-0000000000cc', now(), now(), 'x', 'u', 1) returning tableoid::regclass::text as part`,
    );
    expect(row.part).toBe('usage_events_2091_05');
    await conn.execute(`delete from usage_events where id = '0190a0a0-0000-7000-8000-0000000000aa'`);
  });
});

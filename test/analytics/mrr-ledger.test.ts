import { TestMerchant, useHarness, submitCheckout } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { monthlyAmount } from '../../src/money';
import { decideMovement, LedgerFacts, mrrAmountOf, mrrStateOf } from '../../src/modules/analytics/mrr-ledger';
import { SubscriptionStatus } from '../../src/modules/subscriptions/subscription.machine';

/**
 * The MRR movements ledger's rules (docs/analytics.md; src/modules/analytics/mrr-ledger.ts): a subscription's MRR in
 * integer arithmetic, the movement a change writes, and the ledger rows a real subscription's life writes (one per MRR change, in its transaction, none for renewals).
 */

const h = useHarness();
jest.setTimeout(120_000);

describe("a subscription's MRR", () => {
  it.each([
    // [amount, frequency, interval, expected, arithmetic]
    [49900, 'monthly', 1, 49900, '49900 / 1'],
    [30000, 'monthly', 3, 10000, '30000 / 3 (quarterly)'],
    [10000, 'monthly', 3, 3333, '10000 / 3 = 3333.33'],
    [20000, 'monthly', 3, 6667, '20000 / 3 = 6666.67'],
    [120000, 'yearly', 1, 10000, '120000 / 12'],
    [100, 'yearly', 1, 8, '100 / 12 = 8.33'],
    [150, 'yearly', 1, 13, '150 / 12 = 12.5 -> 13 (half away from zero)'],
    [1000, 'weekly', 1, 4333, '1000 x 52 / 12 = 4333.33'],
    [1000, 'weekly', 2, 2167, '1000 x 52 / 24 = 2166.67'],
    [100, 'daily', 1, 3042, '100 x 365 / 12 = 3041.67'],
    [30, 'daily', 1, 913, '30 x 365 / 12 = 912.5 -> 913'],
    [0, 'monthly', 1, 0, 'free plan'],
  ])('%s %s every %s -> %s (%s)', (amount, frequency, interval, expected) => {
    expect(monthlyAmount(amount as number, frequency as string, interval as number)).toBe(expected);
  });

  const base = {
    status: SubscriptionStatus.ACTIVE,
    amount: 49900,
    billingFrequency: 'monthly' as any,
    billingInterval: 1,
    couponId: null as string | null,
    discountCycles: null as number | null,
    discountPercentBps: null as number | null,
    discountAmountOff: null as number | null,
  };

  it('counts active and past_due only', () => {
    for (const status of Object.values(SubscriptionStatus)) {
      const counted = status === 'active' || status === 'past_due';
      expect([status, mrrStateOf({ ...base, status })]).toEqual([status, { counted, mrr: counted ? 49900 : 0 }]);
    }
  });

  it('takes a forever coupon off, a repeating or once coupon not', () => {
    const coupon = { couponId: 'c', discountPercentBps: 2000 };
    expect(mrrAmountOf({ ...base, ...coupon, discountCycles: null })).toBe(49900 - 9980); // 20% of 49900 = 9980
    expect(mrrAmountOf({ ...base, ...coupon, discountCycles: 3 })).toBe(49900);
    expect(mrrAmountOf({ ...base, ...coupon, discountCycles: 1 })).toBe(49900);
    expect(mrrAmountOf({ ...base, couponId: 'c', discountAmountOff: 60000 })).toBe(0); // never below 0
    expect(
      mrrStateOf({
        ...base,
        amount: 132000,
        billingFrequency: 'yearly' as any,
        couponId: 'c',
        discountAmountOff: 12000,
      }),
    ).toEqual({
      counted: true,
      mrr: 10000, // (132000 - 12000) / 12
    });
  });
});

describe('the movement of a change', () => {
  const facts = (f: Partial<LedgerFacts> = {}): LedgerFacts => ({
    subscription: { counted: false, mrr: 0 },
    subscriptionEverCounted: false,
    otherCounted: 0,
    customerEverCounted: false,
    ...f,
  });
  const on = (mrr: number) => ({ counted: true, mrr });
  const off = { counted: false, mrr: 0 };

  it.each([
    [
      "a customer's first",
      facts(),
      on(100),
      { kind: 'new', amount: 100, mrrBefore: 0, mrrAfter: 100, subscriptionDelta: 1, customerDelta: 1 },
    ],
    [
      'a second subscription',
      facts({ otherCounted: 1, customerEverCounted: true }),
      on(50),
      { kind: 'expansion', amount: 50, subscriptionDelta: 1, customerDelta: 0 },
    ],
    [
      'a resume',
      facts({ subscriptionEverCounted: true, customerEverCounted: true }),
      on(100),
      { kind: 'reactivation', amount: 100, subscriptionDelta: 1, customerDelta: 1 },
    ],
    [
      'a resume beside another',
      facts({ subscriptionEverCounted: true, customerEverCounted: true, otherCounted: 1 }),
      on(100),
      { kind: 'reactivation', subscriptionDelta: 1, customerDelta: 0 },
    ],
    [
      'back after churn, a new subscription',
      facts({ customerEverCounted: true }),
      on(70),
      { kind: 'reactivation', amount: 70, customerDelta: 1 },
    ],
    [
      'stopped, the last',
      facts({ subscription: on(100), subscriptionEverCounted: true, customerEverCounted: true }),
      off,
      { kind: 'churn', amount: -100, mrrBefore: 100, mrrAfter: 0, subscriptionDelta: -1, customerDelta: -1 },
    ],
    [
      'stopped, one of two',
      facts({ subscription: on(100), otherCounted: 1 }),
      off,
      { kind: 'churn', amount: -100, subscriptionDelta: -1, customerDelta: 0 },
    ],
    [
      'upgrade',
      facts({ subscription: on(100) }),
      on(250),
      { kind: 'expansion', amount: 150, mrrBefore: 100, mrrAfter: 250, subscriptionDelta: 0, customerDelta: 0 },
    ],
    [
      'downgrade',
      facts({ subscription: on(250) }),
      on(200),
      { kind: 'contraction', amount: -50, subscriptionDelta: 0, customerDelta: 0 },
    ],
  ] as const)('%s', (_name, f, after, expected) => {
    expect(decideMovement(f, after)).toMatchObject(expected);
  });

  it('writes nothing when the ledger already agrees', () => {
    expect(decideMovement(facts({ subscription: on(100) }), on(100))).toBeNull();
    expect(decideMovement(facts(), off)).toBeNull();
  });
});

interface Row {
  kind: string;
  amount: number;
  mrr_before: number;
  mrr_after: number;
  subscription_delta: number;
  customer_delta: number;
  cause: string;
  currency: string;
  reporting_currency: string;
  fx_rate: string | null;
  subscription_id: string;
  occurred_at: Date;
}

async function ledger(m: TestMerchant, subscriptionIds?: string[]): Promise<Row[]> {
  const rows = await h.app.orm.em.getConnection().execute<Row[]>(
    `select kind, amount::int as amount, mrr_before::int as mrr_before, mrr_after::int as mrr_after, subscription_delta, customer_delta, cause,
       currency, reporting_currency, fx_rate::text as fx_rate, subscription_id, occurred_at
     from mrr_movements where merchant_id = ? and mode = 'test' order by occurred_at, id`,
    [m.id],
  );
  return subscriptionIds ? rows.filter((r) => subscriptionIds.includes(r.subscription_id)) : rows;
}

describe("rows a subscription's life writes", () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, 'stripe');
  });

  it('activation, renewals (nothing), upgrade, pause, resume, cancel: one row each, at merchant time, with its cause', async () => {
    const basic = await recurringPlan(m.test, {}, { amount: 10000 });
    const pro = await ok(
      m.test.post(`/products/${basic.product.id}/plans`, { name: 'Pro', billing_frequency: 'monthly' }),
      201,
    );
    await ok(m.test.post(`/plans/${pro.id}/prices`, { currency: 'INR', amount: 25000, is_default: true }), 201);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, basic.plan.id));
    expect(sub.status).toBe('active');
    // Two renewals: billed, but MRR does not move.
    await h.clock.advance(m, new Date(new Date(sub.current_period_end).getTime() + 1000));
    const renewed = await ok(m.test.get(`/subscriptions/${sub.id}`));
    await h.clock.advance(m, new Date(new Date(renewed.current_period_end).getTime() + 1000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).cycles_completed).toBe(3);
    expect(await ledger(m, [sub.id])).toHaveLength(1);

    await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: pro.id }));
    await ok(m.test.post(`/subscriptions/${sub.id}/pause`));
    const pausedAt = await h.clock.now(m);
    await h.clock.advance(m, 3600);
    await ok(m.test.post(`/subscriptions/${sub.id}/resume`));
    await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: false }));

    const rows = await ledger(m, [sub.id]);
    expect(
      rows.map((r) => [r.kind, r.amount, r.mrr_before, r.mrr_after, r.subscription_delta, r.customer_delta, r.cause]),
    ).toEqual([
      ['new', 10000, 0, 10000, 1, 1, 'subscription.activated'],
      ['expansion', 15000, 10000, 25000, 0, 0, 'subscription.plan_changed'],
      ['churn', -25000, 25000, 0, -1, -1, 'subscription.paused'],
      ['reactivation', 25000, 0, 25000, 1, 1, 'subscription.resumed'],
      ['churn', -25000, 25000, 0, -1, -1, 'subscription.cancelled'],
    ]);
    for (const r of rows) expect([r.currency, r.reporting_currency, r.fx_rate]).toEqual(['INR', 'INR', '1']);
    // Merchant time: the pause happened at the test clock's time, the resume an hour (of test clock) later.
    const [, , pause, resume] = rows;
    expect(Math.abs(new Date(pause.occurred_at).getTime() - pausedAt.getTime())).toBeLessThan(5_000);
    expect(new Date(resume.occurred_at).getTime() - new Date(pause.occurred_at).getTime()).toBeGreaterThanOrEqual(
      3600_000,
    );
  });

  it('two subscriptions of one customer activating at the same moment: one new, one expansion', async () => {
    const { plan } = await recurringPlan(m.test, {}, { amount: 7000 });
    const first = await createSubscription(m.test, plan.id);
    const second = await createSubscription(m.test, plan.id, { customer_id: first.customer_id });
    const answers = await Promise.all([submitCheckout(first.checkout_url), submitCheckout(second.checkout_url)]);
    expect(answers.map((a) => a.status)).toEqual([303, 303]);
    const rows = await ledger(m, [first.id, second.id]);
    expect(rows.map((r) => r.kind).sort()).toEqual(['expansion', 'new']);
    expect(rows.map((r) => r.customer_delta).sort()).toEqual([0, 1]);
  });

  it('a trial counts from the charge at its end; a failed checkout writes nothing', async () => {
    const { plan } = await recurringPlan(m.test, { trial_period_days: 7 }, { amount: 9000 });
    const sub = await createSubscription(m.test, plan.id);
    const { subscription } = await authorise(m.test, sub);
    expect(subscription.status).toBe('trialing');
    expect(await ledger(m, [sub.id])).toEqual([]);
    await h.clock.advance(m, new Date(new Date(subscription.trial_end).getTime() + 1000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    expect((await ledger(m, [sub.id])).map((r) => [r.kind, r.amount])).toEqual([['new', 9000]]);

    const declined = await createSubscription(m.test, plan.id);
    await submitCheckout(declined.checkout_url, { outcome: 'success', card_number: '4000000000000002' });
    expect((await ok(m.test.get(`/subscriptions/${declined.id}`))).status).toBe('cancelled');
    expect(await ledger(m, [declined.id])).toEqual([]);
  });
});

describe('the daily rollup (mrr_movement_days)', () => {
  /** The ledger grouped by UTC day (D holding (D, D + 1 day]) against the rollup, for every tenant: equal when in sync. */
  const DIFF = `
    with l as (
      select merchant_id, mode, currency, date_trunc('day', (occurred_at - interval '1 microsecond') at time zone 'UTC') as day,
        sum(amount) as net, sum(subscription_delta) as subscriptions, sum(customer_delta) as customers,
        coalesce(sum(amount) filter (where kind = 'new'), 0) as new_mrr, coalesce(sum(amount) filter (where kind = 'churn'), 0) as churn_mrr,
        count(*) filter (where kind = 'churn') as churned
      from mrr_movements group by 1, 2, 3, 4
    ),
    r as (
      select merchant_id, mode, currency, day, sum(net) as net, sum(subscriptions) as subscriptions, sum(customers) as customers,
        sum(new_mrr) as new_mrr, sum(churn_mrr) as churn_mrr, sum(churned) as churned
      from mrr_movement_days group by 1, 2, 3, 4
    ),
    -- A day whose rows were all deleted stays in the rollup as zeros.
    lz as (select * from l where (net, subscriptions, customers, new_mrr, churn_mrr, churned) <> (0, 0, 0, 0, 0, 0)),
    rz as (select * from r where (net, subscriptions, customers, new_mrr, churn_mrr, churned) <> (0, 0, 0, 0, 0, 0))
    select count(*)::int as n from ((table lz except table rz) union all (table rz except table lz)) x`;

  it('is kept equal to the ledger by inserts, updates and deletes', async () => {
    const knex = (h.app.orm.em.getConnection() as unknown as { getKnex(): any }).getKnex();
    const diff = async (q: any) => (await q.raw(DIFF)).rows[0].n;
    expect(await diff(knex)).toBe(0);
    await knex
      .transaction(async (tx: any) => {
        // A bulk insert (one statement, as a load would): days with a midnight row, several kinds and subscriptions.
        await tx.raw(`insert into mrr_movements (id, merchant_id, mode, subscription_id, customer_id, currency, kind, amount, mrr_before, mrr_after,
            subscription_delta, customer_delta, reporting_currency, fx_rate, cause, occurred_at)
          select gen_random_uuid(), '00000000-0000-7000-8000-000000000001', 'live', gen_random_uuid(), gen_random_uuid(), 'INR',
            (array['new', 'expansion', 'contraction', 'churn', 'reactivation'])[1 + i % 5], (i % 5 - 2) * 100, 0, 0, (i % 3) - 1, (i % 3) - 1,
            'INR', 1, 'test', timestamptz '2030-03-01 00:00:00+00' + (i % 7) * interval '7 hours'
          from generate_series(1, 40) i`);
        expect(Number((await tx.raw('select count(*) as n from mrr_movement_days')).rows[0].n)).toBeGreaterThan(1);
        expect(await diff(tx)).toBe(0);
        await tx.raw(
          `update mrr_movements set amount = amount + 1, occurred_at = occurred_at - interval '3 days' where id in (select id from mrr_movements order by id limit 5)`,
        );
        expect(await diff(tx)).toBe(0);
        await tx.raw(`delete from mrr_movements where id in (select id from mrr_movements order by id desc limit 7)`);
        expect(await diff(tx)).toBe(0);
        throw new Error('rollback');
      })
      .catch((e: Error) => expect(e.message).toBe('rollback'));
    expect(await diff(knex)).toBe(0);
  });
});

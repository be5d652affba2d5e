import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  after,
  authorise,
  createSubscription,
  events,
  invoicesOf,
  ok,
  outboxTypesOf,
  recurringPlan,
  trail,
} from './helpers';

/**
 * The dunning timeline (docs/subscriptions.md), day by day on the test clock, through both gateways' sandboxes: the
 * failed renewal (active -> past_due, webhook, retry_attempt 0), retries 1, 3 and 5 days later (past_due -> past_due,
 * retry_attempt 1..3), halted after the last (open invoice uncollectible); a hard decline halts at once; a successful retry recovers.
 */

const h = useHarness();
const DAY = 86_400;

const FAILED = (attempt: number, reason = 'insufficient_funds') => ({
  from_state: attempt === 0 ? 'active' : 'past_due',
  to_state: 'past_due',
  event_type: 'subscription.payment_failed',
  triggered_by: 'webhook',
  metadata_json: { retry_attempt: attempt, gateway_decline_reason: reason },
});

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  async function merchant(): Promise<TestMerchant> {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
    return m;
  }

  /** An active subscription paid with `form`'s instrument; the clock is then moved to 1 s after its first period ends. */
  async function failedRenewal(m: TestMerchant, form: Record<string, string>) {
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      ...form,
    });
    expect(sub.status).toBe('active');
    await h.clock.advance(m, after(sub.current_period_end));
    return sub;
  }

  const get = (m: TestMerchant, id: string) => ok(m.test.get(`/subscriptions/${id}`));
  /** Events after creation and activation. */
  const dunningEvents = async (m: TestMerchant, id: string) => (await events(m.test, id)).slice(2);

  it.each([
    ['card 4000000000000341', { card_number: '4000000000000341' }],
    ['UPI failure@sandbox', { method: 'upi', vpa: 'failure@sandbox', bank: 'HDFC' }],
    ['emandate failure@sandbox', { method: 'emandate', vpa: 'failure@sandbox', bank: 'SBIN' }],
  ])(
    '%s: past_due at the renewal, retries on days 1, 3 and 5 and nothing between, then halted',
    async (_name, form) => {
      const m = await merchant();
      const sub = await failedRenewal(m, form);
      const t0 = new Date(sub.current_period_end).getTime();

      const pd = await get(m, sub.id);
      expect(pd).toMatchObject({ status: 'past_due', retry_attempt: 0, cycles_completed: 2 });
      expect(await dunningEvents(m, sub.id)).toMatchObject([FAILED(0)]);
      const open = await invoicesOf(m.test, sub.id);
      expect(open.map((i) => [i.billing_reason, i.status])).toEqual([
        ['subscription_create', 'paid'],
        ['subscription_cycle', 'open'],
      ]);
      expect(open[1].amount_due).toBe(open[1].total);

      // Day by day: what the trail holds at the end of each day after the failure.
      const expected: Record<number, number[]> = { 1: [0, 1], 2: [0, 1], 3: [0, 1, 2], 4: [0, 1, 2] };
      for (let day = 1; day <= 4; day++) {
        // Just before the day's retry time, nothing new yet.
        await h.clock.advance(m, new Date(t0 + day * DAY * 1000 - 60_000));
        expect((await dunningEvents(m, sub.id)).length).toBe(expected[day - 1]?.length ?? 1);
        await h.clock.advance(m, new Date(t0 + day * DAY * 1000 + 1000));
        expect(await dunningEvents(m, sub.id)).toMatchObject(expected[day].map((a) => FAILED(a)));
        expect(await get(m, sub.id)).toMatchObject({ status: 'past_due', retry_attempt: expected[day].at(-1) });
      }
      await h.clock.advance(m, new Date(t0 + 5 * DAY * 1000 - 60_000));
      expect((await get(m, sub.id)).status).toBe('past_due');
      await h.clock.advance(m, new Date(t0 + 5 * DAY * 1000 + 1000));

      const halted = await get(m, sub.id);
      expect(halted).toMatchObject({ status: 'halted', retry_attempt: 3 });
      expect(await dunningEvents(m, sub.id)).toMatchObject([
        FAILED(0),
        FAILED(1),
        FAILED(2),
        FAILED(3),
        { from_state: 'past_due', to_state: 'halted', event_type: 'subscription.halted', triggered_by: 'scheduler' },
      ]);

      const inv = await invoicesOf(m.test, sub.id);
      expect(inv.map((i) => i.status)).toEqual(['paid', 'uncollectible']);
      const types = (await outboxTypesOf(h.app, m.id, sub.id)).filter((t) => t.startsWith('subscription.'));
      expect(types).toEqual([
        'subscription.created',
        'subscription.activated',
        'subscription.payment_failed',
        'subscription.payment_failed',
        'subscription.payment_failed',
        'subscription.payment_failed',
        'subscription.halted',
      ]);

      // Halted: nothing more is tried or charged, not even at the next period's end.
      await h.clock.advance(m, 40 * DAY);
      expect((await events(m.test, sub.id)).length).toBe(7);
      expect(await invoicesOf(m.test, sub.id)).toHaveLength(2);
      expect((await get(m, sub.id)).status).toBe('halted');
    },
  );

  it('the history is in merchant time: each event is stamped with the test clock at its transition, as its webhook is', async () => {
    const m = await merchant();
    const sub = await failedRenewal(m, { card_number: '4000000000000341' });
    const t0 = new Date(sub.current_period_end).getTime();
    await h.clock.advance(m, new Date(t0 + 6 * DAY * 1000));
    const trailOf = await dunningEvents(m, sub.id);
    expect(trailOf.map((e) => e.event_type)).toEqual([
      ...Array(4).fill('subscription.payment_failed'),
      'subscription.halted',
    ]);
    // Days after the renewal at which each happened (test time), within a minute of the due instant.
    const days = trailOf.map((e) => (new Date(e.created_at).getTime() - t0) / (DAY * 1000));
    [0, 1, 3, 5, 5].forEach((day, i) => expect(Math.abs(days[i] - day)).toBeLessThan(60 / DAY));
    const all = await events(m.test, sub.id);
    expect(all.map((e) => e.created_at)).toEqual([...all.map((e) => e.created_at)].sort());
    // The outbox envelopes of the same moves carry the same instants.
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ type: string; payload: any }[]>(
        `select type, payload from outbox_events where merchant_id = ? and payload->'data'->'object'->>'id' = ? and type in ('subscription.payment_failed', 'subscription.halted') order by id`,
        [m.id, sub.id],
      );
    expect(rows.map((r) => r.payload.created_at)).toEqual(trailOf.map((e) => e.created_at));
  });

  it('hard decline (card 4000000000009979, stolen_card) halts at once, by webhook; the invoice is uncollectible', async () => {
    const m = await merchant();
    const sub = await failedRenewal(m, { card_number: '4000000000009979' });
    expect(await get(m, sub.id)).toMatchObject({ status: 'halted' });
    expect(await dunningEvents(m, sub.id)).toMatchObject([
      FAILED(0, 'stolen_card'),
      {
        from_state: 'past_due',
        to_state: 'halted',
        event_type: 'subscription.halted',
        triggered_by: 'webhook',
        metadata_json: { gateway_decline_reason: 'stolen_card' },
      },
    ]);
    expect((await invoicesOf(m.test, sub.id)).map((i) => i.status)).toEqual(['paid', 'uncollectible']);
    await h.clock.advance(m, 10 * DAY);
    expect((await events(m.test, sub.id)).length).toBe(4);
  });

  it('card 4000000000000119 recovers on the first retry: past_due -> active, invoice paid, subscription.payment_succeeded', async () => {
    const m = await merchant();
    const sub = await failedRenewal(m, { card_number: '4000000000000119' });
    expect(await dunningEvents(m, sub.id)).toMatchObject([FAILED(0, 'processing_error')]);
    await h.clock.advance(m, DAY);
    const back = await get(m, sub.id);
    expect(back).toMatchObject({
      status: 'active',
      retry_attempt: 0,
      cycles_completed: 2,
      current_period_start: sub.current_period_end,
    });
    expect((await dunningEvents(m, sub.id)).slice(1)).toMatchObject([
      {
        from_state: 'past_due',
        to_state: 'active',
        event_type: 'subscription.payment_succeeded',
        triggered_by: 'webhook',
      },
    ]);
    const inv = await invoicesOf(m.test, sub.id);
    expect(inv.map((i) => [i.billing_reason, i.status])).toEqual([
      ['subscription_create', 'paid'],
      ['subscription_cycle', 'paid'],
    ]);
    expect(inv[1]).toMatchObject({ amount_due: 0, amount_paid: inv[1].total });
    const types = await outboxTypesOf(h.app, m.id, sub.id);
    expect(types.filter((t) => t.startsWith('subscription.'))).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.payment_failed',
      'subscription.payment_succeeded',
    ]);
    expect(types.filter((t) => t === 'invoice.paid')).toHaveLength(2);
    // Later renewals succeed: a normal cycle follows.
    await h.clock.advance(m, after(back.current_period_end));
    expect(await get(m, sub.id)).toMatchObject({ status: 'active', cycles_completed: 3 });
    expect(await trail(m.test, sub.id)).toHaveLength(4);
  });

  it('the charge at trial end dunning like a renewal: 4000000000000119 fails it, the first retry pays the first invoice', async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test, { trial_period_days: 3 });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: '4000000000000119',
    });
    await h.clock.advance(m, after(sub.trial_end));
    expect(await get(m, sub.id)).toMatchObject({
      status: 'past_due',
      cycles_completed: 1,
      current_period_start: sub.trial_end,
    });
    expect((await invoicesOf(m.test, sub.id)).map((i) => [i.billing_reason, i.status])).toEqual([
      ['subscription_create', 'open'],
    ]);
    await h.clock.advance(m, new Date(new Date(sub.trial_end).getTime() + DAY * 1000 - 60_000));
    expect((await get(m, sub.id)).status).toBe('past_due');
    await h.clock.advance(m, after(sub.trial_end, DAY * 1000 + 1000));
    expect(await get(m, sub.id)).toMatchObject({
      status: 'active',
      cycles_completed: 1,
      current_period_start: sub.trial_end,
    });
    expect((await events(m.test, sub.id)).slice(2)).toMatchObject([
      {
        from_state: 'trialing',
        to_state: 'past_due',
        event_type: 'subscription.payment_failed',
        triggered_by: 'webhook',
        metadata_json: { retry_attempt: 0, gateway_decline_reason: 'processing_error' },
      },
      {
        from_state: 'past_due',
        to_state: 'active',
        event_type: 'subscription.payment_succeeded',
        triggered_by: 'webhook',
      },
    ]);
    expect((await invoicesOf(m.test, sub.id)).map((i) => [i.billing_reason, i.status])).toEqual([
      ['subscription_create', 'paid'],
    ]);
  });

  it("the merchant's max_retries (POST /merchant/billing-settings): 1 retry, then halted; 0: halted at the failure", async () => {
    const m = await merchant();
    const set = await ok(m.test.post('/merchant/billing-settings', { max_retries: 1 }));
    expect(set).toMatchObject({ max_retries: 1 });
    const bad = await m.test.post('/merchant/billing-settings', { max_retries: 11 });
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'parameter_invalid', 'max_retries']);

    const sub = await failedRenewal(m, { card_number: '4000000000000341' });
    expect((await get(m, sub.id)).status).toBe('past_due');
    await h.clock.advance(m, DAY);
    expect(await get(m, sub.id)).toMatchObject({ status: 'halted', retry_attempt: 1 });
    expect(await dunningEvents(m, sub.id)).toMatchObject([
      FAILED(0),
      FAILED(1),
      { from_state: 'past_due', to_state: 'halted', triggered_by: 'scheduler' },
    ]);

    await ok(m.test.post('/merchant/billing-settings', { max_retries: 0 }));
    const sub2 = await failedRenewal(m, { card_number: '4000000000000341' });
    expect(await get(m, sub2.id)).toMatchObject({ status: 'halted', retry_attempt: 0 });
    expect(await dunningEvents(m, sub2.id)).toMatchObject([
      FAILED(0),
      { from_state: 'past_due', to_state: 'halted', triggered_by: 'scheduler' },
    ]);
    expect((await invoicesOf(m.test, sub2.id)).map((i) => i.status)).toEqual(['paid', 'uncollectible']);
  });
});

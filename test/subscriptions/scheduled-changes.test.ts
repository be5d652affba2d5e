import { sleep, TestMerchant, useHarness } from '../harness';
import { useSandboxFaults } from '../harness/faults';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  events,
  gatewayPriceAmountsOf,
  invoicesOf,
  ok,
  outboxTypesOf,
  recurringPlan,
  trail,
} from './helpers';

/**
 * Scheduled changes (docs/subscriptions.md "Scheduled changes") through both gateways and both transports: change-plan
 * with effective period_end changes nothing now and the gateway's own renewal at the period end bills the new plan;
 * removing it (or a cancellation at period end) before then leaves the gateway billing as before; the refusals change
 * nothing; concurrent commands and a removal racing the renewal end in one consistent outcome.
 */

const h = useHarness();
jest.setTimeout(120_000);
const DAY = 86_400_000;

const SUB_FIELDS = `id status planId priceId amount cancelAtPeriodEnd currentPeriodEnd scheduledChange { planId priceId effectiveAt }`;

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let other: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    other = await h.merchant();
    await connect(m.test, provider);
    await connect(other.test, provider);
  });

  /** An active subscription on a 49900 monthly plan, and a 99900 monthly plan and a 19900 monthly plan to move to. */
  async function active() {
    const base = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, base.plan.id));
    expect(subscription.status).toBe('active');
    const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99900 });
    const down = await recurringPlan(m.test, { name: 'Monthly Lite' }, { amount: 19900 });
    return { base, subscription, up, down };
  }

  const schedule = (id: string, planId: string) =>
    m.test.post(`/subscriptions/${id}/change-plan`, { plan_id: planId, effective: 'period_end' });

  /** Moves the test clock just past the subscription's period end: the gateway renews it and reports the charge. */
  const renew = (sub: any) => h.clock.advance(m, after(sub.current_period_end, 2000));

  const lastInvoice = async (id: string) =>
    (await invoicesOf(m.test, id))
      .filter((i) => i.type === 'invoice' && i.billing_reason === 'subscription_cycle')
      .at(-1);

  it('REST: period_end changes nothing now; the renewal at the period end bills the new plan', async () => {
    const { subscription, up, base } = await active();
    const invoicesBefore = await invoicesOf(m.test, subscription.id);
    const r = await ok(schedule(subscription.id, up.plan.id));
    expect(r.proration).toBeNull();
    expect(r.invoice).toBeNull();
    expect(r.credit_note).toBeNull();
    expect(r.subscription).toMatchObject({
      plan_id: base.plan.id,
      price_id: base.price.id,
      amount: 49900,
      status: 'active',
      current_period_end: subscription.current_period_end,
      scheduled_change: {
        plan_id: up.plan.id,
        price_id: up.price.id,
        effective_at: subscription.current_period_end,
      },
    });
    expect(await ok(m.test.get(`/subscriptions/${subscription.id}`))).toMatchObject({
      scheduled_change: { plan_id: up.plan.id, effective_at: subscription.current_period_end },
    });
    expect(await invoicesOf(m.test, subscription.id)).toEqual(invoicesBefore);
    expect((await trail(m.test, subscription.id)).at(-1)).toBe('active>active:subscription.plan_change_scheduled:api');

    await renew(subscription);
    const renewed = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(renewed).toMatchObject({
      status: 'active',
      plan_id: up.plan.id,
      price_id: up.price.id,
      amount: 99900,
      scheduled_change: null,
      current_period_start: subscription.current_period_end,
    });
    const invoice = await lastInvoice(subscription.id);
    expect(invoice).toMatchObject({
      status: 'paid',
      total: 99900,
      amount_paid: 99900,
      period_start: subscription.current_period_end,
    });
    expect(invoice.line_items[0]).toMatchObject({ amount: 99900, unit_amount: 99900 });
    const t = await trail(m.test, subscription.id);
    expect(t.slice(-2)).toEqual([
      'active>active:subscription.plan_change_scheduled:api',
      'active>active:subscription.plan_changed:webhook',
    ]);
    const changed = (await events(m.test, subscription.id)).at(-1);
    expect(changed.metadata_json).toMatchObject({ to_plan_id: up.plan.id, effective: 'period_end' });
    const types = await outboxTypesOf(h.app, m.id, subscription.id);
    expect(types).toEqual(expect.arrayContaining(['subscription.plan_change_scheduled', 'subscription.plan_changed']));
    // The next renewal goes on billing the new plan.
    await renew(renewed);
    expect(await lastInvoice(subscription.id)).toMatchObject({
      total: 99900,
      period_start: renewed.current_period_end,
    });
  });

  it('GraphQL: removing the scheduled change before the period end leaves the gateway billing the old plan', async () => {
    const { subscription, down } = await active();
    const scheduled = await m.test.gql(
      `mutation($id: ID!, $input: ChangePlanInput!) { changeSubscriptionPlan(id: $id, input: $input) { proration { netAmount } subscription { ${SUB_FIELDS} } } }`,
      { id: subscription.id, input: { planId: down.plan.id, effective: 'PERIOD_END' } },
    );
    expect(scheduled.errors).toBeUndefined();
    expect(scheduled.data.changeSubscriptionPlan.proration).toBeNull();
    expect(scheduled.data.changeSubscriptionPlan.subscription.scheduledChange).toEqual({
      planId: down.plan.id,
      priceId: down.price.id,
      effectiveAt: subscription.current_period_end,
    });
    const removed = await m.test.gql(`mutation($id: ID!) { removeScheduledChange(id: $id) { ${SUB_FIELDS} } }`, {
      id: subscription.id,
    });
    expect(removed.errors).toBeUndefined();
    expect(removed.data.removeScheduledChange).toMatchObject({ scheduledChange: null, amount: 49900 });
    expect((await trail(m.test, subscription.id)).slice(-2)).toEqual([
      'active>active:subscription.plan_change_scheduled:api',
      'active>active:subscription.scheduled_change_removed:api',
    ]);
    expect(await outboxTypesOf(h.app, m.id, subscription.id)).toContain('subscription.scheduled_change_removed');
    // Nothing is scheduled any more: a second removal is 409.
    const again = await m.test.gql(`mutation($id: ID!) { removeScheduledChange(id: $id) { id } }`, {
      id: subscription.id,
    });
    expect(again.errors?.[0]?.extensions?.code).toBe('invalid_state_transition');

    await renew(subscription);
    const renewed = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(renewed).toMatchObject({ plan_id: subscription.plan_id, amount: 49900, scheduled_change: null });
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 49900, amount_paid: 49900 });
    expect((await trail(m.test, subscription.id)).some((e) => e.includes('plan_changed'))).toBe(false);
  });

  it('REST: removing a scheduled cancellation (and GraphQL); the subscription renews', async () => {
    const { subscription } = await active();
    const none = await m.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`);
    expect(none.status).toBe(409);
    expect(none.body.error.code).toBe('invalid_state_transition');
    await ok(m.test.post(`/subscriptions/${subscription.id}/cancel?cancel_at_period_end=true`));
    const kept = await ok(m.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`));
    expect(kept).toMatchObject({ status: 'active', cancel_at_period_end: false });
    const ev = (await events(m.test, subscription.id)).at(-1);
    expect(ev).toMatchObject({
      from_state: 'active',
      to_state: 'active',
      event_type: 'subscription.cancellation_removed',
      triggered_by: 'api',
    });
    expect(await outboxTypesOf(h.app, m.id, subscription.id)).toContain('subscription.cancellation_removed');

    // GraphQL, once more.
    await ok(m.test.post(`/subscriptions/${subscription.id}/cancel?cancel_at_period_end=true`));
    const g = await m.test.gql(`mutation($id: ID!) { removeScheduledCancellation(id: $id) { ${SUB_FIELDS} } }`, {
      id: subscription.id,
    });
    expect(g.errors).toBeUndefined();
    expect(g.data.removeScheduledCancellation.cancelAtPeriodEnd).toBe(false);

    await renew(subscription);
    const renewed = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(renewed).toMatchObject({ status: 'active', current_period_start: subscription.current_period_end });
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 49900, status: 'paid' });
  });

  it('the refusals: 409 (or the existing code) and nothing changes', async () => {
    const { subscription, up, down, base } = await active();
    const unchanged = async (
      id: string,
      fn: () => Promise<{ status: number; body: any }>,
      status = 409,
      code = 'invalid_state_transition',
    ) => {
      const before = await ok(m.test.get(`/subscriptions/${id}`));
      const trailBefore = await events(m.test, id);
      const r = await fn();
      expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status, code });
      expect(await ok(m.test.get(`/subscriptions/${id}`))).toEqual(before);
      expect(await events(m.test, id)).toEqual(trailBefore);
    };
    // Nothing scheduled to remove.
    await unchanged(subscription.id, () => m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`));
    // The same plan and price again.
    await unchanged(subscription.id, () => schedule(subscription.id, base.plan.id), 400, 'plan_unchanged');
    // A scheduled change on a subscription cancelling at period end.
    await ok(m.test.post(`/subscriptions/${subscription.id}/cancel?cancel_at_period_end=true`));
    await unchanged(subscription.id, () => schedule(subscription.id, up.plan.id));
    await ok(m.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`));
    // Pausing while a change is scheduled.
    await ok(schedule(subscription.id, up.plan.id));
    await unchanged(subscription.id, () => m.test.post(`/subscriptions/${subscription.id}/pause`));
    // A second scheduled change replaces the first.
    const replaced = await ok(schedule(subscription.id, down.plan.id));
    expect(replaced.subscription.scheduled_change).toMatchObject({ plan_id: down.plan.id });
    const ev = (await events(m.test, subscription.id)).at(-1);
    expect(ev.metadata_json).toMatchObject({ to_plan_id: down.plan.id, replaced_plan_id: up.plan.id });
    // Cancel at period end drops the scheduled change.
    const cancelling = await ok(m.test.post(`/subscriptions/${subscription.id}/cancel?cancel_at_period_end=true`));
    expect(cancelling).toMatchObject({ cancel_at_period_end: true, scheduled_change: null });
    expect((await trail(m.test, subscription.id)).at(-1)).toBe(
      'active>active:subscription.scheduled_change_removed:api',
    );
    await ok(m.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`));
    // An immediate change clears a scheduled one.
    await ok(schedule(subscription.id, down.plan.id));
    const now = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    expect(now.subscription).toMatchObject({ plan_id: up.plan.id, scheduled_change: null });
    expect((await trail(m.test, subscription.id)).slice(-2)).toEqual([
      'active>active:subscription.scheduled_change_removed:api',
      'active>active:subscription.plan_changed:api',
    ]);
    // On a paused subscription: the table refuses it.
    await ok(m.test.post(`/subscriptions/${subscription.id}/pause`));
    await unchanged(subscription.id, () => schedule(subscription.id, down.plan.id));
    await unchanged(subscription.id, () => m.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`));
    await ok(m.test.post(`/subscriptions/${subscription.id}/resume`));
    // The renewal bills the plan of the immediate change.
    await renew(subscription);
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 99900 });
  });

  it("tenancy: another merchant's subscription is 404 for every command", async () => {
    const { subscription, up } = await active();
    await ok(schedule(subscription.id, up.plan.id));
    for (const r of [
      await other.test.post(`/subscriptions/${subscription.id}/change-plan`, {
        plan_id: up.plan.id,
        effective: 'period_end',
      }),
      await other.test.delete(`/subscriptions/${subscription.id}/scheduled-change`),
      await other.test.delete(`/subscriptions/${subscription.id}/scheduled-cancellation`),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe('resource_not_found');
    }
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).scheduled_change).toMatchObject({
      plan_id: up.plan.id,
    });
  });

  it('races: concurrent schedule and remove calls leave one consistent outcome', async () => {
    const { subscription, up, down } = await active();
    await ok(schedule(subscription.id, up.plan.id));
    const answers = await Promise.all([
      m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`),
      schedule(subscription.id, down.plan.id),
      m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`),
    ]);
    for (const a of answers) expect([200, 409]).toContain(a.status);
    expect(answers.some((a) => a.status === 200)).toBe(true);
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    // What the subscription shows is what the renewal bills.
    const expected = sub.scheduled_change ? (sub.scheduled_change.plan_id === up.plan.id ? 99900 : 19900) : 49900;
    await renew(subscription);
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: expected, amount_paid: expected });
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).amount).toBe(expected);
  });

  it('races: a removal racing the renewal on the test clock ends billed as the subscription says', async () => {
    const { subscription, up } = await active();
    await ok(schedule(subscription.id, up.plan.id));
    const [removal] = await Promise.all([
      m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`),
      m.test.post('/test-clock/advance', { to: after(subscription.current_period_end, 2000).toISOString() }),
    ]);
    expect([200, 409]).toContain(removal.status);
    // An advance whose renewal event had to wait is resumed by the next one.
    await h.clock.advance(m, 1);
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    const invoice = await lastInvoice(subscription.id);
    expect(sub.scheduled_change).toBeNull();
    expect(invoice.period_start).toBe(subscription.current_period_end);
    if (removal.status === 200) {
      expect(sub).toMatchObject({ plan_id: subscription.plan_id, amount: 49900 });
      expect(invoice.total).toBe(49900);
    } else {
      expect(sub).toMatchObject({ plan_id: up.plan.id, amount: 99900 });
      expect(invoice.total).toBe(99900);
    }
  });

  /** The sandbox routes a removal and a scheduling of a change end with, per gateway. */
  const REMOVE_ROUTE = {
    stripe: { method: 'POST', path: '/v1/subscription_schedules/*/release' },
    razorpay: { method: 'POST', path: '/razorpay/v1/subscriptions/*/cancel_scheduled_changes' },
  }[provider];
  const SCHEDULE_ROUTE = {
    stripe: { method: 'POST', path: '/v1/subscription_schedules/*' },
    razorpay: { method: 'PATCH', path: '/razorpay/v1/subscriptions/*' },
  }[provider];

  /** The gateway does the next matching call at once and answers it `ms` later (the sandbox's `slow` fault). */
  const { fault } = useSandboxFaults(h);
  const slowAnswer = (route: { method: string; path: string }, ms: number) => fault({ ...route, kind: 'slow', ms });

  it('races: the renewal charged while a removal is at the gateway waits for it, and bills the old plan', async () => {
    const { subscription, up } = await active();
    await ok(schedule(subscription.id, up.plan.id));
    await slowAnswer(REMOVE_ROUTE, 2000);
    const removal = m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`);
    await sleep(600); // the gateway has dropped the change; its answer is still out
    // The gateway renews at the old price; its event cannot be taken until the removal has written its outcome.
    await m.test.post('/test-clock/advance', { to: after(subscription.current_period_end, 2000).toISOString() });
    const removed = await removal;
    expect(removed.status).toBe(200);
    expect(removed.body.scheduled_change).toBeNull();
    await h.clock.advance(m, 1); // delivers what the last advance left
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(sub).toMatchObject({ plan_id: subscription.plan_id, amount: 49900, scheduled_change: null });
    expect(sub.current_period_start).toBe(subscription.current_period_end);
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 49900, amount_paid: 49900 });
    expect((await trail(m.test, subscription.id)).some((e) => e.includes('plan_changed'))).toBe(false);
  });

  it('races: the renewal charged while a scheduling is at the gateway waits for it, and bills the new plan', async () => {
    const { subscription, up } = await active();
    await slowAnswer(SCHEDULE_ROUTE, 2000);
    const scheduling = schedule(subscription.id, up.plan.id);
    await sleep(600);
    await m.test.post('/test-clock/advance', { to: after(subscription.current_period_end, 2000).toISOString() });
    const scheduled = await scheduling;
    expect(scheduled.status).toBe(200);
    expect(scheduled.body.subscription.scheduled_change).toMatchObject({
      effective_at: subscription.current_period_end,
    });
    await h.clock.advance(m, 1);
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(sub).toMatchObject({ plan_id: up.plan.id, amount: 99900, scheduled_change: null });
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 99900, amount_paid: 99900 });
  });

  it('GST: the renewal bills the new plan with GST to the paisa, which is what the gateway collected', async () => {
    const g = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(g.test, provider);
    const base = await recurringPlan(g.test, {}, { amount: 49950 });
    const { subscription } = await authorise(
      g.test,
      await createSubscription(g.test, base.plan.id, { customer_state_code: '27' }),
    );
    const up = await recurringPlan(g.test, { name: 'Plus' }, { amount: 99950 });
    const r = await ok(
      g.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id, effective: 'period_end' }),
    );
    expect(r.proration).toBeNull();
    // The new price is registered at the gateway at its amount plus IGST: 99950 + round(17991) = 117941.
    expect(await gatewayPriceAmountsOf(h.app, up.price.id)).toEqual([117941]);
    await h.clock.advance(g, after(subscription.current_period_end, 2000));
    const cycle = (await invoicesOf(g.test, subscription.id)).filter((i) => i.billing_reason === 'subscription_cycle');
    expect(cycle).toHaveLength(1);
    expect(cycle[0]).toMatchObject({ subtotal: 99950, igst_amount: 17991, total: 117941, amount_paid: 117941 });
    expect(cycle[0].line_items[0]).toMatchObject({ amount: 99950 });
    // 49950 + 8991 at the first charge, then the new plan's total.
    expect(await collectedAt(h.app, provider, await ok(g.test.get(`/subscriptions/${subscription.id}`)))).toBe(
      58941 + 117941,
    );
  });

  it('webhooks: each move carries the subscription with its scheduled_change', async () => {
    const { subscription, up } = await active();
    await ok(schedule(subscription.id, up.plan.id));
    await ok(m.test.delete(`/subscriptions/${subscription.id}/scheduled-change`));
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ type: string; payload: any }[]>(
        'select type, payload from outbox_events where merchant_id = ? and payload::text like ? order by id',
        [m.id, `%${subscription.id}%`],
      );
    const objects = rows
      .map((r) => ({
        type: r.type,
        o: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload).data.object,
      }))
      .filter((r) => r.type.startsWith('subscription.'));
    expect(objects.find((r) => r.type === 'subscription.plan_change_scheduled')?.o.scheduled_change).toMatchObject({
      plan_id: up.plan.id,
      price_id: up.price.id,
      effective_at: subscription.current_period_end,
    });
    expect(objects.find((r) => r.type === 'subscription.scheduled_change_removed')?.o.scheduled_change).toBeNull();
  });

  // Razorpay only (registered, not skipped, elsewhere): Stripe schedules a change on any payment method.
  if (provider === 'razorpay')
    it('a gateway that refuses the scheduling (Razorpay, a UPI mandate): 502 and nothing changes', async () => {
      const base = await recurringPlan(m.test);
      const { subscription } = await authorise(m.test, await createSubscription(m.test, base.plan.id), {
        outcome: 'success',
        method: 'upi',
        vpa: 'asha@okbank',
      });
      const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99900 });
      const trailBefore = await events(m.test, subscription.id);
      const r = await schedule(subscription.id, up.plan.id);
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe('gateway_rejected');
      expect(await ok(m.test.get(`/subscriptions/${subscription.id}`))).toMatchObject({
        scheduled_change: null,
        plan_id: base.plan.id,
      });
      expect(await events(m.test, subscription.id)).toEqual(trailBefore);
      await renew(subscription);
      expect(await lastInvoice(subscription.id)).toMatchObject({ total: 49900 });
    });

  it('trialing: a change scheduled in a trial applies at its end (the first charge bills the new plan)', async () => {
    const trialPlan = await recurringPlan(m.test, { trial_period_days: 7 });
    const { subscription } = await authorise(m.test, await createSubscription(m.test, trialPlan.plan.id));
    expect(subscription.status).toBe('trialing');
    const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99900 });
    const r = await ok(schedule(subscription.id, up.plan.id));
    expect(r.subscription.scheduled_change).toMatchObject({
      plan_id: up.plan.id,
      effective_at: subscription.trial_end,
    });
    await h.clock.advance(m, after(subscription.trial_end, 2000));
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(sub).toMatchObject({ status: 'active', plan_id: up.plan.id, amount: 99900, scheduled_change: null });
    const first = (await invoicesOf(m.test, subscription.id)).filter((i) => i.type === 'invoice').at(-1);
    expect(first).toMatchObject({ total: 99900, status: 'paid' });
    expect((await trail(m.test, subscription.id)).slice(-2)).toEqual([
      'trialing>trialing:subscription.plan_changed:webhook',
      'trialing>active:subscription.activated:webhook',
    ]);
  });

  it('another cadence at the period end: the renewal bills the yearly plan in full and a yearly period', async () => {
    const { subscription } = await active();
    const yearly = await recurringPlan(m.test, { name: 'Yearly', billing_frequency: 'yearly' }, { amount: 499900 });
    await ok(schedule(subscription.id, yearly.plan.id));
    await renew(subscription);
    const sub = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(sub).toMatchObject({ plan_id: yearly.plan.id, billing_frequency: 'yearly', amount: 499900 });
    const start = new Date(subscription.current_period_end);
    expect(sub.current_period_start).toBe(subscription.current_period_end);
    expect(new Date(sub.current_period_end).getTime() - start.getTime()).toBeGreaterThanOrEqual(365 * DAY);
    expect(await lastInvoice(subscription.id)).toMatchObject({ total: 499900, amount_paid: 499900 });
  });
});

import { TestMerchant, useHarness } from '../harness';
import { eventually } from '../harness/wait';
import { submitCheckout } from '../harness/checkout';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import {
  after,
  authorise,
  createSubscription,
  events,
  expectIllegal,
  invoicesOf,
  ok,
  outboxTypesOf,
  recurringPlan,
  trail,
} from './helpers';

/**
 * Every row of the API document's "States and transitions" table and the state rules (docs/subscriptions.md), driven
 * for real: the REST API, the gateway sandbox's hosted checkout and the test clock, for both gateways. Each test checks
 * the audit trail (who triggered what: docs/subscriptions.md), the outbox events (docs/webhooks.md),
 * and that commands the table does not list answer 409 and change nothing.
 */

const h = useHarness();
const DAY = 86_400;
const CANCEL_URL = 'https://merchant.example/pricing';

const CREATED = 'none>created:subscription.created:api';
const ACTIVATED = 'created>active:subscription.activated:webhook';
const TRIAL = 'created>trialing:subscription.trial_started:webhook';

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  /** A merchant of its own per test: its outbox and clock hold only that test's subscriptions. */
  async function merchant(): Promise<TestMerchant> {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
    return m;
  }
  const types = (m: TestMerchant, id: string) => outboxTypesOf(h.app, m.id, id);
  const subTypes = async (m: TestMerchant, id: string) =>
    (await types(m, id)).filter((t) => t.startsWith('subscription.'));

  /** An active subscription (no trial), paid with `card`. */
  async function active(m: TestMerchant, card = '4242424242424242', plan: Record<string, unknown> = {}) {
    const { plan: p } = await recurringPlan(m.test, plan);
    const sub = await createSubscription(m.test, p.id);
    const { subscription } = await authorise(m.test, sub, { outcome: 'success', card_number: card });
    expect(subscription.status).toBe('active');
    return subscription;
  }

  async function trialing(m: TestMerchant, plan: Record<string, unknown> = {}, card = '4242424242424242') {
    const { plan: p } = await recurringPlan(m.test, { trial_period_days: 7, ...plan });
    const sub = await createSubscription(m.test, p.id);
    const { subscription } = await authorise(m.test, sub, { outcome: 'success', card_number: card });
    expect(subscription.status).toBe('trialing');
    return subscription;
  }

  const get = (m: TestMerchant, id: string) => ok(m.test.get(`/subscriptions/${id}`));

  it('(none) -> created: POST answers the hosted checkout; only cancel is allowed before the mandate', async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    expect(sub).toMatchObject({ status: 'created', cancel_at_period_end: false, cycles_completed: 0, provider });
    expect(sub.checkout_url).toMatch(/^https?:\/\//);
    expect(await trail(m.test, sub.id)).toEqual([CREATED]);
    const [e] = await events(m.test, sub.id);
    expect(e).toMatchObject({ subscription_id: sub.id, from_state: null, to_state: 'created', metadata_json: {} });
    expect(e.created_at).toMatch(/Z$/);
    expect(await types(m, sub.id)).toEqual(['subscription.created']);
    await expectIllegal(m.test, sub.id, 'pause');
    await expectIllegal(m.test, sub.id, 'resume');
  });

  it('created -> active when the mandate is authorised without a trial (first period billed)', async () => {
    const m = await merchant();
    const sub = await active(m);
    expect(sub.cycles_completed).toBe(1);
    expect(await trail(m.test, sub.id)).toEqual([CREATED, ACTIVATED]);
    expect(await subTypes(m, sub.id)).toEqual(['subscription.created', 'subscription.activated']);
    expect(await types(m, sub.id)).toEqual(expect.arrayContaining(['invoice.created', 'invoice.paid']));
    await expectIllegal(m.test, sub.id, 'resume');
  });

  it('created -> trialing when the plan has a trial; nothing is charged yet', async () => {
    const m = await merchant();
    const sub = await trialing(m);
    expect(sub.cycles_completed).toBe(0);
    expect(sub.trial_start).toBeTruthy();
    expect(new Date(sub.trial_end).getTime() - new Date(sub.trial_start).getTime()).toBe(7 * DAY * 1000);
    expect(await trail(m.test, sub.id)).toEqual([CREATED, TRIAL]);
    expect(await subTypes(m, sub.id)).toEqual(['subscription.created', 'subscription.trial_started']);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    await expectIllegal(m.test, sub.id, 'pause');
    await expectIllegal(m.test, sub.id, 'resume');
  });

  it.each([
    ['outcome cancel', { outcome: 'cancel' }],
    ['outcome failure', { outcome: 'failure' }],
    ['declined card 4000000000000002', { outcome: 'success', card_number: '4000000000000002' }],
    ['VPA declined@sandbox', { outcome: 'success', method: 'upi', vpa: 'declined@sandbox' }],
  ])(
    'created -> cancelled when the checkout fails: %s (redirect to cancel_url, cancelled by then)',
    async (_name, form) => {
      const m = await merchant();
      const { plan } = await recurringPlan(m.test);
      const sub = await createSubscription(m.test, plan.id);
      const r = await submitCheckout(sub.checkout_url, form as Record<string, string>);
      expect(r.status).toBe(303);
      expect(r.location).toBe(CANCEL_URL);
      const got = await get(m, sub.id);
      expect(got.status).toBe('cancelled');
      expect(got.cycles_completed).toBe(0);
      expect(await trail(m.test, sub.id)).toEqual([CREATED, 'created>cancelled:subscription.cancelled:webhook']);
      expect(await subTypes(m, sub.id)).toEqual(['subscription.created', 'subscription.cancelled']);
      expect(await invoicesOf(m.test, sub.id)).toEqual([]);
      await expectIllegal(m.test, sub.id, 'resume');
      await expectIllegal(m.test, sub.id, 'cancel');
    },
  );

  it('created + cancel command -> cancelled (api); a checkout completed afterwards does not revive it', async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    const cancelled = await ok(m.test.post(`/subscriptions/${sub.id}/cancel`));
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.cancelled_at).toBeTruthy();
    const expected = [CREATED, 'created>cancelled:subscription.cancelled:api'];
    expect(await trail(m.test, sub.id)).toEqual(expected);
    // The hosted page may still be open: paying it must not bring the subscription back.
    await submitCheckout(sub.checkout_url, { outcome: 'success' });
    expect((await get(m, sub.id)).status).toBe('cancelled');
    expect(await trail(m.test, sub.id)).toEqual(expected);
    // A gateway that charged the first period with that checkout (Stripe does) has it refunded at once, on paper:
    // a paid invoice naming the payment and a refund credit note against it (none when nothing was charged).
    const charged = async () => (await invoicesOf(m.test, sub.id)).filter((i) => i.type === 'invoice');
    await eventually(
      async () => (await charged()).every((i) => i.amount_credited === i.total),
      10_000,
      'the charge after cancellation refunded',
    );
    for (const i of await charged()) {
      expect(i).toMatchObject({ status: 'paid', amount_credited: i.total });
      expect(await ok(m.test.get(`/payments/${i.payment_id}`))).toMatchObject({
        status: 'refunded',
        amount_refunded: i.total,
      });
    }
    expect(await subTypes(m, sub.id)).toEqual(['subscription.created', 'subscription.cancelled']);
  });

  it('trialing -> active when the charge at trial end succeeds (webhook), first invoice then', async () => {
    const m = await merchant();
    const sub = await trialing(m);
    await h.clock.advance(m, after(sub.trial_end));
    const got = await get(m, sub.id);
    expect(got).toMatchObject({ status: 'active', cycles_completed: 1, current_period_start: sub.trial_end });
    expect(await trail(m.test, sub.id)).toEqual([CREATED, TRIAL, 'trialing>active:subscription.activated:webhook']);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.trial_started',
      'subscription.activated',
    ]);
    const inv = await invoicesOf(m.test, sub.id);
    expect(inv.map((i) => [i.billing_reason, i.status])).toEqual([['subscription_create', 'paid']]);
  });

  it('trialing -> past_due when the charge at trial end fails (card 4000000000000341)', async () => {
    const m = await merchant();
    const sub = await trialing(m, {}, '4000000000000341');
    await h.clock.advance(m, after(sub.trial_end));
    expect((await get(m, sub.id)).status).toBe('past_due');
    const evs = await events(m.test, sub.id);
    expect(evs.at(-1)).toMatchObject({
      from_state: 'trialing',
      to_state: 'past_due',
      event_type: 'subscription.payment_failed',
      triggered_by: 'webhook',
      metadata_json: { retry_attempt: 0, gateway_decline_reason: 'insufficient_funds' },
    });
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.trial_started',
      'subscription.payment_failed',
    ]);
    const inv = await invoicesOf(m.test, sub.id);
    expect(inv.map((i) => [i.billing_reason, i.status])).toEqual([['subscription_create', 'open']]);
  });

  it('trialing + cancel now -> cancelled (api)', async () => {
    const m = await merchant();
    const sub = await trialing(m);
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`))).status).toBe('cancelled');
    expect(await trail(m.test, sub.id)).toEqual([CREATED, TRIAL, 'trialing>cancelled:subscription.cancelled:api']);
    await h.clock.advance(m, after(sub.trial_end));
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    expect((await get(m, sub.id)).status).toBe('cancelled');
  });

  it('trialing + cancel at period end: stays trialing, no charge at trial end, cancelled then by the scheduler', async () => {
    const m = await merchant();
    const sub = await trialing(m);
    const marked = await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }));
    expect(marked).toMatchObject({ status: 'trialing', cancel_at_period_end: true });
    expect(await trail(m.test, sub.id)).toEqual([CREATED, TRIAL]);
    await h.clock.advance(m, after(sub.trial_end, -60_000));
    expect((await get(m, sub.id)).status).toBe('trialing');
    await h.clock.advance(m, after(sub.trial_end));
    const got = await get(m, sub.id);
    expect(got).toMatchObject({ status: 'cancelled', cycles_completed: 0 });
    expect(got.ended_at).toBe(sub.trial_end);
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      TRIAL,
      'trialing>cancelled:subscription.cancelled:scheduler',
    ]);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.trial_started',
      'subscription.cancelled',
    ]);
    await h.clock.advance(m, 40 * DAY);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
  });

  it('trialing + trial end with trial_end_action=cancel_subscription -> cancelled by the scheduler, no charge', async () => {
    const m = await merchant();
    const sub = await trialing(m, { trial_end_action: 'cancel_subscription' });
    expect(sub.cancel_at_period_end).toBe(false);
    await h.clock.advance(m, after(sub.trial_end));
    const got = await get(m, sub.id);
    expect(got).toMatchObject({ status: 'cancelled', cycles_completed: 0 });
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      TRIAL,
      'trialing>cancelled:subscription.cancelled:scheduler',
    ]);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    await h.clock.advance(m, 40 * DAY);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    expect((await get(m, sub.id)).status).toBe('cancelled');
  });

  it('active -> paused -> active (api); paused -> cancelled; illegal commands change nothing', async () => {
    const m = await merchant();
    const sub = await active(m);
    await expectIllegal(m.test, sub.id, 'resume');
    const paused = await ok(m.test.post(`/subscriptions/${sub.id}/pause`));
    expect(paused.status).toBe('paused');
    expect(paused.paused_at).toBeTruthy();
    await expectIllegal(m.test, sub.id, 'pause');
    await expectIllegal(m.test, sub.id, 'change-plan', { plan_id: sub.plan_id });
    const resumed = await ok(m.test.post(`/subscriptions/${sub.id}/resume`));
    expect(resumed).toMatchObject({ status: 'active', paused_at: null });
    await ok(m.test.post(`/subscriptions/${sub.id}/pause`));
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`))).status).toBe('cancelled');
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      ACTIVATED,
      'active>paused:subscription.paused:api',
      'paused>active:subscription.resumed:api',
      'active>paused:subscription.paused:api',
      'paused>cancelled:subscription.cancelled:api',
    ]);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.paused',
      'subscription.resumed',
      'subscription.paused',
      'subscription.cancelled',
    ]);
    await expectIllegal(m.test, sub.id, 'resume');
    await expectIllegal(m.test, sub.id, 'pause');
  });

  it('a paused subscription is not charged at its period end', async () => {
    const m = await merchant();
    const sub = await active(m);
    await ok(m.test.post(`/subscriptions/${sub.id}/pause`));
    await h.clock.advance(m, after(sub.current_period_end));
    expect(await get(m, sub.id)).toMatchObject({ status: 'paused', cycles_completed: 1 });
    expect(await invoicesOf(m.test, sub.id)).toHaveLength(1);
  });

  it('active -> past_due when the renewal fails; past_due -> cancelled (api)', async () => {
    const m = await merchant();
    const sub = await active(m, '4000000000000341');
    await h.clock.advance(m, after(sub.current_period_end));
    const pd = await get(m, sub.id);
    expect(pd).toMatchObject({ status: 'past_due', cycles_completed: 2, current_period_start: sub.current_period_end });
    await expectIllegal(m.test, sub.id, 'pause');
    await expectIllegal(m.test, sub.id, 'resume');
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`))).status).toBe('cancelled');
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      ACTIVATED,
      'active>past_due:subscription.payment_failed:webhook',
      'past_due>cancelled:subscription.cancelled:api',
    ]);
    // No retries after the cancellation.
    await h.clock.advance(m, 10 * DAY);
    expect((await events(m.test, sub.id)).length).toBe(4);
  });

  it('past_due -> active when a retry succeeds (card 4000000000000119)', async () => {
    const m = await merchant();
    const sub = await active(m, '4000000000000119');
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await get(m, sub.id)).status).toBe('past_due');
    await h.clock.advance(m, DAY);
    expect((await get(m, sub.id)).status).toBe('active');
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      ACTIVATED,
      'active>past_due:subscription.payment_failed:webhook',
      'past_due>active:subscription.payment_succeeded:webhook',
    ]);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.payment_failed',
      'subscription.payment_succeeded',
    ]);
    expect((await invoicesOf(m.test, sub.id)).map((i) => i.status)).toEqual(['paid', 'paid']);
  });

  it('past_due -> halted after the last retry (scheduler); halted -> cancelled (api)', async () => {
    const m = await merchant();
    const sub = await active(m, '4000000000000341');
    await h.clock.advance(m, after(sub.current_period_end));
    await h.clock.advance(m, 6 * DAY);
    expect((await get(m, sub.id)).status).toBe('halted');
    await expectIllegal(m.test, sub.id, 'resume');
    await expectIllegal(m.test, sub.id, 'pause');
    expect((await ok(m.test.post(`/subscriptions/${sub.id}/cancel`))).status).toBe('cancelled');
    const t = await trail(m.test, sub.id);
    expect(t.slice(-2)).toEqual([
      'past_due>halted:subscription.halted:scheduler',
      'halted>cancelled:subscription.cancelled:api',
    ]);
    expect((await subTypes(m, sub.id)).slice(-2)).toEqual(['subscription.halted', 'subscription.cancelled']);
  });

  it('past_due -> halted at once on a hard decline (card 4000000000009979, webhook)', async () => {
    const m = await merchant();
    const sub = await active(m, '4000000000009979');
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await get(m, sub.id)).status).toBe('halted');
    const evs = await events(m.test, sub.id);
    expect(evs.slice(-2)).toMatchObject([
      {
        from_state: 'active',
        to_state: 'past_due',
        triggered_by: 'webhook',
        metadata_json: { retry_attempt: 0, gateway_decline_reason: 'stolen_card' },
      },
      { from_state: 'past_due', to_state: 'halted', event_type: 'subscription.halted', triggered_by: 'webhook' },
    ]);
  });

  it.each(['paused', 'past_due', 'halted'])(
    '%s + cancel with cancel_at_period_end=true: cancelled now (api), not left to the gateway',
    async (state) => {
      const m = await merchant();
      const card = { paused: '4242424242424242', past_due: '4000000000000341', halted: '4000000000009979' }[state]!;
      const sub = await active(m, card);
      if (state === 'paused') await ok(m.test.post(`/subscriptions/${sub.id}/pause`));
      else await h.clock.advance(m, after(sub.current_period_end));
      expect((await get(m, sub.id)).status).toBe(state);
      const before = (await events(m.test, sub.id)).length;
      const c = await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }));
      expect(c).toMatchObject({ status: 'cancelled', cancel_at_period_end: false });
      const evs = await events(m.test, sub.id);
      expect(evs.slice(before).map((e) => `${e.from_state}>${e.to_state}:${e.event_type}:${e.triggered_by}`)).toEqual([
        `${state}>cancelled:subscription.cancelled:api`,
      ]);
      // Nothing more happens: no retry, no renewal, no second cancellation.
      await h.clock.advance(m, 70 * DAY);
      expect((await events(m.test, sub.id)).length).toBe(before + 1);
      expect((await invoicesOf(m.test, sub.id)).length).toBe(state === 'paused' ? 1 : 2);
    },
  );

  it('active -> cancelled now (api); terminal: every command is 409', async () => {
    const m = await merchant();
    const sub = await active(m);
    const c = await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: false }));
    expect(c).toMatchObject({ status: 'cancelled', cancel_at_period_end: false });
    expect(c.cancelled_at).toBeTruthy();
    expect(c.ended_at).toBeTruthy();
    expect(await trail(m.test, sub.id)).toEqual([CREATED, ACTIVATED, 'active>cancelled:subscription.cancelled:api']);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.cancelled',
    ]);
    await expectIllegal(m.test, sub.id, 'pause');
    await expectIllegal(m.test, sub.id, 'resume');
    await expectIllegal(m.test, sub.id, 'cancel');
    await expectIllegal(m.test, sub.id, 'cancel', { cancel_at_period_end: true });
    await h.clock.advance(m, after(sub.current_period_end));
    expect(await invoicesOf(m.test, sub.id)).toHaveLength(1);
  });

  it('active + cancel at period end: stays active, cancelled at the period end by the scheduler (subscription.cancelled)', async () => {
    const m = await merchant();
    const sub = await active(m);
    const marked = await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`));
    expect(marked).toMatchObject({ status: 'active', cancel_at_period_end: true });
    // Asking again changes nothing.
    expect(await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`))).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
    });
    expect(await trail(m.test, sub.id)).toEqual([CREATED, ACTIVATED]);
    await h.clock.advance(m, after(sub.current_period_end, -60_000));
    expect((await get(m, sub.id)).status).toBe('active');
    await h.clock.advance(m, after(sub.current_period_end));
    const got = await get(m, sub.id);
    expect(got).toMatchObject({ status: 'cancelled', cycles_completed: 1, ended_at: sub.current_period_end });
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      ACTIVATED,
      'active>cancelled:subscription.cancelled:scheduler',
    ]);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.cancelled',
    ]);
    expect(await invoicesOf(m.test, sub.id)).toHaveLength(1);
  });

  it('active -> completed after max_cycles 2: the first period and one renewal, never a third charge', async () => {
    const m = await merchant();
    const sub = await active(m, '4242424242424242', { max_cycles: 2 });
    expect(sub.max_cycles).toBe(2);
    await h.clock.advance(m, after(sub.current_period_end));
    const second = await get(m, sub.id);
    expect(second).toMatchObject({ status: 'active', cycles_completed: 2 });
    await h.clock.advance(m, after(second.current_period_end, -60_000));
    expect((await get(m, sub.id)).status).toBe('active');
    await h.clock.advance(m, after(second.current_period_end));
    const done = await get(m, sub.id);
    expect(done).toMatchObject({ status: 'completed', cycles_completed: 2, ended_at: second.current_period_end });
    expect(await trail(m.test, sub.id)).toEqual([
      CREATED,
      ACTIVATED,
      'active>completed:subscription.completed:scheduler',
    ]);
    expect(await subTypes(m, sub.id)).toEqual([
      'subscription.created',
      'subscription.activated',
      'subscription.completed',
    ]);
    await h.clock.advance(m, 70 * DAY);
    const inv = await invoicesOf(m.test, sub.id);
    expect(inv.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
    expect((await get(m, sub.id)).cycles_completed).toBe(2);
    await expectIllegal(m.test, sub.id, 'cancel');
    await expectIllegal(m.test, sub.id, 'resume');
    await expectIllegal(m.test, sub.id, 'pause');
  });

  it('unknown subscription: commands and events answer 404', async () => {
    const m = await merchant();
    const id = '0190a6f0-0000-7000-8000-000000000000';
    for (const cmd of ['pause', 'resume', 'cancel']) {
      const r = await m.test.post(`/subscriptions/${id}/${cmd}`);
      expect([r.status, r.body.error.code]).toEqual([404, 'resource_not_found']);
    }
    expect((await m.test.get(`/subscriptions/${id}/events`)).status).toBe(404);
  });

  describe('GraphQL agrees with REST', () => {
    const FIELDS = 'id status cancelAtPeriodEnd cyclesCompleted currentPeriodEnd planId customerId';

    it('createSubscription, pauseSubscription, cancelSubscription(cancelAtPeriodEnd), subscription, subscriptions(status), subscriptionEvents', async () => {
      const m = await merchant();
      const { plan } = await recurringPlan(m.test);
      const created = await m.test.gql(
        `mutation($input: CreateSubscriptionInput!) { createSubscription(input: $input) { ${FIELDS} checkoutUrl } }`,
        {
          input: {
            planId: plan.id,
            customerEmail: 'gql-sub@example.com',
            successUrl: 'https://m.example/ok',
            cancelUrl: CANCEL_URL,
          },
        },
      );
      expect(created.errors).toBeUndefined();
      const g = created.data.createSubscription;
      expect(g.status).toBe('CREATED');
      const rest = await get(m, g.id);
      expect(rest).toMatchObject({
        id: g.id,
        status: 'created',
        plan_id: plan.id,
        customer_id: g.customerId,
        checkout_url: g.checkoutUrl,
      });

      await submitCheckout(g.checkoutUrl, { outcome: 'success' });
      const paused = await m.test.gql(`mutation($id: ID!) { pauseSubscription(id: $id) { ${FIELDS} } }`, { id: g.id });
      expect(paused.data.pauseSubscription.status).toBe('PAUSED');
      const again = await m.test.gql(`mutation($id: ID!) { pauseSubscription(id: $id) { id } }`, { id: g.id });
      expect(again.errors![0].extensions).toMatchObject({ code: 'invalid_state_transition', http: { status: 409 } });
      await m.test.gql(`mutation($id: ID!) { resumeSubscription(id: $id) { id } }`, { id: g.id });

      const marked = await m.test.gql(
        `mutation($id: ID!) { cancelSubscription(id: $id, cancelAtPeriodEnd: true) { ${FIELDS} } }`,
        { id: g.id },
      );
      expect(marked.data.cancelSubscription).toMatchObject({ status: 'ACTIVE', cancelAtPeriodEnd: true });

      const one = (await m.test.gql(`query($id: ID!) { subscription(id: $id) { ${FIELDS} } }`, { id: g.id })).data
        .subscription;
      const r = await get(m, g.id);
      expect(one).toEqual({
        id: r.id,
        status: r.status.toUpperCase(),
        cancelAtPeriodEnd: r.cancel_at_period_end,
        cyclesCompleted: r.cycles_completed,
        currentPeriodEnd: r.current_period_end,
        planId: r.plan_id,
        customerId: r.customer_id,
      });

      const list = await m.test.gql(
        `query { subscriptions(status: ACTIVE) { edges { node { id status } } totalCount } }`,
      );
      const restList = await ok(m.test.get('/subscriptions?status=active'));
      expect(list.data.subscriptions.edges.map((e: any) => e.node.id)).toEqual(restList.data.map((s: any) => s.id));
      expect(list.data.subscriptions.totalCount).toBe(1);

      const gqlEvents = (
        await m.test.gql(
          `query($id: ID!) { subscriptionEvents(id: $id) { id fromState toState eventType triggeredBy metadataJson createdAt } }`,
          { id: g.id },
        )
      ).data.subscriptionEvents;
      const restEvents = await events(m.test, g.id);
      expect(gqlEvents).toEqual(
        restEvents.map((e) => ({
          id: e.id,
          fromState: e.from_state?.toUpperCase() ?? null,
          toState: e.to_state.toUpperCase(),
          eventType: e.event_type,
          triggeredBy: e.triggered_by,
          metadataJson: e.metadata_json,
          createdAt: e.created_at,
        })),
      );
      expect(restEvents.map((e) => e.event_type)).toEqual([
        'subscription.created',
        'subscription.activated',
        'subscription.paused',
        'subscription.resumed',
      ]);

      await h.clock.advance(m, after(r.current_period_end));
      const ended = (await m.test.gql(`query($id: ID!) { subscription(id: $id) { status } }`, { id: g.id })).data
        .subscription;
      expect(ended.status).toBe('CANCELLED');
      const cancelNow = await m.test.gql(`mutation($id: ID!) { cancelSubscription(id: $id) { id } }`, { id: g.id });
      expect(cancelNow.errors![0].extensions.code).toBe('invalid_state_transition');
      expect(
        (await m.test.gql(`query { subscriptions(status: CANCELLED) { totalCount } }`)).data.subscriptions.totalCount,
      ).toBe(1);
    });
  });
});

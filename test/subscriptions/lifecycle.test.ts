import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan, trail } from './helpers';

/** The subscription lifecycle through both gateways in the sandbox, over REST, with the test clock. */

const h = useHarness();
const DAY = 86_400;

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
  });

  it('create -> mandate -> active; renewals by the test clock; cancel at period end', async () => {
    const { plan, price } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    expect(sub).toMatchObject({
      object: 'subscription',
      status: 'created',
      provider,
      price_id: price.id,
      amount: 49900,
      currency: 'INR',
      livemode: false,
    });
    expect(sub.checkout_url).toMatch(/^http/);
    const { subscription: active } = await authorise(m.test, sub);
    expect(active.status).toBe('active');
    expect(active.cycles_completed).toBe(1);
    expect(new Date(active.current_period_end) > new Date(active.current_period_start)).toBe(true);

    await h.clock.advance(m, new Date(new Date(active.current_period_end).getTime() + 1000));
    const renewed = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(renewed.cycles_completed).toBe(2);
    expect(renewed.current_period_start).toBe(active.current_period_end);

    const cancelled = await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`));
    expect(cancelled).toMatchObject({ status: 'active', cancel_at_period_end: true });
    await h.clock.advance(m, new Date(new Date(renewed.current_period_end).getTime() + 1000));
    const ended = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(ended.status).toBe('cancelled');
    expect(ended.cycles_completed).toBe(2);
    expect(await trail(m.test, sub.id)).toEqual([
      'none>created:subscription.created:api',
      'created>active:subscription.activated:webhook',
      'active>cancelled:subscription.cancelled:scheduler',
    ]);
  });

  it('trial: trialing, then active when the trial-end charge succeeds', async () => {
    const { plan } = await recurringPlan(m.test, { trial_period_days: 7 });
    const sub = await createSubscription(m.test, plan.id);
    const { subscription: trialing } = await authorise(m.test, sub);
    expect(trialing.status).toBe('trialing');
    expect(trialing.cycles_completed).toBe(0);
    await h.clock.advance(m, 8 * DAY);
    const active = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(active.status).toBe('active');
    expect(active.cycles_completed).toBe(1);
    expect(await trail(m.test, sub.id)).toEqual([
      'none>created:subscription.created:api',
      'created>trialing:subscription.trial_started:webhook',
      'trialing>active:subscription.activated:webhook',
    ]);
  });

  it('pause and resume mirror the gateway; resume of an active one is 409', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect((await ok(m.test.post(`/subscriptions/${subscription.id}/pause`))).status).toBe('paused');
    const again = await m.test.post(`/subscriptions/${subscription.id}/pause`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('invalid_state_transition');
    expect((await ok(m.test.post(`/subscriptions/${subscription.id}/resume`))).status).toBe('active');
    expect((await m.test.post(`/subscriptions/${subscription.id}/resume`)).status).toBe(409);
  });
});

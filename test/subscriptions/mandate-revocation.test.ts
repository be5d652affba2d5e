import { request, TestMerchant, useHarness } from '../harness';
import { submitCheckout } from '../harness/checkout';
import { connect, outbox } from '../payments/helpers';
import { after, authorise, createSubscription, invoicesOf, ok, recurringPlan, trail } from './helpers';

/**
 * The subscription's mandate (docs/india.md "Mandates"): its method, bank and status on both transports, and a mandate
 * revoked at the gateway recorded as `subscription.mandate_revoked` before the next debit fails; a new mandate
 * authorised through the portal's page makes it active again and the next renewal is paid. Stripe, through the
 * sandbox (Razorpay ends the subscription itself when its mandate is revoked: subscription.cancelled).
 */
const h = useHarness();
jest.setTimeout(120_000);

describe('stripe', () => {
  let m: TestMerchant;
  let secretKey: string;
  beforeAll(async () => {
    m = await h.merchant();
    secretKey = (await connect(m.test, 'stripe')).credentials.secret_key;
  });

  const revokeAtGateway = (providerSubscriptionId: string) =>
    request(`${h.app.app.sandboxUrl}/v1/test_helpers/sandbox/subscriptions/${providerSubscriptionId}/revoke_mandate`, {
      method: 'POST',
      key: secretKey,
      rawBody: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });

  it('records the mandate, its revocation before the next debit, and a new mandate', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(sub).toMatchObject({
      status: 'active',
      mandate_status: 'active',
      mandate_method: 'card',
      mandate_bank: 'HDFC',
      mandate_revoked_at: null,
    });
    expect(sub.mandate_authorized_at).toBeTruthy();
    const g = await m.test.gql(
      'query($id: ID!) { subscription(id: $id) { mandateStatus mandateMethod mandateBank } }',
      {
        id: sub.id,
      },
    );
    expect(g.data.subscription).toEqual({ mandateStatus: 'active', mandateMethod: 'card', mandateBank: 'HDFC' });

    // The customer revokes it at the bank: recorded once, the state unchanged, the merchant told.
    expect((await revokeAtGateway(sub.provider_subscription_id)).status).toBe(200);
    expect((await revokeAtGateway(sub.provider_subscription_id)).status).toBe(200); // reported again: nothing more
    const revoked = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(revoked).toMatchObject({ status: 'active', mandate_status: 'revoked' });
    expect(revoked.mandate_revoked_at).toBeTruthy();
    expect((await trail(m.test, sub.id)).filter((t) => t.includes('mandate_revoked'))).toEqual([
      'active>active:subscription.mandate_revoked:webhook',
    ]);
    const told = (await outbox(h.app, m.id, 'subscription.mandate_revoked')).filter(
      (e) => e.payload.data.object.id === sub.id,
    );
    expect(told).toHaveLength(1);
    expect(told[0].payload.data.object).toMatchObject({ mandate_status: 'revoked' });

    // A new mandate on the gateway's page (the portal's "Authorise a new mandate"): active again, the renewal paid.
    const setup = await ok(
      m.test.post(`/subscriptions/${sub.id}/mandate-setup`, { success_url: 'https://merchant.example/done' }),
      201,
    );
    expect((await submitCheckout(setup.url, { outcome: 'success', card_number: '5105105105105100' })).status).toBe(303);
    const renewed = await ok(m.test.get(`/subscriptions/${sub.id}`));
    // Stripe's setup-mode completion names no bank: none is kept rather than the revoked mandate's.
    expect(renewed).toMatchObject({ mandate_status: 'active', mandate_revoked_at: null, mandate_bank: null });
    expect(new Date(renewed.mandate_authorized_at).getTime()).toBeGreaterThan(
      new Date(sub.mandate_authorized_at).getTime(),
    );
    await h.clock.advance(m, after(sub.current_period_end));
    const renewal = (await invoicesOf(m.test, sub.id)).find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(renewal.status).toBe('paid');
  });

  it('without a new mandate the next debit fails and dunning halts the subscription', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect((await revokeAtGateway(sub.provider_subscription_id)).status).toBe(200);
    await h.clock.advance(m, after(sub.current_period_end));
    const halted = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(halted).toMatchObject({ status: 'halted', mandate_status: 'revoked' });
    const events = await ok(m.test.get(`/subscriptions/${sub.id}/events`));
    expect(events.map((e: any) => e.event_type)).toEqual(
      expect.arrayContaining(['subscription.mandate_revoked', 'subscription.halted']),
    );
    expect(events.find((e: any) => e.event_type === 'subscription.halted').metadata_json).toMatchObject({
      gateway_decline_reason: 'mandate_revoked',
    });
  });
});

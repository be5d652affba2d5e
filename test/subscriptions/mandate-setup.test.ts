import { TestMerchant, useHarness } from '../harness';
import { connect, outbox } from '../payments/helpers';
import { submitCheckout } from '../harness/checkout';
import { after, authorise, createSubscription, events, ok, recurringPlan } from './helpers';

/**
 * Replacing a running subscription's mandate (docs/subscriptions.md "Replacing the mandate"): POST
 * /subscriptions/{id}/mandate-setup (GraphQL createMandateSetup) answers the gateway's page; once the customer completes
 * it the subscription records subscription.mandate_updated and a durable apply_mandate command makes the gateway charge
 * the new mandate. Stripe only (a setup-mode Checkout); Razorpay answers 409 mandate_update_unsupported. The portal's
 * "Authorise a new mandate" opens the same page.
 */
const h = useHarness();
jest.setTimeout(120_000);
const DAY = 86_400;

async function sandboxObject(id: string): Promise<any> {
  const [row] = await h.app.orm.em
    .getConnection()
    .execute<{ data: any }[]>('select data from sandbox_objects where id = ?', [id]);
  return typeof row?.data === 'string' ? JSON.parse(row.data) : row?.data;
}

/** The portal's "Authorise a new mandate" for the subscription, from a session of its customer. */
async function portalAuthorizeMandate(m: TestMerchant, sub: any) {
  const portal = await ok(
    m.test.post('/portal/sessions', { customer_id: sub.customer_id, return_url: 'https://shop.example/account' }),
    201,
  );
  const token = decodeURIComponent(new URL(portal.url).hash.slice(1));
  return h.graphql(token, 'mutation($id: ID!) { portalAuthorizeMandate(subscriptionId: $id) { url } }', {
    id: sub.id,
  });
}

describe('stripe', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, 'stripe');
  });

  async function subscribed(card: string) {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: card,
    });
    return subscription;
  }

  it('a past-due subscription gets a new card: mandate_updated, the gateway charges it, the next retry pays', async () => {
    // This card pays the first period and declines every renewal.
    const sub = await subscribed('4000000000000341');
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('past_due');

    const setup = await ok(
      m.test.post(`/subscriptions/${sub.id}/mandate-setup`, { success_url: 'https://shop.example/card-updated' }),
      201,
    );
    expect(setup).toMatchObject({ object: 'mandate_setup', subscription_id: sub.id });
    expect(setup.url.startsWith(`${h.app.app.sandboxUrl}/checkout/`)).toBe(true);
    const session = await sandboxObject(setup.checkout_session_id);
    expect(session).toMatchObject({ mode: 'setup', metadata: { subscription_id: sub.id }, amount_total: null });
    // Nothing changes until the customer completes the page.
    expect((await events(m.test, sub.id)).map((e) => e.event_type)).not.toContain('subscription.mandate_updated');

    const done = await submitCheckout(setup.url, { outcome: 'success', card_number: '4242424242424242' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://shop.example/card-updated');

    const trail = await events(m.test, sub.id);
    expect(trail.at(-1)).toMatchObject({
      event_type: 'subscription.mandate_updated',
      from_state: 'past_due',
      to_state: 'past_due',
      triggered_by: 'webhook',
    });
    expect((await outbox(h.app, m.id, 'subscription.mandate_updated')).map((e) => e.payload.data.object.id)).toEqual([
      sub.id,
    ]);
    const commands = (await ok(m.test.get(`/gateway-commands?subscription_id=${sub.id}`))).data;
    expect(commands.filter((c: any) => c.action === 'apply_mandate')).toEqual([
      expect.objectContaining({ status: 'succeeded', idempotency_key: expect.stringMatching(/^mandate-seti_/) }),
    ]);
    const atGateway = await sandboxObject(sub.provider_subscription_id);
    const intent = await sandboxObject((await sandboxObject(setup.checkout_session_id)).setup_intent);
    expect(atGateway.default_payment_method).toBe(intent.payment_method);

    // The first dunning retry charges the new card: the subscription is active again, its invoice paid.
    await h.clock.advance(m, new Date(new Date(sub.current_period_end).getTime() + DAY * 1000 + 1000));
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({ status: 'active' });
    expect((await events(m.test, sub.id)).at(-1)).toMatchObject({ event_type: 'subscription.payment_succeeded' });
  });

  it('a page left without a new mandate changes nothing', async () => {
    const sub = await subscribed('4242424242424242');
    const before = await events(m.test, sub.id);
    const setup = await ok(
      m.test.post(`/subscriptions/${sub.id}/mandate-setup`, {
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/back',
      }),
      201,
    );
    const left = await submitCheckout(setup.url, { outcome: 'cancel' });
    expect(left.location).toBe('https://shop.example/back');
    expect(await events(m.test, sub.id)).toEqual(before);
    expect((await ok(m.test.get(`/gateway-commands?subscription_id=${sub.id}`))).data).toEqual([]);
  });

  it('refusals: no mandate yet, ended, bad URLs, another merchant', async () => {
    const { plan } = await recurringPlan(m.test);
    const created = await createSubscription(m.test, plan.id);
    const r1 = await m.test.post(`/subscriptions/${created.id}/mandate-setup`, { success_url: 'https://a.example/' });
    expect([r1.status, r1.body.error.code]).toEqual([409, 'invalid_state_transition']);

    const sub = await subscribed('4242424242424242');
    const bad = await m.test.post(`/subscriptions/${sub.id}/mandate-setup`, { success_url: 'not a url' });
    expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'parameter_invalid', 'success_url']);
    const missing = await m.test.post(`/subscriptions/${sub.id}/mandate-setup`, {});
    expect([missing.status, missing.body.error.param]).toEqual([400, 'success_url']);
    const other = await h.merchant();
    const foreign = await other.test.post(`/subscriptions/${sub.id}/mandate-setup`, {
      success_url: 'https://a.example/',
    });
    expect(foreign.status).toBe(404);

    await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, {}));
    const ended = await m.test.post(`/subscriptions/${sub.id}/mandate-setup`, { success_url: 'https://a.example/' });
    expect([ended.status, ended.body.error.code]).toEqual([409, 'invalid_state_transition']);
  });

  it("GraphQL createMandateSetup, and the portal's Authorise a new mandate opens the same kind of page", async () => {
    const sub = await subscribed('4242424242424242');
    const g = await m.test.gql(
      'mutation($id: ID!, $input: MandateSetupInput!) { createMandateSetup(id: $id, input: $input) { object subscriptionId url } }',
      { id: sub.id, input: { successUrl: 'https://shop.example/ok' } },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.createMandateSetup).toMatchObject({ object: 'mandate_setup', subscriptionId: sub.id });

    const r = await portalAuthorizeMandate(m, sub);
    expect(r.body.errors).toBeUndefined();
    const url = r.body.data.portalAuthorizeMandate.url;
    const page = await sandboxObject(new URL(url).pathname.split('/').pop()!);
    // The gateway sends the customer back to the merchant's return_url (never the portal's address with its token).
    expect(page).toMatchObject({
      mode: 'setup',
      success_url: 'https://shop.example/account',
      cancel_url: 'https://shop.example/account',
      metadata: { subscription_id: sub.id },
    });
    const done = await submitCheckout(url, { outcome: 'success', card_number: '5105105105105100' });
    expect(done.status).toBe(303);
    expect((await events(m.test, sub.id)).at(-1)).toMatchObject({ event_type: 'subscription.mandate_updated' });
  });
});

describe('razorpay', () => {
  it('409 mandate_update_unsupported, from the API and the portal, and nothing changes', async () => {
    const m = await h.merchant();
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const before = await events(m.test, sub.id);
    const r = await m.test.post(`/subscriptions/${sub.id}/mandate-setup`, { success_url: 'https://a.example/' });
    expect([r.status, r.body.error.code]).toEqual([409, 'mandate_update_unsupported']);
    const p = await portalAuthorizeMandate(m, sub);
    expect(p.body.errors[0].extensions.code).toBe('mandate_update_unsupported');
    expect(await events(m.test, sub.id)).toEqual(before);
  });
});

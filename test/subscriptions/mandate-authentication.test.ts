import { request, TestMerchant, useHarness } from '../harness';
import { connect, outbox, PROVIDERS, ProviderName } from '../payments/helpers';
import { after, authorise, createSubscription, invoicesOf, ok, recurringPlan, trail } from './helpers';

/**
 * Debits above the mandate's limit (docs/india.md): a renewal above the merchant's `mandate_afa_limit` is not debited
 * silently. The subscription goes past_due with `authentication_required`, the open invoice carries the gateway's
 * authentication page and `invoice.payment_action_required` tells the merchant; the customer authenticating there
 * pays the invoice and the subscription is active again. On both gateways, through the sandbox and the test clock.
 */
const h = useHarness();
jest.setTimeout(120_000);

const actionsFor = async (m: TestMerchant, invoiceId: string) =>
  (await outbox(h.app, m.id, 'invoice.payment_action_required'))
    .map((e) => e.payload)
    .filter((p) => p.data.object.id === invoiceId);

const authenticate = (url: string) =>
  request(url, {
    method: 'POST',
    rawBody: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
  });

  async function subscribed(amount: number) {
    const { plan } = await recurringPlan(m.test, {}, { amount });
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    // The checkout is the customer's authentication: its first debit is made whatever the amount.
    expect(subscription.status).toBe('active');
    return subscription;
  }

  async function renewalOf(subscriptionId: string) {
    return (await invoicesOf(m.test, subscriptionId)).find((i: any) => i.billing_reason === 'subscription_cycle');
  }

  it('a renewal above INR 15,000 waits for the customer: past_due, the page, then paid and active', async () => {
    // ₹16,000 + 18% GST: ₹18,880 a month, above the default limit.
    const sub = await subscribed(1_600_000);
    await h.clock.advance(m, after(sub.current_period_end));
    const pastDue = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(pastDue.status).toBe('past_due');
    const open = await renewalOf(sub.id);
    expect(open).toMatchObject({ status: 'open', amount_paid: 0, total: 1_888_000 });
    expect(open.hosted_authentication_url).toMatch(/\/authenticate\/[A-Za-z0-9_]+$/);
    expect(open.authentication_required_at).toBe(open.issued_at);
    const transitions = await ok(m.test.get(`/subscriptions/${sub.id}/events`));
    expect(transitions.at(-1)).toMatchObject({
      from_state: 'active',
      to_state: 'past_due',
      metadata_json: { retry_attempt: 0, gateway_decline_reason: 'authentication_required' },
    });
    const [action] = await actionsFor(m, open.id);
    expect(action.data.object).toMatchObject({
      id: open.id,
      number: open.number,
      status: 'open',
      amount_due: 1_888_000,
      hosted_authentication_url: open.hosted_authentication_url,
    });
    // No pre-debit notice for a retry: nothing above the limit is debited without the customer.
    const notices = (await outbox(h.app, m.id, 'invoice.upcoming')).filter((e) => e.payload.data.object.id === open.id);
    expect(notices).toEqual([]);

    const pageAnswer = await request(open.hosted_authentication_url);
    expect(pageAnswer.status).toBe(200);
    expect(pageAnswer.text).toContain('Authenticate and pay');
    expect(pageAnswer.text).toContain('₹18,880.00');
    expect((await authenticate(open.hosted_authentication_url)).status).toBe(200);

    const paid = await ok(m.test.get(`/invoices/${open.id}`));
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 1_888_000, amount_due: 0 });
    expect(paid.hosted_authentication_url).toBe(open.hosted_authentication_url); // kept: how it was paid
    const active = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(active).toMatchObject({ status: 'active', retry_attempt: 0 });
    expect((await trail(m.test, sub.id)).slice(-2)).toEqual([
      'active>past_due:subscription.payment_failed:webhook',
      'past_due>active:subscription.payment_succeeded:webhook',
    ]);
    // The page again: nothing more to pay.
    expect((await request(open.hosted_authentication_url)).text).toContain('authenticated already');
    // Beside the autopay figures: one debit asked to be authenticated, and authenticated.
    expect((await ok(m.test.get('/analytics/autopay'))).authentication).toEqual({ required: 1, completed: 1 });
  });

  it("the merchant's own limit: a renewal above it asks; a retry off-session asks again, announced to nobody", async () => {
    const r = await m.test.post('/merchant/billing-settings', { mandate_afa_limit: 50 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'mandate_afa_limit' });
    const settings = await ok(m.test.post('/merchant/billing-settings', { mandate_afa_limit: 50_000 }));
    expect(settings).toMatchObject({ object: 'billing_settings', max_retries: 3, mandate_afa_limit: 50_000 });
    try {
      // ₹499 + GST = ₹588.82: above a ₹500 limit.
      const sub = await subscribed(49_900);
      await h.clock.advance(m, after(sub.current_period_end));
      const open = await renewalOf(sub.id);
      expect(open).toMatchObject({ status: 'open', total: 58_882 });
      expect(await actionsFor(m, open.id)).toHaveLength(1);
      // The first retry, a day later: asked again, the merchant told again; still no debit.
      await h.clock.advance(m, after(open.issued_at, 24 * 3_600_000 + 5_000));
      const still = await ok(m.test.get(`/subscriptions/${sub.id}`));
      expect(still).toMatchObject({ status: 'past_due', retry_attempt: 1 });
      expect(await actionsFor(m, open.id)).toHaveLength(2);
      expect((await ok(m.test.get(`/invoices/${open.id}`))).status).toBe('open');
      expect(
        (await outbox(h.app, m.id, 'invoice.upcoming')).filter((e) => e.payload.data.object.id === open.id),
      ).toEqual([]);
      expect((await authenticate(open.hosted_authentication_url)).status).toBe(200);
      expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    } finally {
      await ok(m.test.post('/merchant/billing-settings', { mandate_afa_limit: null }));
    }
  });

  it('at or below the limit the renewal is debited as always', async () => {
    const sub = await subscribed(49_900);
    await h.clock.advance(m, after(sub.current_period_end));
    const renewal = await renewalOf(sub.id);
    expect(renewal).toMatchObject({
      status: 'paid',
      hosted_authentication_url: null,
      authentication_required_at: null,
    });
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
  });

  it('two authentications racing pay the invoice once', async () => {
    // ₹17,000 + GST = ₹20,060: an amount no other test here charges.
    const sub = await subscribed(1_700_000);
    await h.clock.advance(m, after(sub.current_period_end));
    const open = await renewalOf(sub.id);
    const answers = await Promise.all([
      authenticate(open.hosted_authentication_url),
      authenticate(open.hosted_authentication_url),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const paid = await ok(m.test.get(`/invoices/${open.id}`));
    expect(paid).toMatchObject({ status: 'paid', amount_paid: 2_006_000 });
    // At the gateway: the checkout's charge and one for the renewal.
    const [{ n }] = await h.app.orm.em.getConnection().execute<{ n: number }[]>(
      `select count(*)::int as n from sandbox_objects
       where provider = ? and type in ('payment_intent', 'payment') and (data->>'amount')::bigint = 2006000
         and data->>'status' in ('succeeded', 'captured')`,
      [provider],
    );
    expect(n).toBe(2);
    expect(
      (await trail(m.test, sub.id)).filter((t) => t === 'past_due>active:subscription.payment_succeeded:webhook'),
    ).toHaveLength(1);
  });
});

describe('stripe: a collection by the service above the limit', () => {
  const DAY = 24 * 3_600_000;
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, 'stripe');
    // ₹500: the limit subscriptions created from now on are registered with.
    await ok(m.test.post('/merchant/billing-settings', { mandate_afa_limit: 50_000 }));
  });

  it("a plan change's adjustment above it waits for the customer's authentication, then is paid; the subscription stays active", async () => {
    // ₹400 + GST = ₹472 a month, below the limit; the upgrade to ₹2,000 two thirds into the month costs more than ₹500.
    const { plan } = await recurringPlan(m.test, {}, { amount: 40_000 });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    await h.clock.advance(m, new Date(new Date(sub.current_period_start).getTime() + 10 * DAY));
    const up = await recurringPlan(m.test, { name: 'Monthly Max' }, { amount: 200_000 });
    const r = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: up.plan.id }));
    expect(r.invoice.amount_due).toBeGreaterThan(50_000);
    // Announced, held 24 hours, then asked of the mandate: the gateway makes no debit and asks the customer.
    await h.clock.advance(m, new Date(new Date(r.invoice.issued_at).getTime() + DAY + 60_000));
    const waiting = await ok(m.test.get(`/invoices/${r.invoice.id}`));
    expect(waiting).toMatchObject({ status: 'open', amount_paid: 0, payment_id: null });
    expect(waiting.hosted_authentication_url).toMatch(/\/authenticate\/in_[A-Za-z0-9]+$/);
    expect(waiting.authentication_required_at).not.toBeNull();
    const [action] = await actionsFor(m, waiting.id);
    expect(action.data.object).toMatchObject({
      id: waiting.id,
      status: 'open',
      amount_due: r.invoice.amount_due,
      hosted_authentication_url: waiting.hosted_authentication_url,
    });
    const [command] = (await ok(m.test.get(`/gateway-commands?subscription_id=${sub.id}`))).data.filter(
      (c: any) => c.action === 'collect_invoice',
    );
    expect(command).toMatchObject({ status: 'succeeded', invoice_id: waiting.id });
    // Nothing was debited at the gateway: its invoice is open, no payment succeeded for the amount.
    const debits = async () =>
      (
        await h.app.orm.em.getConnection().execute<{ n: number }[]>(
          `select count(*)::int as n from sandbox_objects where provider = 'stripe' and type = 'payment_intent'
             and (data->>'amount')::bigint = ? and data->>'status' = 'succeeded'`,
          [r.invoice.amount_due],
        )
      )[0].n;
    expect(await debits()).toBe(0);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');

    const page = await request(waiting.hosted_authentication_url);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Authenticate and pay');
    const answers = await Promise.all([
      authenticate(waiting.hosted_authentication_url),
      authenticate(waiting.hosted_authentication_url),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    const paid = await ok(m.test.get(`/invoices/${waiting.id}`));
    expect(paid).toMatchObject({ status: 'paid', amount_paid: r.invoice.amount_due, amount_due: 0 });
    expect(await ok(m.test.get(`/payments/${paid.payment_id}`))).toMatchObject({
      billing_reason: 'subscription_update',
      amount_total: r.invoice.amount_due,
      subscription_id: sub.id,
      status: 'succeeded',
    });
    expect(await debits()).toBe(1);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    expect((await ok(m.test.get('/analytics/autopay'))).authentication).toEqual({ required: 1, completed: 1 });
  });

  it('at or below the limit the adjustment is collected at once, as always', async () => {
    const { plan } = await recurringPlan(m.test, {}, { amount: 10_000 });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    await h.clock.advance(m, new Date(new Date(sub.current_period_start).getTime() + 20 * DAY));
    const up = await recurringPlan(m.test, { name: 'Monthly Bit More' }, { amount: 20_000 });
    const r = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: up.plan.id }));
    expect(r.invoice.amount_due).toBeLessThanOrEqual(50_000);
    await h.clock.advance(m, new Date(new Date(r.invoice.issued_at).getTime() + DAY + 60_000));
    expect(await ok(m.test.get(`/invoices/${r.invoice.id}`))).toMatchObject({
      status: 'paid',
      hosted_authentication_url: null,
      authentication_required_at: null,
    });
  });
});

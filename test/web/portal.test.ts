import { request, useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * The customer portal's page (web/src/portal) in headless Chromium on a phone-sized screen: the merchant's name, the
 * customer's subscription and documents, cancel at period end and undo, a plan change with its cost shown first, and a
 * portal link that cannot reach another customer's data.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

async function subscriber(m: Awaited<ReturnType<typeof h.merchant>>, email: string) {
  const customer = await ok(m.test.post('/customers', { email, name: 'Asha Rao' }), 201);
  const cat = await recurringPlan(m.test);
  const { subscription } = await authorise(
    m.test,
    await createSubscription(m.test, cat.plan.id, { customer_id: customer.id }),
  );
  return { customer, subscription, cat };
}

describe('customer portal page', () => {
  let m: Awaited<ReturnType<typeof h.merchant>>;
  let secretKey: string;
  beforeAll(async () => {
    m = await h.merchant({ name: 'Chai Club', gstin: '29AAGCB7383J1Z4', state_code: '29' });
    secretKey = (await connect(m.test, 'stripe')).credentials.secret_key;
  });

  async function openPortal(customerId: string) {
    const s = await ok(
      m.test.post('/portal/sessions', { customer_id: customerId, return_url: 'https://shop.example/account' }),
      201,
    );
    const context = await web.newContext();
    const page = await context.newPage();
    await page.setViewportSize({ width: 390, height: 844 });
    page.setDefaultTimeout(15_000);
    await page.goto(s.url);
    await page.getByTestId('portal-merchant').waitFor();
    return { page, session: s };
  }

  it("shows the merchant's name, cancels at period end and undoes it", async () => {
    const a = await subscriber(m, 'portal-a@example.com');
    const { page } = await openPortal(a.customer.id);
    expect(await page.getByTestId('portal-merchant').textContent()).toBe('Chai Club');
    await page
      .getByText(/^Invoice T?INV-/)
      .first()
      .waitFor();
    await screenshot(page, 'portal');

    await page.getByRole('button', { name: 'Cancel at period end' }).click();
    await page.getByRole('button', { name: 'Confirm cancellation' }).click();
    await page.getByTestId('cancels-at-period-end').waitFor();
    expect((await ok(m.test.get(`/subscriptions/${a.subscription.id}`))).cancel_at_period_end).toBe(true);
    await screenshot(page, 'portal-cancel-scheduled');

    await page.getByRole('button', { name: 'Keep subscription' }).click();
    await page.getByTestId('cancels-at-period-end').waitFor({ state: 'detached' });
    expect((await ok(m.test.get(`/subscriptions/${a.subscription.id}`))).cancel_at_period_end).toBe(false);
    await page.context().close();
  });

  it('changes plan with the cost shown before confirming', async () => {
    const a = await subscriber(m, 'portal-b@example.com');
    const plus = await ok(
      m.test.post(`/products/${a.cat.product.id}/plans`, { name: 'Monthly Plus', billing_frequency: 'monthly' }),
      201,
    );
    const price = await ok(
      m.test.post(`/plans/${plus.id}/prices`, { currency: 'INR', amount: 99900, is_default: true }),
      201,
    );
    const { page } = await openPortal(a.customer.id);
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByLabel(/Monthly Plus/).check();
    const shown = page.getByTestId('portal-proration');
    await shown.waitFor();
    expect(await shown.textContent()).toMatch(/You pay ₹[\d,]+\.\d\d now \(including ₹[\d,]+\.\d\d GST\)/);
    await screenshot(page, 'portal-change-plan');
    await page.getByRole('button', { name: 'Confirm change' }).click();
    await shown.waitFor({ state: 'detached' });
    expect((await ok(m.test.get(`/subscriptions/${a.subscription.id}`))).price_id).toBe(price.id);
    await page.context().close();
  });

  it('shows the next debit its pre-debit notice announced', async () => {
    const a = await subscriber(m, 'portal-next-debit@example.com');
    await h.clock.advance(m, new Date(new Date(a.subscription.current_period_end).getTime() - 47 * 3_600_000));
    const { page } = await openPortal(a.customer.id);
    const line = page.getByTestId('upcoming-debit');
    await line.waitFor();
    const g = await m.test.gql('query($id: ID!) { subscription(id: $id) { upcomingDebit { amountDue debitAt } } }', {
      id: a.subscription.id,
    });
    expect(g.data.subscription.upcomingDebit.debitAt).toBe(a.subscription.current_period_end);
    expect(await line.textContent()).toMatch(/^Next debit from your mandate: ₹[\d,]+\.\d\d on /);
    await page.context().close();
  });

  it('declines the announced debit after a confirmation: the subscription pauses and shows no next debit', async () => {
    const a = await subscriber(m, 'portal-decline@example.com');
    await h.clock.advance(m, new Date(new Date(a.subscription.current_period_end).getTime() - 47 * 3_600_000));
    const { page } = await openPortal(a.customer.id);
    await page.getByTestId('upcoming-debit').waitFor();
    await page.getByRole('button', { name: 'Decline this debit' }).click();
    await page.getByText('Your subscription pauses now, until the merchant resumes it.').waitFor();
    await screenshot(page, 'portal-decline-debit');
    await page.getByRole('button', { name: 'Decline the debit' }).click();
    const card = page.locator(`[data-subscription-id="${a.subscription.id}"]`);
    await card.locator('[data-status="PAUSED"]').waitFor();
    expect(await card.getByTestId('upcoming-debit').count()).toBe(0);
    expect(await card.getByRole('button', { name: 'Decline this debit' }).count()).toBe(0);
    expect((await ok(m.test.get(`/subscriptions/${a.subscription.id}`))).status).toBe('paused');
    await page.context().close();
  });

  it('asks the customer to approve a debit above the mandate limit, on the gateway page', async () => {
    const customer = await ok(m.test.post('/customers', { email: 'portal-approve@example.com' }), 201);
    const cat = await recurringPlan(m.test, {}, { amount: 1_600_000 });
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, cat.plan.id, { customer_id: customer.id }),
    );
    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 2000));
    const open = (await ok(m.test.get(`/invoices?subscription_id=${subscription.id}`))).data.find(
      (i: any) => i.status === 'open',
    );
    expect(open.hosted_authentication_url).toBeTruthy();
    const { page } = await openPortal(customer.id);
    const alert = page.getByTestId('authenticate-payment');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(
      `Your bank asks you to approve the debit of ₹18,880.00 (invoice ${open.number})`,
    );
    await screenshot(page, 'portal-approve-payment');
    await page.getByRole('link', { name: 'Approve the payment' }).click();
    await page.getByRole('button', { name: 'Authenticate and pay' }).click();
    await page.getByRole('heading', { name: 'Payment authenticated' }).waitFor();
    expect(await ok(m.test.get(`/subscriptions/${subscription.id}`))).toMatchObject({ status: 'active' });
    expect((await ok(m.test.get(`/invoices/${open.id}`))).status).toBe('paid');
    await page.context().close();
  });

  it('says when the mandate was revoked at the bank, beside the way to authorise a new one', async () => {
    const a = await subscriber(m, 'portal-revoked@example.com');
    const revoked = await request(
      `${h.app.app.sandboxUrl}/v1/test_helpers/sandbox/subscriptions/${a.subscription.provider_subscription_id}/revoke_mandate`,
      { method: 'POST', key: secretKey, rawBody: '', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    );
    expect(revoked.status).toBe(200);
    const { page } = await openPortal(a.customer.id);
    const alert = page.getByTestId('mandate-revoked');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('until you authorise a new mandate below');
    await page.getByRole('button', { name: 'Authorise a new mandate' }).waitFor();
    await page.context().close();
  });

  it('authorises a new mandate on the gateway page, then returns to the merchant', async () => {
    const a = await subscriber(m, 'portal-new-mandate@example.com');
    const { page } = await openPortal(a.customer.id);
    // The merchant's return_url is not served here: the test only needs to see the browser sent there.
    await page.route('https://shop.example/**', (route) => route.fulfill({ status: 200, body: 'Back at the shop' }));
    await page.getByRole('button', { name: 'Authorise a new mandate' }).click();
    await page.getByRole('heading', { name: 'Authorise a new payment method' }).waitFor();
    await screenshot(page, 'portal-new-mandate');
    await page.getByRole('button', { name: 'Authorise the new payment method' }).click();
    await page.waitForURL('https://shop.example/account');
    const trail = await ok(m.test.get(`/subscriptions/${a.subscription.id}/events`));
    expect(trail.at(-1)).toMatchObject({ event_type: 'subscription.mandate_updated', triggered_by: 'webhook' });
    await page.context().close();
  });

  it("cannot reach another customer's data with its link; a broken link says it has expired", async () => {
    const a = await subscriber(m, 'portal-c@example.com');
    const b = await subscriber(m, 'portal-d@example.com');
    const { page, session } = await openPortal(a.customer.id);
    const token = decodeURIComponent(new URL(session.url).hash.slice(1));
    // From the page, with its own token: customer B's subscription is not found, and nothing changes.
    const answer: any = await page.evaluate(
      async ([t, id]) => {
        const r = await fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` },
          body: JSON.stringify({ query: `mutation { portalCancelAtPeriodEnd(subscriptionId: "${id}") { id } }` }),
        });
        return r.json();
      },
      [token, b.subscription.id],
    );
    expect(answer.errors[0].extensions.code).toBe('resource_not_found');
    expect((await ok(m.test.get(`/subscriptions/${b.subscription.id}`))).cancel_at_period_end).toBe(false);

    const broken = await page.context().newPage();
    await broken.goto(`${h.app.url}/portal#pt_not-a-session`);
    await broken.getByText('This link has expired').waitFor();
    await page.context().close();
  });
});

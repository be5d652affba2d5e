import { useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { formatMoney } from '../../src/money';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * The dashboard's subscriptions (web/src/dashboard/pages/subscriptions.tsx, subscription-detail.tsx): a status
 * changed through REST reaches the open list live; the detail page's timeline and invoices; a plan change whose
 * proration is shown before it is confirmed, equal to what the API previews.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

describe('dashboard subscriptions', () => {
  let m: Awaited<ReturnType<typeof h.merchant>>;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29' });
    await connect(m.test, 'stripe');
  });

  it('changes a row live when the subscription is paused through REST', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const page = await web.dashboard(m.keys.test, '/subscriptions');
    const badge = page.locator(`tr[data-subscription-id="${subscription.id}"] [data-status]`);
    await badge.waitFor();
    expect(await badge.getAttribute('data-status')).toBe('ACTIVE');
    await screenshot(page, 'dashboard-subscriptions');

    await ok(m.test.post(`/subscriptions/${subscription.id}/pause`, {}));
    await page.locator(`tr[data-subscription-id="${subscription.id}"] [data-status="PAUSED"]`).waitFor();
    await page.context().close();
  });

  it('shows the timeline and changes plan with the proration shown before confirming', async () => {
    const { product, plan } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 499000 });
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    await h.clock.advance(m, 90 * 86_400);
    const bigger = await ok(
      m.test.post(`/products/${product.id}/plans`, { name: 'Yearly Plus', billing_frequency: 'yearly' }),
      201,
    );
    await ok(m.test.post(`/plans/${bigger.id}/prices`, { currency: 'INR', amount: 999000, is_default: true }), 201);

    const page = await web.dashboard(m.keys.test, `/subscriptions/${subscription.id}`);
    await page.getByTestId('timeline-event').first().waitFor();
    const events = await page.getByTestId('timeline-event').allTextContents();
    expect(events.join(' ')).toContain('subscription.activated');

    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByLabel(/Yearly Plus/).check();
    await page.getByTestId('proration-total').waitFor();
    const preview = await ok(
      m.test.post(`/subscriptions/${subscription.id}/change-plan/preview`, { plan_id: bigger.id }),
    );
    expect(await page.getByTestId('proration-credit').textContent()).toBe(
      formatMoney(preview.proration.credit_amount, 'INR'),
    );
    expect(await page.getByTestId('proration-debit').textContent()).toBe(
      formatMoney(preview.proration.debit_amount, 'INR'),
    );
    expect(await page.getByTestId('proration-total').textContent()).toBe(formatMoney(preview.total, 'INR'));
    await screenshot(page, 'dashboard-change-plan');

    await page.getByRole('button', { name: 'Confirm plan change' }).click();
    await page.getByTestId('proration-preview').waitFor({ state: 'detached' });
    const after = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(after.plan_id).toBe(bigger.id);
    // The adjustment invoice the change issued is listed.
    await page.locator('tr[data-invoice-type="INVOICE"]').nth(1).waitFor();
    await page.getByText('plan_changed', { exact: false }).first().waitFor();
    await screenshot(page, 'dashboard-subscription-detail');
    await page.context().close();
  });

  it('pauses and resumes from the detail page', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const page = await web.dashboard(m.keys.test, `/subscriptions/${subscription.id}`);
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('paused');
    await page.getByRole('button', { name: 'Resume' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('active');
    await page.context().close();
  });
});

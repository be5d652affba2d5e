import { useHarness } from '../harness';
import { checkoutForm, submitCheckout } from '../harness/checkout';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { formatMoney } from '../../web/src/lib/money';

/**
 * The dashboard overview (web/src/dashboard/pages/overview.tsx) with real billing data: every section renders, the
 * figures are the analytics API's (ARR as GET /v1/analytics/mrr says), and a quick ratio with nothing lost reads "—".
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

it('shows MRR, ARR, churn, quick ratio, LTV, the movements chart, cohorts and autopay health from the API', async () => {
  const m = await h.merchant();
  await connect(m.test, 'stripe');
  const { plan } = await recurringPlan(m.test, {}, { amount: 12345678 });
  // Two mandates authorised (a card, HDFC by its BIN; UPI, ICICI by the VPA handle) and one declined card (ICICI).
  for (const form of [
    checkoutForm({ method: 'card' }),
    checkoutForm({ method: 'upi', vpa: 'asha@okicici' }),
    checkoutForm({ method: 'card', card_number: '4000000000000002' }),
  ]) {
    const sub = await createSubscription(m.test, plan.id);
    expect((await submitCheckout(sub.checkout_url, form)).status).toBe(303);
  }
  const mrr = await ok(m.test.get('/analytics/mrr'));
  expect(mrr.arr).toBe(12 * 24691356);
  const quick = await ok(m.test.get('/analytics/quick-ratio'));
  expect(quick.quick_ratio).toBeNull();

  const page = await web.dashboard(m.keys.test);
  const text = async (id: string) => (await page.getByTestId(id).textContent())?.trim();
  await page.getByTestId('overview-mrr').waitFor();
  expect(await text('overview-mrr')).toBe('₹2,46,913.56'); // formatted exactly as before
  expect(await text('overview-arr')).toBe(formatMoney(mrr.arr, 'INR'));
  expect(await text('overview-active')).toBe('2');
  expect(await text('overview-logo-churn')).toBe('0.0%');
  expect(await text('overview-revenue-churn')).toBe('0.0%');
  // Nothing lost: the ratio is undefined, shown as "—" and never called healthy.
  expect(await text('overview-quick-ratio')).toBe('—');
  expect(await page.getByText('healthy', { exact: true }).count()).toBe(0);
  expect(await text('overview-ltv')).toBe('—');

  // The sections loaded after the first screen.
  const movements = page.getByTestId('overview-movements');
  await movements.locator('.recharts-bar-rectangle').first().waitFor();
  const labels = await movements.locator('svg text').allTextContents();
  expect(labels.some((t) => /^₹\d+(\.\d)?L$/.test(t))).toBe(true); // compact lakh labels on the axes, not clipped

  const cohorts = page.getByRole('table', { name: 'Cohort retention' });
  await cohorts.waitFor();
  expect(await cohorts.locator('[data-rate="1"]').count()).toBeGreaterThanOrEqual(1);

  const byMethod = page.getByRole('table', { name: 'Autopay by method' });
  await byMethod.waitFor();
  expect(await byMethod.getByRole('row', { name: /UPI autopay 1 1 100.0%/ }).count()).toBe(1);
  expect(await byMethod.getByRole('row', { name: /Card 2 1 50.0%/ }).count()).toBe(1);
  const byBank = page.getByRole('table', { name: 'Autopay by bank' });
  expect(await byBank.getByRole('row', { name: /ICICI 2 1 50.0%/ }).count()).toBe(1);
  expect(await byBank.getByRole('row', { name: /HDFC 1 1 100.0%/ }).count()).toBe(1);
  await page.getByText('Failures: card declined (1)').waitFor();

  await screenshot(page, 'dashboard-overview-full');
  await page.context().close();
});

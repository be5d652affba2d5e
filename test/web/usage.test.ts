import { useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { authorise, createSubscription } from '../subscriptions/helpers';
import { meteredPlan, report } from '../usage/helpers';

/** The Usage page (web/src/dashboard/pages/usage.tsx): a subscription chosen from the list, its usage priced. */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

describe('dashboard usage', () => {
  it('shows quantities and amounts per period at the plan rate, exactly as summed', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await meteredPlan(m);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    for (const quantity of [1000, 234.4, 0.1]) await report(m.test, subscription.id, { quantity });
    await report(m.test, subscription.id, { event_type: 'gpu_seconds', quantity: 2, unit: 'seconds' });

    const page = await web.dashboard(m.keys.test, '/usage');
    await page.getByRole('button', { name: `Usage of ${subscription.id}` }).click();
    await page.getByTestId('usage-subscription').waitFor();
    const rows = page.getByTestId('usage-row');
    await rows.first().waitFor();
    await page.getByTestId('usage-amount').filter({ hasText: '₹' }).nth(1).waitFor();
    const text = await rows.allTextContents();
    // 1234.5 calls x 0.25 paise = 308.625 -> 309 paise; 2 s x 250.5 paise = 501 paise.
    expect(text[0]).toContain('api_calls');
    expect(text[0]).toContain('1234.5 calls');
    expect(text[0]).toContain('₹3.09');
    expect(text[1]).toContain('2 seconds');
    expect(text[1]).toContain('₹5.01');
    await screenshot(page, 'dashboard-usage');
    await page.context().close();
  });
});

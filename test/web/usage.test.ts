import { useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { authorise, createSubscription } from '../subscriptions/helpers';
import { meteredPlan, report } from '../usage/helpers';
import { rateInMajorUnits, usageAmount } from '../../web/src/dashboard/components/ops/usage-amount';

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

describe('usage amounts on the page', () => {
  it('multiplies exact decimals and rounds half away from zero once, as the usage close does', () => {
    expect(usageAmount('1234.5', '0.25')).toBe(309); // 308.625
    expect(usageAmount('1', '0.5')).toBe(1);
    expect(usageAmount('0.1', '250.5')).toBe(25); // 25.05
    expect(usageAmount('1000000000000', '0.000000000001')).toBe(1);
    expect(usageAmount('3', '0')).toBe(0);
  });

  it('shows a rate in major units with every decimal it has', () => {
    expect(rateInMajorUnits('0.25', 'INR')).toBe('₹0.0025');
    expect(rateInMajorUnits('250.5', 'INR')).toBe('₹2.505');
    expect(rateInMajorUnits('100', 'INR')).toBe('₹1');
    expect(rateInMajorUnits('5', 'JPY')).toBe('¥5');
  });
});

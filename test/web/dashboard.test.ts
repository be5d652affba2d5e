import { useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { screenshot, signIn, useWebBrowser } from '../harness/dashboard';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * The dashboard's frame (web/src/dashboard): the key form, the navigation, sign out, the demo key, and the overview's
 * MRR as GET /v1/analytics/mrr reports it, formatted for its currency.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(90_000);

describe('dashboard frame', () => {
  it('asks for the key in a password field labelled "API key", keeps it for the session and signs out', async () => {
    const m = await h.merchant();
    const context = await web.newContext();
    const page = await context.newPage();
    await page.goto(`${h.app.url}/dashboard`);
    const field = page.getByLabel('API key');
    expect(await field.getAttribute('type')).toBe('password');
    expect(await field.inputValue()).toBe(''); // no demo key outside the demo setting

    await field.fill('not-a-key');
    await page.getByRole('button', { name: 'Open dashboard' }).click();
    await page.getByText('A secret key starts with sk_test_ or sk_live_.').waitFor();

    await signIn(page, m.keys.test);
    for (const name of ['Overview', 'Subscriptions', 'Customers', 'Invoices', 'Webhooks'])
      await page.getByRole('navigation').getByRole('link', { name, exact: true }).waitFor();

    await page.reload(); // kept for the browser session
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.reload(); // and forgotten on sign out
    await page.getByLabel('API key').waitFor();
    await context.close();
  });

  it('refuses a wrong key in words and asks again', async () => {
    const context = await web.newContext();
    const page = await context.newPage();
    await page.goto(`${h.app.url}/dashboard`);
    await page.getByLabel('API key').fill('sk_test_nope');
    await page.getByRole('button', { name: 'Open dashboard' }).click();
    await page.getByText('That key was refused').waitFor();
    await context.close();
  });

  it('shows the overview MRR as GET /v1/analytics/mrr says, in rupees with Indian grouping', async () => {
    const m = await h.merchant();
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test, {}, { amount: 12345678 });
    for (let i = 0; i < 2; i++) await authorise(m.test, await createSubscription(m.test, plan.id));
    const mrr = await ok(m.test.get('/analytics/mrr'));
    expect(mrr.mrr).toBe(24691356);

    const page = await web.dashboard(m.keys.test);
    const shown = page.getByTestId('overview-mrr');
    await shown.waitFor();
    expect(await shown.textContent()).toBe('₹2,46,913.56');
    await screenshot(page, 'dashboard-overview');
    await page.context().close();
  });

  it('pre-fills the demo merchant test key in the demo setting', async () => {
    const m = await h.merchant();
    h.app.app.ide.demoKey = m.keys.test;
    try {
      const context = await web.newContext();
      const page = await context.newPage();
      await page.goto(`${h.app.url}/dashboard`);
      expect(await page.getByLabel('API key').inputValue()).toBe(m.keys.test);
      await context.close();
    } finally {
      h.app.app.ide.demoKey = null;
    }
  });
});

import { useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';

/**
 * The Developers page (web/src/dashboard/pages/developers.tsx): the test clock advanced a day at a time with its
 * progress, and a key roll after which the dashboard works on the new key while the old one stops after its grace.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

const DAY = 86_400_000;
const merchantQuery = '{ merchant { id } }';

describe('dashboard developers', () => {
  it('advances the test clock 3 days, a day per step, and shows where it got', async () => {
    const m = await h.merchant();
    const before = await h.clock.now(m);
    const page = await web.dashboard(m.keys.test, '/developers');
    await page.getByTestId('test-clock-now').waitFor();

    await page.getByLabel('Advance by').fill('3');
    await page.getByRole('button', { name: 'Advance', exact: true }).click();
    await page.getByText('day 3 of 3 · done').waitFor();

    const after = await h.clock.now(m);
    // The clock runs on with the wall clock between reads: 3 days and the seconds the test took.
    expect(after.getTime() - before.getTime()).toBeGreaterThanOrEqual(3 * DAY);
    expect(after.getTime() - before.getTime()).toBeLessThan(3 * DAY + 60_000);
    const shown = new Date((await page.getByTestId('test-clock-now').getAttribute('data-at'))!);
    expect(Math.abs(after.getTime() - shown.getTime())).toBeLessThan(60_000);
    const gql = await h.graphql(m.keys.test, '{ testClock { now advanceTarget } }');
    expect(gql.body.data.testClock.advanceTarget).toBeNull();
    await screenshot(page, 'dashboard-developers');
    await page.context().close();
  });

  it('rolls the key: the dashboard goes on with the new key, the old one is refused after its grace', async () => {
    const m = await h.merchant();
    const old = m.keys.test;
    const page = await web.dashboard(old, '/developers');
    await page.getByLabel('Grace period (seconds)').fill('3');
    await page.getByRole('button', { name: 'Roll API key' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('The current key stops working after 3 seconds').waitFor();
    await dialog.getByRole('button', { name: 'Roll key now' }).click();
    const field = page.getByRole('textbox', { name: 'New secret key' });
    await field.waitFor();
    const fresh = await field.inputValue();
    expect(fresh).toMatch(/^sk_test_/);
    expect(fresh).not.toBe(old);
    await page.getByRole('button', { name: 'Continue with the new key' }).click();

    // The old key works through its grace, then is refused; the new one works.
    expect((await h.graphql(old, merchantQuery)).body.data?.merchant.id).toBe(m.id);
    await new Promise((r) => setTimeout(r, 3500));
    const refused = await h.graphql(old, merchantQuery);
    expect(refused.body.data?.merchant).toBeFalsy();
    expect((await h.graphql(fresh, merchantQuery)).body.data.merchant.id).toBe(m.id);

    // The reloaded dashboard uses the new key, also after the grace: no key form, the page's data loads.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByTestId('test-clock-now').waitFor();
    expect(await page.getByLabel('API key').count()).toBe(0);
    const stored: string | null = await page.evaluate("sessionStorage.getItem('cadence.dashboard.keys')");
    expect(JSON.parse(stored!)).toMatchObject({ mode: 'test', test: fresh });
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor();
    await page.context().close();
  });

  it('says the test clock exists only in test mode when live', async () => {
    const m = await h.merchant();
    const page = await web.dashboard(m.keys.live, '/developers');
    await page.getByText('The test clock exists only in test mode').waitFor();
    expect(await page.getByRole('button', { name: 'Advance', exact: true }).count()).toBe(0);
    await page.context().close();
  });
});

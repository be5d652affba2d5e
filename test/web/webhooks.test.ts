import { eventually, useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';

/**
 * The Webhooks page (web/src/dashboard/pages/webhooks.tsx): an endpoint made from the page on a real receiver, a
 * test event sent from the page and its delivery with the attempt log, a retry, and errors in words.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

describe('dashboard webhooks', () => {
  it('creates an endpoint, sends a test event, shows its attempts and retries it', async () => {
    const m = await h.merchant();
    const rx = await h.receiver();
    // The first request fails (500), so there is something to retry.
    rx.respond = (_r, index) => (index === 0 ? 500 : 200);
    const page = await web.dashboard(m.keys.test, '/webhooks');

    // An address that is no URL is refused in words, naming the field.
    await page.getByLabel('Endpoint URL').fill('not a url');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The endpoint was not created' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('(field: url)');

    await page.getByLabel('Endpoint URL').fill(`${rx.url}/hooks`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = page.getByLabel('Signing secret');
    await secret.waitFor();
    expect(await secret.inputValue()).toMatch(/^whsec_/);
    await page.getByRole('table', { name: 'Webhook endpoints' }).getByText(`${rx.url}/hooks`).waitFor();
    const [endpoint] = (await m.test.get('/webhooks/endpoints')).body.data;
    expect(endpoint).toMatchObject({ url: `${rx.url}/hooks`, enabled: true, enabled_events: ['*'] });

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page
      .getByTestId('test-event-result')
      .getByText(/Sent payment\.succeeded .* to 1 endpoint/)
      .waitFor();
    const [first] = await rx.waitFor(1);
    expect(first.path).toBe('/hooks');
    expect(JSON.parse(first.body)).toMatchObject({ type: 'payment.succeeded', livemode: false });

    // The failed attempt, in the log with its status code and time.
    const row = page.getByTestId('webhook-delivery').first();
    await row.getByText('HTTP 500').waitFor();
    await row.getByRole('button', { name: 'Show attempts' }).click();
    const attempts = page.getByTestId('webhook-attempt');
    await attempts.first().waitFor();
    expect(await attempts.first().textContent()).toMatch(/^1.*500.*\d+ ms/);

    await row.getByRole('button', { name: 'Retry' }).click();
    await rx.waitFor(2);
    await row.locator('[data-status="SUCCEEDED"]').waitFor();
    await page.getByTestId('webhook-attempt').filter({ hasText: '200' }).first().waitFor();
    const [d] = (await m.test.get(`/webhooks/deliveries?endpoint_id=${endpoint.id}`)).body.data;
    expect(d.status).toBe('succeeded');
    expect(d.attempt_log.map((a: { response_status: number }) => a.response_status)).toEqual(
      expect.arrayContaining([500, 200]),
    );
    expect(await row.getByRole('cell').nth(4).textContent()).toBe(String(d.attempts));
    await screenshot(page, 'dashboard-webhooks');

    // Disable from the page, then delete after confirming.
    await page.getByRole('switch', { name: `Enabled: ${rx.url}/hooks` }).click({ force: true });
    await eventually(
      async () => (await m.test.get(`/webhooks/endpoints/${endpoint.id}`)).body.enabled === false,
      10_000,
      'the endpoint disabled',
    );
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No endpoints yet.').waitFor();
    expect((await m.test.get(`/webhooks/endpoints/${endpoint.id}`)).status).toBe(404);
    await page.context().close();
  });
});

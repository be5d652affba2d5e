import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, Browser } from 'playwright-core';
import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS } from '../payments/helpers';
import { createSubscription, ok, recurringPlan, trail } from './helpers';

/**
 * A real browser (Debian's chromium, driven by playwright-core) opens a subscription's hosted mandate checkout,
 * authorises it, and lands on the merchant's page, which shows the subscription active as the service reports it.
 * Skipped, with a warning, where Chromium is not installed (as test/payments/browser.test.ts).
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium) {
  // eslint-disable-next-line no-console
  console.warn(`subscription browser tests skipped: ${CHROMIUM} does not exist (apt-get install -y chromium)`);
}
const describeBrowser = haveChromium ? describe : describe.skip;

describeBrowser('subscription mandate checkout in headless Chromium', () => {
  const h = useHarness();
  let m: TestMerchant;
  let browser: Browser;
  let shop: http.Server;
  let shopUrl: string;

  beforeAll(async () => {
    m = await h.merchant();
    shop = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://shop');
      const id = url.searchParams.get('sub') ?? '';
      const r = await m.test.get(`/subscriptions/${encodeURIComponent(id)}`);
      const status = r.status === 200 ? r.body.status : `error ${r.status}`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${url.pathname === '/welcome' ? 'Welcome' : 'Pricing'}</title>
<p>Subscription <span id="sub">${id}</span> <strong id="status">${status}</strong></p>`);
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
    shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);

  h.cleanup(async () => {
    await browser?.close();
    await new Promise((r) => shop?.close(r));
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    beforeAll(async () => {
      await connect(m.test, provider);
    });

    it('authorises the mandate and lands on the success URL with the subscription active', async () => {
      const { plan } = await recurringPlan(m.test, {}, { amount: 129900 });
      const sub = await createSubscription(m.test, plan.id, {
        provider,
        success_url: `${shopUrl}/welcome?sub={SUBSCRIPTION_ID}`,
        cancel_url: `${shopUrl}/pricing?sub={SUBSCRIPTION_ID}`,
      });
      const page = await browser.newPage();
      try {
        await page.goto(sub.checkout_url);
        await page.getByText('Authorise subscription').first().waitFor();
        await page.getByRole('button', { name: /Authorise/ }).click();
        await page.waitForURL(`${shopUrl}/welcome**`);
        expect(await page.textContent('#status')).toBe('active');
        expect(await page.textContent('#sub')).toBe(sub.id);
      } finally {
        await page.close();
      }
      const active = await ok(m.test.get(`/subscriptions/${sub.id}`));
      expect(active).toMatchObject({ status: 'active', cycles_completed: 1 });
      expect(await trail(m.test, sub.id)).toEqual(['none>created:subscription.created:api', 'created>active:subscription.activated:webhook']);
    });

    it('cancelling the checkout lands on the cancel URL with the subscription cancelled', async () => {
      const { plan } = await recurringPlan(m.test);
      const sub = await createSubscription(m.test, plan.id, {
        provider,
        success_url: `${shopUrl}/welcome?sub={SUBSCRIPTION_ID}`,
        cancel_url: `${shopUrl}/pricing?sub={SUBSCRIPTION_ID}`,
      });
      const page = await browser.newPage();
      try {
        await page.goto(sub.checkout_url);
        await page.check('input[name="outcome"][value="cancel"]');
        await page.getByRole('button', { name: /Authorise/ }).click();
        await page.waitForURL(`${shopUrl}/pricing**`);
        expect(await page.textContent('#status')).toBe('cancelled');
      } finally {
        await page.close();
      }
    });
  });
});

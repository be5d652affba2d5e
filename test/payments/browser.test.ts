import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, Browser } from 'playwright-core';
import { TestMerchant, useHarness } from '../harness';
import { connect, createPayment, PROVIDERS } from './helpers';

/**
 * A real browser (Debian's chromium, driven by playwright-core) opens the hosted checkout page, pays, and lands
 * on the merchant's success page, which shows the payment's status as the service reports it.
 */

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = fs.existsSync(CHROMIUM);
if (!haveChromium) {
  // eslint-disable-next-line no-console
  console.warn(`browser tests skipped: ${CHROMIUM} does not exist (apt-get install -y chromium)`);
}
const describeBrowser = haveChromium ? describe : describe.skip;

describeBrowser('checkout in headless Chromium', () => {
  const h = useHarness();
  let m: TestMerchant;
  let browser: Browser;
  let shop: http.Server;
  let shopUrl: string;

  beforeAll(async () => {
    m = await h.merchant();
    // The merchant's own site: its pages read the payment from the service and show its status.
    shop = http.createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://shop');
      const id = url.searchParams.get('payment') ?? '';
      const r = await m.test.get(`/payments/${encodeURIComponent(id)}`);
      const status = r.status === 200 ? r.body.status : `error ${r.status}`;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${url.pathname === '/thanks' ? 'Thank you' : 'Cart'}</title>
<h1>Order</h1><p>Payment <span id="payment">${id}</span> <strong id="status">${status}</strong></p>
<p id="session">${url.searchParams.get('session') ?? ''}</p>`);
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

    const urls = () => ({
      success_url: `${shopUrl}/thanks?payment={PAYMENT_ID}&session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${shopUrl}/cart?payment={PAYMENT_ID}`,
      provider,
    });

    it('pays and lands on the success URL with the payment shown succeeded', async () => {
      const p = await createPayment(m.test, { ...urls(), amount: 129900 });
      const page = await browser.newPage();
      try {
        await page.goto(p.checkout_url);
        await page.getByText('INR 1299.00').first().waitFor();
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shopUrl}/thanks**`);
        expect(await page.textContent('#status')).toBe('succeeded');
        expect(await page.textContent('#payment')).toBe(p.id);
        expect(await page.textContent('#session')).toBe(p.checkout_session_id);
      } finally {
        await page.close();
      }
      expect((await m.test.get(`/payments/${p.id}`)).body.status).toBe('succeeded');
    });

    it('a declined card lands on the cancel URL with the payment shown failed', async () => {
      const p = await createPayment(m.test, urls());
      const page = await browser.newPage();
      try {
        await page.goto(p.checkout_url);
        await page.fill('input[name="card_number"]', '4000000000000002');
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shopUrl}/cart**`);
        expect(await page.textContent('#status')).toBe('failed');
      } finally {
        await page.close();
      }
    });

    it('cancelling lands on the cancel URL with the payment shown expired', async () => {
      const p = await createPayment(m.test, urls());
      const page = await browser.newPage();
      try {
        await page.goto(p.checkout_url);
        await page.check('input[name="outcome"][value="cancel"]');
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shopUrl}/cart**`);
        expect(await page.textContent('#status')).toBe('expired');
        // Back on the checkout page: it is closed now.
        await page.goto(p.checkout_url);
        await page.getByText('This checkout is no longer open.').waitFor();
      } finally {
        await page.close();
      }
    });
  });
});

import { TestMerchant, useHarness } from '../harness';
import { describeBrowser, useBrowserShop } from '../harness/browser';
import { connect, createPayment, PROVIDERS } from './helpers';

/**
 * A real browser (Debian's chromium, driven by playwright-core) opens the hosted checkout page, pays, and lands
 * on the merchant's success page, which shows the payment's status as the service reports it.
 */

describeBrowser('checkout in headless Chromium', () => {
  const h = useHarness();
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
  });
  // The merchant's own site: its pages read the payment from the service and show its status.
  const shop = useBrowserShop(h, async (url) => {
    const id = url.searchParams.get('payment') ?? '';
    // Only a page naming one asks (the browser also asks for /favicon.ico).
    const r = id ? await m.test.get(`/payments/${encodeURIComponent(id)}`) : null;
    const status = !r ? 'none' : r.status === 200 ? r.body.status : `error ${r.status}`;
    return `<!doctype html><title>${url.pathname === '/thanks' ? 'Thank you' : 'Cart'}</title>
<h1>Order</h1><p>Payment <span id="payment">${id}</span> <strong id="status">${status}</strong></p>
<p id="session">${url.searchParams.get('session') ?? ''}</p>`;
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    beforeAll(async () => {
      await connect(m.test, provider);
    });

    const urls = () => ({
      success_url: `${shop.url}/thanks?payment={PAYMENT_ID}&session={CHECKOUT_SESSION_ID}`,
      cancel_url: `${shop.url}/cart?payment={PAYMENT_ID}`,
      provider,
    });

    it('pays and lands on the success URL with the payment shown succeeded', async () => {
      const p = await createPayment(m.test, { ...urls(), amount: 129900 });
      await shop.withPage(async (page) => {
        await page.goto(p.checkout_url);
        await page.getByText('₹1,299.00').first().waitFor();
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shop.url}/thanks**`);
        expect(await page.textContent('#status')).toBe('succeeded');
        expect(await page.textContent('#payment')).toBe(p.id);
        expect(await page.textContent('#session')).toBe(p.checkout_session_id);
      });
      expect((await m.test.get(`/payments/${p.id}`)).body.status).toBe('succeeded');
    });

    it('a declined card lands on the cancel URL with the payment shown failed', async () => {
      const p = await createPayment(m.test, urls());
      await shop.withPage(async (page) => {
        await page.goto(p.checkout_url);
        await page.fill('input[name="card_number"]', '4000000000000002');
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shop.url}/cart**`);
        expect(await page.textContent('#status')).toBe('failed');
      });
    });

    it('cancelling lands on the cancel URL with the payment shown expired', async () => {
      const p = await createPayment(m.test, urls());
      await shop.withPage(async (page) => {
        await page.goto(p.checkout_url);
        await page.check('input[name="outcome"][value="cancel"]');
        await page.getByRole('button', { name: /Pay/ }).click();
        await page.waitForURL(`${shop.url}/cart**`);
        expect(await page.textContent('#status')).toBe('expired');
        // Back on the checkout page: it is closed now.
        await page.goto(p.checkout_url);
        await page.getByText('This checkout is no longer open.').waitFor();
      });
    });
  });
});

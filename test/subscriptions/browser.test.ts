import { TestMerchant, useHarness } from '../harness';
import { describeBrowser, useBrowserShop } from '../harness/browser';
import { connect, PROVIDERS } from '../payments/helpers';
import { createSubscription, ok, recurringPlan, trail } from './helpers';

/**
 * A real browser (Debian's chromium, driven by playwright-core) opens a subscription's hosted mandate checkout,
 * authorises it, and lands on the merchant's page, which shows the subscription active as the service reports it.
 * Skipped, with a warning, where Chromium is not installed (test/harness/browser.ts).
 */

describeBrowser('subscription mandate checkout in headless Chromium', () => {
  const h = useHarness();
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
  });
  const shop = useBrowserShop(h, async (url) => {
    const id = url.searchParams.get('sub') ?? '';
    // Only a page naming one asks (the browser also asks for /favicon.ico).
    const r = id ? await m.test.get(`/subscriptions/${encodeURIComponent(id)}`) : null;
    const status = !r ? 'none' : r.status === 200 ? r.body.status : `error ${r.status}`;
    return `<!doctype html><title>${url.pathname === '/welcome' ? 'Welcome' : 'Pricing'}</title>
<p>Subscription <span id="sub">${id}</span> <strong id="status">${status}</strong></p>`;
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    beforeAll(async () => {
      await connect(m.test, provider);
    });

    const create = async (price: Record<string, unknown> = {}) => {
      const { plan } = await recurringPlan(m.test, {}, price);
      return createSubscription(m.test, plan.id, {
        provider,
        success_url: `${shop.url}/welcome?sub={SUBSCRIPTION_ID}`,
        cancel_url: `${shop.url}/pricing?sub={SUBSCRIPTION_ID}`,
      });
    };

    it('authorises the mandate and lands on the success URL with the subscription active', async () => {
      const sub = await create({ amount: 129900 });
      await shop.withPage(async (page) => {
        await page.goto(sub.checkout_url);
        await page.getByText('Authorise subscription').first().waitFor();
        await page.getByRole('button', { name: /Authorise/ }).click();
        await page.waitForURL(`${shop.url}/welcome**`);
        expect(await page.textContent('#status')).toBe('active');
        expect(await page.textContent('#sub')).toBe(sub.id);
      });
      const active = await ok(m.test.get(`/subscriptions/${sub.id}`));
      expect(active).toMatchObject({ status: 'active', cycles_completed: 1 });
      expect(await trail(m.test, sub.id)).toEqual([
        'none>created:subscription.created:api',
        'created>active:subscription.activated:webhook',
      ]);
    });

    it('cancelling the checkout lands on the cancel URL with the subscription cancelled', async () => {
      const sub = await create();
      await shop.withPage(async (page) => {
        await page.goto(sub.checkout_url);
        await page.check('input[name="outcome"][value="cancel"]');
        await page.getByRole('button', { name: /Authorise/ }).click();
        await page.waitForURL(`${shop.url}/pricing**`);
        expect(await page.textContent('#status')).toBe('cancelled');
      });
    });
  });
});

import fs from 'node:fs';
import { useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect, createPayment, pay } from '../payments/helpers';
import { formatMoney } from '../../src/money';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * The dashboard's customers, payments, invoices, catalog and coupons pages in headless Chromium: lifetime revenue, a
 * refund from the page, an invoice PDF, catalog editing in exact subunits, a coupon (webhooks, developers and usage:
 * webhooks.test.ts, developers.test.ts, usage.test.ts).
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

describe('dashboard pages', () => {
  let m: Awaited<ReturnType<typeof h.merchant>>;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29' });
    await connect(m.test, 'stripe');
  });

  it('lists customers with their lifetime revenue, and a customer page', async () => {
    const { plan } = await recurringPlan(m.test, {}, { amount: 12345600 });
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const customer = await ok(m.test.get(`/customers/${subscription.customer_id}`));
    const revenue = customer.lifetime_revenue[0];
    expect(revenue.amount).toBeGreaterThan(12345600); // GST included
    const page = await web.dashboard(m.keys.test, '/customers');
    const cell = page.locator(`tr[data-customer-id="${customer.id}"] [data-testid="lifetime-revenue"]`);
    await cell.waitFor();
    expect(await cell.textContent()).toBe(formatMoney(revenue.amount, 'INR'));
    await page.locator(`tr[data-customer-id="${customer.id}"] a`).click();
    await page.getByTestId('customer-lifetime-revenue').waitFor();
    expect(await page.getByTestId('customer-lifetime-revenue').textContent()).toBe(formatMoney(revenue.amount, 'INR'));
    await screenshot(page, 'dashboard-customer');
    await page.context().close();
  });

  it('refunds part of a payment from the payments page; its invoice PDF downloads', async () => {
    const { payment } = await pay(m.test, await createPayment(m.test, { amount: 100000 }));
    const page = await web.dashboard(m.keys.test, '/payments');
    const row = page.locator(`tr[data-payment-id="${payment.id}"]`);
    await row.waitFor();
    expect(await row.getByTestId('amount-total').textContent()).toBe(formatMoney(payment.amount_total, 'INR'));
    await screenshot(page, 'dashboard-payments');
    await row.getByRole('button', { name: 'Refund' }).click();
    await page.getByLabel('Amount (INR)').fill('1,000.50');
    await page.getByRole('button', { name: 'Refund ₹1,000.50' }).click();
    await row.getByTestId('amount-refunded').filter({ hasText: '₹1,000.50' }).waitFor();
    const after = await ok(m.test.get(`/payments/${payment.id}`));
    expect(after).toMatchObject({ amount_refunded: 100050, status: 'partially_refunded' });

    // More than is left: the API's refusal in words, nothing refunded.
    await row.getByRole('button', { name: 'Refund' }).click();
    await page.getByLabel('Amount (INR)').fill('999999');
    await page.getByRole('button', { name: /^Refund ₹/ }).click();
    await page.getByRole('alert').filter({ hasText: 'amount_exceeds_refundable' }).waitFor();
    expect((await ok(m.test.get(`/payments/${payment.id}`))).amount_refunded).toBe(100050);
    await page.keyboard.press('Escape');

    await page.getByRole('navigation').getByRole('link', { name: 'Invoices', exact: true }).click();
    const first = page.locator('tr[data-invoice-id]').first();
    await first.waitFor();
    await screenshot(page, 'dashboard-invoices');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      first.getByRole('button', { name: 'Download PDF' }).click(),
    ]);
    const file = await download.path();
    expect(fs.readFileSync(file!).subarray(0, 5).toString()).toBe('%PDF-');
    expect(download.suggestedFilename()).toMatch(/\.pdf$/);
    await page.context().close();
  });

  it('edits the catalog: a product, a plan and a price typed in rupees stored in exact paise; a coupon', async () => {
    const x = await h.merchant();
    const page = await web.dashboard(x.keys.test, '/catalog');
    await page.getByLabel('Product name').first().fill('Masala Pro');
    await page.getByRole('button', { name: 'Add product' }).click();
    const card = page.locator('[data-product-id]').filter({ has: page.locator('input[value="Masala Pro"]') });
    await card.waitFor();
    await card.getByLabel('New plan').fill('Monthly');
    await card.getByRole('button', { name: 'Add plan' }).click();
    await card.getByLabel('Price for Monthly').fill('1,234.50');
    await card.getByRole('button', { name: 'Add price' }).click();
    await card.getByText('₹1,234.50').waitFor();
    const products = (await ok(x.test.get('/products'))).data;
    expect(products[0].plans[0].default_price).toMatchObject({ amount: 123450, currency: 'INR' });

    // More decimals than the currency has: refused on the page, nothing sent.
    await card.getByLabel('Price for Monthly').fill('10.005');
    await card.getByRole('button', { name: 'Add price' }).click();
    await card.getByText('Not an amount in INR').waitFor();
    await screenshot(page, 'dashboard-catalog');

    await page.getByRole('navigation').getByRole('link', { name: 'Coupons', exact: true }).click();
    await page.getByLabel('Code').fill('DIWALI20');
    await page.getByLabel('Percent').fill('20');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    await page.locator('tr[data-coupon-code="DIWALI20"]').getByText('20% off').waitFor();
    // The same code again: the API's refusal in words.
    await page.getByLabel('Code').fill('diwali20');
    await page.getByLabel('Percent').fill('10');
    await page.getByRole('button', { name: 'Create coupon' }).click();
    await page.getByRole('alert').filter({ hasText: 'coupon_code_exists' }).waitFor();
    await page.context().close();
  });
});

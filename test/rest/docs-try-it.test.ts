/**
 * /docs as a developer uses it with the demo merchant (docs/api.md "Trying the API in /docs"): in headless Chromium,
 * Swagger UI with the demo key already authorized; for every POST (and the DELETE a POST needs first), expand the
 * operation, "Try it out", "Execute" with the example as the document gives it, and get a 2xx. The page is loaded
 * afresh for each operation, so its examples name the demo merchant's newest objects, made by the steps before.
 * Where a person would pay a hosted checkout between two steps, the test pays it at the sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN_TOKEN, Client_, submitCheckout, TestMerchant, useHarness } from '../harness';
import { describeBrowser, useBrowserShop } from '../harness/browser';
import { routes } from '../../rest-shim/routes';
import { BODY_EXAMPLES } from '../../rest-shim/examples';
import { connect } from '../payments/helpers';

const DOC = JSON.parse(fs.readFileSync(path.join(__dirname, '../../schema/openapi.json'), 'utf8'));
const h = useHarness();
const browser = useBrowserShop(h, async () => '<!doctype html><title>shop</title>');
let m: TestMerchant;

/** The newest object of a list route, through the API. */
async function newest(c: Client_, path: string): Promise<any> {
  const r = await c.get(`${path}${path.includes('?') ? '&' : '?'}limit=1`);
  if (r.status !== 200 || !r.body.data[0]) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
  return r.body.data[0];
}

/** What a person does between two operations, outside /docs. */
const PAY_PAYMENT = async () => {
  const p = await newest(m.test, '/payments');
  const r = await submitCheckout(p.checkout_url);
  if (r.status !== 303) throw new Error(`payment checkout answered ${r.status}`);
  for (let i = 0; i < 100 && (await m.test.get(`/payments/${p.id}`)).body.status !== 'succeeded'; i++)
    await new Promise((res) => setTimeout(res, 100));
};
const AUTHORISE_SUBSCRIPTION = async () => {
  const s = await newest(m.test, '/subscriptions');
  const r = await submitCheckout(s.checkout_url);
  if (r.status !== 303) throw new Error(`mandate checkout answered ${r.status}`);
  for (let i = 0; i < 100 && (await m.test.get(`/subscriptions/${s.id}`)).body.status !== 'active'; i++)
    await new Promise((res) => setTimeout(res, 100));
};

/**
 * An invoice of the demo merchant, newest of all, to a customer with `gstin`; its e-invoice registration ends as
 * `status` (the merchant's tax settings turned e-invoicing on in the step before).
 */
const eInvoice = (gstin: string, status: string) => async () => {
  const email = `einvoice-${Date.now()}@example.com`;
  const c = await m.test.post('/customers', { email, name: 'Unicorn Traders', gstin });
  if (c.status !== 201) throw new Error(`customer: ${c.status} ${c.text}`);
  const p = await m.test.post('/payments', {
    amount: 49900,
    currency: 'INR',
    customer_id: c.body.id,
    customer_email: email,
    success_url: 'https://merchant.example/thanks',
    cancel_url: 'https://merchant.example/cart',
  });
  if (p.status !== 201) throw new Error(`payment: ${p.status} ${p.text}`);
  await PAY_PAYMENT();
  for (let i = 0; i < 100; i++) {
    const inv = (await newest(m.test, `/invoices?customer_id=${c.body.id}`)) as { e_invoice_status: string };
    if (inv.e_invoice_status === status) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`the e-invoice never became ${status}`);
};

/** Every POST of the route table, in an order in which each has what it needs; a step may do something first. */
const ALL_STEPS: { op: string; before?: () => Promise<void>; operator?: boolean }[] = [
  { op: 'POST /product-families' },
  { op: 'POST /products' },
  { op: 'POST /products/{id}' },
  { op: 'POST /products/{id}/plans' },
  { op: 'POST /plans/{id}/prices' },
  { op: 'POST /plans/{id}/usage-rates' },
  // A second priced plan of the product, to change plan to.
  { op: 'POST /products/{id}/plans' },
  { op: 'POST /plans/{id}/prices' },
  { op: 'DELETE /providers/connections/{id}' },
  { op: 'POST /providers/connections' },
  { op: 'POST /payments' },
  { op: 'POST /payments/{id}/refund', before: PAY_PAYMENT },
  { op: 'POST /subscriptions' },
  { op: 'POST /subscriptions/{id}/pause', before: AUTHORISE_SUBSCRIPTION },
  { op: 'POST /subscriptions/{id}/resume' },
  { op: 'POST /subscriptions/{id}/change-plan/preview' },
  { op: 'POST /subscriptions/{id}/change-plan' },
  { op: 'POST /subscriptions/{id}/mandate-setup' },
  { op: 'POST /usage/events' },
  { op: 'POST /usage/events/batch' },
  { op: 'POST /subscriptions/{id}/cancel' },
  { op: 'POST /merchant/billing-settings' },
  { op: 'POST /merchant/tax-settings' },
  // The portal refuses an invoice whose recipient is the supplier (the example's GSTIN): failed at once.
  {
    op: 'POST /invoices/{id}/e-invoice/retry',
    before: eInvoice(BODY_EXAMPLES['POST /merchant/tax-settings'].gstin as string, 'failed'),
  },
  { op: 'POST /invoices/{id}/e-invoice/cancel', before: eInvoice('27AAPFU0939F1ZV', 'registered') },
  { op: 'POST /entitlements' },
  { op: 'POST /entitlements/{id}/products' },
  { op: 'POST /webhooks/endpoints' },
  { op: 'POST /webhooks/endpoints/{id}/toggle' },
  { op: 'POST /webhooks/endpoints/{id}/roll-secret' },
  { op: 'POST /webhooks/trigger-test' },
  { op: 'POST /webhooks/deliveries/{id}/retry' },
  { op: 'POST /packages' },
  { op: 'POST /packages/{id}/products' },
  { op: 'POST /offerings' },
  { op: 'POST /offerings/{id}/packages' },
  { op: 'POST /offerings/{id}/make-current' },
  { op: 'POST /paywalls' },
  { op: 'POST /customers' },
  { op: 'POST /customers/{id}' },
  { op: 'POST /portal/sessions' },
  { op: 'POST /offerings/resolve' },
  { op: 'POST /experiments' },
  { op: 'POST /experiments/{id}' },
  { op: 'POST /experiments/{id}/start' },
  { op: 'POST /experiments/{id}/stop' },
  { op: 'POST /coupons' },
  { op: 'POST /coupons/validate' },
  { op: 'POST /test-clock/advance' },
  { op: 'POST /admin/merchants', operator: true },
  { op: 'POST /admin/merchants/{id}/api-keys/roll', operator: true },
  // Last: the key rolls (the old one keeps working for the example's grace period).
  { op: 'POST /api-keys/roll' },
];
// DOCS_STEPS=n: only the first n steps, each logged with its time (when working on the examples).
const STEPS = process.env.DOCS_STEPS ? ALL_STEPS.slice(0, Number(process.env.DOCS_STEPS)) : ALL_STEPS;

/** Loads /docs, runs one operation by its example through "Try it out" and "Execute"; answers status and body. */
async function tryIt(page: Page, op: string, operator: boolean): Promise<{ status: number; body: string }> {
  const [method, route] = op.split(' ');
  await page.goto(`${h.app.url}/docs`);
  const { tags, operationId } = DOC.paths[route][method.toLowerCase()];
  // Swagger UI's id of an operation: its tag (spaces as _) and operationId.
  const block = page.locator(`[id="operations-${tags[0].replace(/\s/g, '_')}-${operationId}"]`);
  await block.waitFor({ timeout: 15_000 });
  if (operator) {
    // The operator types the ADMIN_TOKEN into Authorize; the demo key is pre-filled for the rest.
    await page.evaluate((token) => (globalThis as any).ui.preauthorizeApiKey('operatorToken', token), ADMIN_TOKEN);
  }
  await block.locator('.opblock-summary').click();
  await block.getByRole('button', { name: 'Try it out' }).click();
  await block.getByRole('button', { name: 'Execute' }).click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 30_000 });
  const code = Number((await status.innerText()).trim());
  const body =
    code >= 300 ? await block.locator('.live-responses-table .response-col_description pre').first().innerText() : '';
  return { status: code, body };
}

describeBrowser('/docs try-it with the demo merchant', () => {
  beforeAll(async () => {
    m = await h.merchant();
    // As src/demo.ts sets up the demo merchant: both gateways in the sandbox, Stripe the default.
    await connect(m.test, 'stripe', { is_default: true });
    await connect(m.test, 'razorpay', { is_default: false });
    h.app.app.docsDemo = { merchantId: m.id, testKey: m.keys.test };
  });

  it('covers every POST with a body example and every POST of the route table', () => {
    const posts = routes.filter((r) => r.method === 'post').map((r) => `POST ${r.path}`);
    expect(posts.filter((p) => !STEPS.some((s) => s.op === p))).toEqual([]);
    expect(Object.keys(BODY_EXAMPLES).filter((k) => !STEPS.some((s) => s.op === k))).toEqual([]);
  });

  it('pre-fills Authorize with the demo key', async () => {
    await browser.withPage(async (page) => {
      await page.goto(`${h.app.url}/docs`);
      await page.locator('.opblock').first().waitFor({ timeout: 15_000 });
      const auth = await page.evaluate(() => (globalThis as any).ui.authSelectors.authorized().toJS());
      expect(auth.secretKey.value).toBe(m.keys.test);
    });
  });

  it('Execute answers 2xx for every POST, in order, with the examples as given', async () => {
    const answers: string[] = [];
    await browser.withPage(async (page) => {
      for (const step of STEPS) {
        await step.before?.();
        const t0 = Date.now();
        const r = await tryIt(page, step.op, !!step.operator);
        if (process.env.DOCS_STEPS)
          process.stderr.write(`${step.op} ${r.status} ${Date.now() - t0} ms ${r.body.slice(0, 200)}\n`);
        answers.push(`${step.op} ${r.status}${r.status >= 300 ? ` ${r.body.slice(0, 300)}` : ''}`);
      }
    });
    expect(answers.filter((a) => !/ 2\d\d$/.test(a))).toEqual([]);
  }, 900_000);
});

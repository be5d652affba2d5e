import { TestMerchant, useHarness } from '../harness';
import { screenshot, useWebBrowser } from '../harness/dashboard';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, recurringPlan } from '../subscriptions/helpers';
import { customers, offering as bareOffering, ok, resolve, running, sql, twoArms } from '../experiments/helpers';
import { attach, offering, pkg, product, rnd } from '../offerings/helpers';
import { formatPercent } from '../../web/src/lib/money';

/**
 * The Growth page (web/src/dashboard/pages/growth.tsx): entitlements, offerings with their packages, the paywall
 * preview in each template, and an experiment's results with Start and Stop, all set up through the REST API.
 */

const h = useHarness();
const web = useWebBrowser(h);
jest.setTimeout(120_000);

let m: TestMerchant;
beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
});

it('lists entitlements and offerings and previews the offering in each paywall template as the config changes', async () => {
  const ent = await ok(m.test.post('/entitlements', { lookup_key: `pro_${rnd()}`, name: 'Pro features' }), 201);
  const { product: prod } = await product(m.test, 'Pro app');
  await ok(m.test.post(`/entitlements/${ent.id}/products`, { product_ids: [prod.id] }));
  const monthly = await pkg(m.test, { lookup_key: 'monthly', name: 'Monthly' });
  const annual = await pkg(m.test, { lookup_key: 'annual', name: 'Annual' });
  for (const p of [monthly, annual])
    await ok(m.test.post(`/packages/${p.id}/products`, { product_ids: [prod.id] }), 200);
  const o = await offering(m.test, { name: 'Main offer', is_current: true });
  await attach(m.test, o.id, monthly.id);
  await attach(m.test, o.id, annual.id);
  await ok(
    m.test.post('/paywalls', {
      name: 'Main',
      offering_id: o.id,
      template: 'feature_comparison',
      config: { title: 'Go Pro', features: ['No ads', { name: 'Offline', packages: ['annual'] }], highlight: 'annual' },
    }),
    201,
  );

  const page = await web.dashboard(m.keys.test, '/growth');
  await page.getByRole('table', { name: 'Entitlements' }).getByText(ent.lookup_key).waitFor();
  const pkgs = page.getByRole('table', { name: 'Packages of Main offer' });
  await pkgs.getByText('Monthly ₹499.00 / month').first().waitFor();
  expect(await pkgs.getByRole('row').count()).toBe(3); // header + monthly + annual

  // The saved paywall's template first, with the offering's real prices.
  const preview = page.getByRole('region', { name: 'Paywall preview' });
  const layout = preview.getByTestId('paywall-layout');
  await layout.and(page.locator('[data-template="FEATURE_COMPARISON"]')).waitFor();
  const comparison = preview.getByRole('table', { name: 'Feature comparison' });
  expect(
    await comparison
      .getByRole('row', { name: /Offline/ })
      .getByLabel('Not included')
      .count(),
  ).toBe(1);
  await comparison.getByText('₹4,990.00 / year').first().waitFor();
  await screenshot(page, 'dashboard-growth');

  const templates = page.getByRole('radiogroup', { name: 'Paywall template' });
  await templates.getByText('Simple', { exact: true }).click();
  await page.locator('[data-template="SIMPLE"]').waitFor();
  await templates.getByText('Sliding cards', { exact: true }).click();
  await page.locator('[data-template="SLIDING_CARDS"]').waitFor();
  expect(await preview.getByTestId('paywall-card').count()).toBe(2);

  // The preview follows the config as it is typed; a broken config is said in words.
  const config = page.getByLabel('Paywall config (JSON)');
  await config.fill('{"title": "Unlock everything", "cta": "Subscribe"}');
  await preview.getByText('Unlock everything').waitFor();
  expect(await preview.getByText('Subscribe').count()).toBe(2);
  await config.fill('{"title": ');
  await page.getByText('The config is not valid JSON').waitFor();

  // An offering without a paywall: try a template, then save it (there is no update once saved).
  const bare = await offering(m.test, { name: 'Spring sale' });
  await attach(m.test, bare.id, annual.id);
  await page.reload();
  await page.getByRole('button', { name: 'Preview paywall of Spring sale' }).click();
  await page.getByText('This offering has no paywall yet').waitFor();
  await templates.getByText('Sliding cards', { exact: true }).click();
  await page.getByRole('button', { name: 'Save paywall' }).click();
  await page.getByText('Saved paywall "Main" (sliding cards)').waitFor();
  const saved = (await ok(m.test.get(`/paywalls?offering_id=${bare.id}`))).data;
  expect(saved).toMatchObject([{ template: 'sliding_cards', config: { title: 'Go Pro' } }]);
  await page.context().close();
});

it("shows an experiment's results: chance to win, MRR lift, the sample-ratio check", async () => {
  const { plan } = await recurringPlan(m.test);
  const [o1, o2] = [await bareOffering(m.test), await bareOffering(m.test)];
  const e = await running(m.test, twoArms(o1, o2));
  // Visitors enrolled through resolve; some of them subscribe.
  const ids = await customers(h, m, 12);
  for (const id of ids) await resolve(m.test, id);
  for (const id of ids.slice(0, 5))
    await authorise(m.test, await createSubscription(m.test, plan.id, { customer_id: id, customer_email: undefined }));
  // A skewed split written directly, as test/experiments does (the engine itself cannot be made to skew).
  const extra = await customers(h, m, 300);
  const [a, b] = [...e.variants].sort((x: any, y: any) => (x.key < y.key ? -1 : 1));
  await sql(
    h,
    `insert into experiment_enrolments (id, created_at, merchant_id, mode, experiment_id, variant_id, customer_id, traffic_version)
     select gen_random_uuid(), now(), ?, 'test', ?, case when n <= 200 then ?::uuid else ?::uuid end, c, 1
     from unnest(?::uuid[]) with ordinality as t(c, n)`,
    [m.id, e.id, a.id, b.id, `{${extra.join(',')}}`],
  );
  const r = await ok(m.test.get(`/experiments/${e.id}/results`));
  expect(r.sample_ratio_mismatch.warning).toBe(true);
  const treatment = r.variants.find((v: any) => v.key === 'b');

  const page = await web.dashboard(m.keys.test, `/growth?experiment=${e.id}`);
  const results = page.getByRole('table', { name: 'Results by variant' });
  await results.waitFor();
  expect((await page.getByTestId('chance-b').textContent())?.trim()).toBe(formatPercent(treatment.chance_to_win));
  expect((await page.getByTestId('chance-a').textContent())?.trim()).toBe('control');
  const row = results.locator('[data-variant="b"]');
  expect(await row.getByRole('cell', { name: String(treatment.visitors), exact: true }).count()).toBeGreaterThan(0);
  await page.getByTestId('sample-ratio').getByRole('alert').getByText('Sample-ratio mismatch').waitFor();
  await screenshot(page, 'dashboard-experiment');
  await page.context().close();
});

it('starts and stops an experiment from its page, and says why when the service refuses', async () => {
  const [o1, o2] = [await bareOffering(m.test), await bareOffering(m.test)];
  const e = await ok(m.test.post('/experiments', twoArms(o1, o2)), 201);
  const page = await web.dashboard(m.keys.test, '/growth');
  await page.getByRole('button', { name: `Open ${e.name}` }).click();
  await page.locator('[data-status="DRAFT"]').waitFor();

  await page.getByRole('button', { name: 'Start experiment' }).click();
  await page.locator('[data-status="RUNNING"]').waitFor();
  expect((await ok(m.test.get(`/experiments/${e.id}`))).status).toBe('running');

  // Starting it again is refused by the service, in its words.
  await page.getByRole('button', { name: 'Start experiment' }).click();
  await page
    .getByRole('alert')
    .filter({ hasText: 'The experiment was not started' })
    .getByText(/experiment_not_draft/)
    .waitFor();

  await page.getByRole('button', { name: 'Stop experiment' }).click();
  await page.getByRole('dialog', { name: 'Stop this experiment?' }).getByRole('button', { name: 'Stop now' }).click();
  await page.locator('[data-status="STOPPED"]').waitFor();
  expect((await ok(m.test.get(`/experiments/${e.id}`))).status).toBe('stopped');

  // Back to the list: the experiment shows as stopped there too.
  await page.getByRole('button', { name: 'Back to growth' }).click();
  await page.getByRole('table', { name: 'Experiments' }).locator('[data-status="STOPPED"]').waitFor();
  await page.context().close();
});

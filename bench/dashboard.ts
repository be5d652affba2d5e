import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium } from '../test/harness/browser';
import { seedAnalytics } from './lib/analytics-seed';
import { envNumber } from './lib/env';
import { onCleanup, runBench } from './lib/processes';
import { connectSandbox, createMerchant } from './lib/seed';
import { startStack } from './lib/stack';
import { describeWebSize, WEB_JS_TARGET_KB, webSize } from './lib/web-size';

/**
 * The dashboard at a growing merchant's size (bench/README.md): one merchant with 10,000 customers and 10,000
 * subscriptions (and their MRR history: lib/analytics-seed.ts), the service on the embedded PostgreSQL or on
 * DATABASE_URL's server, the pages in headless Chromium (Debian's chromium, as the browser tests).
 *
 * 1. First screen: a fresh browser profile (nothing cached) opens /dashboard with the key kept for the session;
 *    measured from navigation start to the overview's MRR and its chart drawn (target < 1,500 ms; the median of
 *    BENCH_DASHBOARD_RUNS, and the slowest).
 * 2. Paging: the subscriptions list, "Next" clicked BENCH_DASHBOARD_PAGES times; each from the click to the next
 *    page's rows drawn (target < 300 ms, the median and the slowest).
 * 3. What it ships: the JavaScript, gzipped (target < 350 KB).
 *
 * `npm run bench:dashboard`. Environment: BENCH_DASHBOARD_SUBSCRIPTIONS (10000), BENCH_DASHBOARD_RUNS (5),
 * BENCH_DASHBOARD_PAGES (10; 0 skips paging), DATABASE_URL.
 */

const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench:dashboard: ${line}\n`);
const ROOT = path.resolve(__dirname, '..', '..');
export const TARGETS = { firstScreenMs: 1_500, pageMs: 300 };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Navigation start to the MRR figure and the chart's drawing, in the page's own clock. */
async function firstScreen(page: Page, url: string): Promise<number> {
  await page.goto(`${url}/dashboard`);
  await page.getByTestId('overview-mrr').waitFor({ timeout: 30_000 });
  await page.locator('.recharts-surface').first().waitFor({ timeout: 30_000 });
  const done = await page.evaluate(() => performance.now());
  if (process.env.BENCH_DASHBOARD_TRACE) note(`trace: ${await timeline(page)} | drawn ${done.toFixed(0)}`);
  return done;
}

/**
 * Where the first screen's time went (BENCH_DASHBOARD_TRACE=1): the document, each script and each API request, as
 * start-end in the page's clock. Page code as text: this file is compiled without the DOM's types.
 */
function timeline(page: Page): Promise<string> {
  return page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const parts = ['html 0-' + nav.responseEnd.toFixed(0), 'dcl ' + nav.domContentLoadedEventEnd.toFixed(0)];
    for (const r of performance.getEntriesByType('resource')) {
      const name = r.name.replace(location.origin, '').slice(0, 40);
      parts.push(name + ' ' + r.startTime.toFixed(0) + '-' + r.responseEnd.toFixed(0));
    }
    return parts.join(', ');
  })()`);
}

/** One click on "Next" to the next page's first row shown, in the page's clock. */
async function nextPage(page: Page): Promise<number> {
  const first = () => page.locator('tr[data-subscription-id]').first().getAttribute('data-subscription-id');
  const before = await first();
  const started = await page.evaluate(() => performance.now());
  await page.getByRole('button', { name: 'Next' }).click();
  // Page code as text: this file is compiled without the DOM's types.
  await page.waitForFunction(
    `document.querySelector('tr[data-subscription-id]')?.getAttribute('data-subscription-id') !== ${JSON.stringify(before)}`,
    undefined,
    { timeout: 30_000, polling: 'raf' },
  );
  return (await page.evaluate(() => performance.now())) - started;
}

async function main(): Promise<number> {
  const subscriptions = envNumber('BENCH_DASHBOARD_SUBSCRIPTIONS', 10_000, 10);
  const runs = envNumber('BENCH_DASHBOARD_RUNS', 5, 1);
  const pages = envNumber('BENCH_DASHBOARD_PAGES', 10, 0);
  const size = webSize(ROOT);

  const stack = await startStack({ root: ROOT, bare: false, note });
  const merchant = await createMerchant(stack.serviceUrl, stack.adminToken, {
    name: 'Bench dashboard merchant',
    reporting_currency: 'INR',
    rate_limit_per_second: 1_000_000,
  });
  const key = merchant.keys.test;
  await connectSandbox(stack.serviceUrl, key);
  const seed = await seedAnalytics(
    stack.databaseUrl,
    merchant.id,
    {
      customers: subscriptions,
      subscriptions,
      movements: subscriptions * 10,
      usageEvents: 1_000,
      usageSubscriptions: 10,
      hotShare: 0.2,
      ingestSubscriptions: 10,
    },
    (line) => note(`seed: ${line}`),
  );
  note(`seeded ${subscriptions} subscriptions in ${seed.totalSeconds.toFixed(1)} s`);

  const browser = await launchChromium();
  onCleanup('close Chromium', () => browser.close());
  const open = async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    // The key as the dashboard keeps it for the browser session (web/src/lib/session.ts).
    await context.addInitScript(
      `sessionStorage.setItem('cadence.dashboard.keys', ${JSON.stringify(JSON.stringify({ mode: 'test', test: key }))})`,
    );
    return { context, page: await context.newPage() };
  };

  const screens: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { context, page } = await open();
    screens.push(await firstScreen(page, stack.serviceUrl));
    await context.close();
  }

  const paging: number[] = [];
  if (pages > 0) {
    const { context, page } = await open();
    await page.goto(`${stack.serviceUrl}/dashboard/subscriptions`);
    await page.locator('tr[data-subscription-id]').first().waitFor({ timeout: 30_000 });
    for (let i = 0; i < pages; i++) paging.push(await nextPage(page));
    await context.close();
  }

  const fmt = (xs: number[]) =>
    xs.length ? `median ${median(xs).toFixed(0)} ms, slowest ${Math.max(...xs).toFixed(0)} ms` : 'not measured';
  const checks = [
    { name: 'first screen (median)', value: median(screens), target: TARGETS.firstScreenMs },
    ...(paging.length ? [{ name: 'subscriptions page (median)', value: median(paging), target: TARGETS.pageMs }] : []),
    { name: 'JavaScript gzipped, KB', value: size.totalJsKb, target: WEB_JS_TARGET_KB },
  ];
  say('');
  say('Cadence dashboard benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}); database: ${stack.dbLabel}`,
  );
  say(`  data: ${subscriptions} subscriptions, ${subscriptions} customers, ${subscriptions * 10} MRR movements`);
  say(`  first screen (fresh profile, overview MRR and chart drawn), ${runs} runs: ${fmt(screens)}`);
  say(`  subscriptions list, Next clicked ${pages} times: ${fmt(paging)}`);
  say(`  ${describeWebSize(size)}`);
  say('');
  for (const c of checks)
    say(`  [${c.value < c.target ? 'PASS' : 'MISS'}] ${c.name}: ${c.value.toFixed(0)} (target < ${c.target})`);
  say('');
  return 0;
}

if (require.main === module) runBench(main, note);

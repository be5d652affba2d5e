import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import type { Harness } from './index';
import { useBrowser } from './browser';

/**
 * The dashboard and the portal (web/, served from dist/web) in headless Chromium. `npm test` builds them first
 * (`npm run build`); a suite fails when they are not built rather than testing nothing.
 */

/** Where browser tests leave screenshots for a person to look at (not committed). */
export const SCREENSHOTS = path.resolve(__dirname, '../../screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

export interface WebBrowser {
  newContext(): Promise<BrowserContext>;
  /** A fresh browser profile on /dashboard signed in with `key`, the Overview showing. */
  dashboard(key: string, route?: string): Promise<Page>;
}

export function useWebBrowser(h: Harness): WebBrowser {
  const browser = useBrowser(h);
  beforeAll(() => {
    const built = path.resolve(__dirname, '../../dist/web/dashboard/index.html');
    if (!fs.existsSync(built)) throw new Error('the dashboard is not built: run npm run build (npm test does)');
  });
  return {
    newContext: () => browser.newContext(),
    async dashboard(key, route = '') {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${h.app.url}/dashboard${route}`);
      await signIn(page, key);
      return page;
    },
  };
}

/** Types the key into the "API key" field and opens the dashboard. */
export async function signIn(page: Page, key: string): Promise<void> {
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Open dashboard' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

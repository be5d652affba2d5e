import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, Browser, BrowserContext, Page } from 'playwright-core';
import type { Harness } from './index';

/**
 * Browser tests drive Debian's Chromium (`.ci/run` installs it) through playwright-core, against a merchant's own site
 * on 127.0.0.1 whose pages show what the service reports: one setup for every browser test.
 */

export const CHROMIUM = '/usr/bin/chromium';

/**
 * `describe` for a browser suite. Chromium is a requirement of the tests, like PostgreSQL: without it the suite fails
 * (in its beforeAll, saying how to install it) rather than passing unseen.
 */
export function describeBrowser(name: string, fn: () => void): void {
  describe(name, fn);
}

/** Fails with how to install Chromium when it is missing. */
function requireChromium(): void {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `browser tests need Chromium at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does)`,
    );
  }
}

/** Headless Chromium as every browser test runs it. */
export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Headless Chromium for the suite (launched in beforeAll, closed with the harness): each `newContext()` is a fresh
 * browser profile (its own storage), whose pages are tabs sharing it.
 */
export function useBrowser(h: Harness): { newContext(): Promise<BrowserContext> } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  h.cleanup(() => browser?.close());
  return { newContext: () => browser!.newContext() };
}

export interface BrowserShop {
  /** The merchant site's base URL (readable once the suite's beforeAll ran). */
  readonly url: string;
  /** Runs `fn` on a new page of the headless browser, closing the page after. */
  withPage<T>(fn: (page: Page) => Promise<T>): Promise<T>;
}

/**
 * Starts, before the suite's tests, the merchant's site (each request answered with the HTML `render` makes of its URL)
 * and headless Chromium; closes both after them.
 */
export function useBrowserShop(h: Harness, render: (url: URL) => Promise<string>): BrowserShop {
  let shop: http.Server | undefined;
  let browser: Browser | undefined;
  let url = '';
  beforeAll(async () => {
    requireChromium();
    shop = http.createServer(async (req, res) => {
      const html = await render(new URL(req.url ?? '/', 'http://shop'));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    await new Promise<void>((resolve) => shop!.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);
  h.cleanup(async () => {
    await browser?.close();
    await new Promise((r) => (shop ? shop.close(r) : r(undefined)));
  });
  return {
    get url() {
      return url;
    },
    async withPage(fn) {
      const page = await browser!.newPage();
      try {
        return await fn(page);
      } finally {
        await page.close();
      }
    },
  };
}

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { connectDemoGateways, DemoMerchant, ensureDemoMerchant } from '../../src/demo';
import { Client_, eventually, request, TestMerchant, useHarness } from '../harness';
import { useBrowser } from '../harness/browser';
import { ProcessServer, startProcessServer } from '../harness/process';
import { authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * The GraphQL IDE at /graphql (src/http/ide.ts) in headless Chromium. In the demo setting it opens with the demo
 * merchant's test key in its headers, the schema loaded and an example query that runs, and it runs a subscription
 * over graphql-ws. Outside it the page carries no key and says where to get one; a key typed into the headers loads
 * the schema, and a second tab has it. Opening it never draws a 401.
 */

const h = useHarness();
const browser = useBrowser(h);
jest.setTimeout(60_000);

interface Ide {
  page: Page;
  /** HTTP statuses of the page's POST /graphql requests, in order. */
  statuses: number[];
}

/**
 * The service in a plain Node process on the harness's database: the IDE's asset server loads its bundle with a
 * dynamic import, which jest's VM cannot run. `demoKey`: the demo setting, the key given to the IDE.
 */
function useIdeServer(demoKey?: () => Promise<string>): { readonly url: string } {
  let server: ProcessServer | undefined;
  beforeAll(async () => {
    const key = demoKey ? await demoKey() : undefined;
    // SANDBOX=off: the IDE needs none (the harness's service runs the gateways), nor a fixed port of its own.
    server = await startProcessServer(h.app.databaseUrl, { SANDBOX: 'off', ...(key ? { IDE_DEMO_KEY: key } : {}) });
  });
  afterAll(() => server?.stop());
  return {
    get url() {
      return server!.url;
    },
  };
}

async function openIde(context: BrowserContext, url: string): Promise<Ide> {
  const page = await context.newPage();
  const statuses: number[] = [];
  page.on('response', (r) => {
    if (r.request().method() === 'POST' && new URL(r.url()).pathname === '/graphql') statuses.push(r.status());
  });
  await page.goto(`${url}/graphql`);
  await page.locator('.graphiql-query-editor .view-lines').waitFor();
  return { page, statuses };
}

/** An editor's whole text (monaco draws only the lines in view: this reads its model, through GraphiQL's monaco). */
async function editorText(page: Page, editor: 'query' | 'headers' | 'response'): Promise<string> {
  const suffix = { query: 'operation.graphql', headers: 'request-headers.json', response: 'response.json' }[editor];
  return page.evaluate((end) => {
    const monaco = (globalThis as any).__MONACO;
    const model = monaco.editor.getModels().find((m: any) => m.uri.toString().endsWith(end));
    return model ? (model.getValue() as string) : '';
  }, suffix);
}

/** Replaces an editor's text as a user pasting it would. */
async function setEditor(page: Page, editor: 'query' | 'headers', text: string): Promise<void> {
  await page
    .locator(
      editor === 'query'
        ? '.graphiql-query-editor .monaco-editor'
        : '.graphiql-editor-tool .graphiql-editor:not(.hidden) .monaco-editor',
    )
    .click();
  await page.keyboard.press('Control+A');
  // A paste: typed, monaco would close brackets and quotes itself.
  await page.evaluate(`{
    const data = new DataTransfer();
    data.setData('text/plain', ${JSON.stringify(text)});
    document.activeElement.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }`);
}

/** The documentation explorer shows the schema's root types once the schema is loaded. */
async function expectSchemaLoaded(page: Page): Promise<void> {
  await page.getByRole('button', { name: /Show Documentation Explorer/ }).click();
  await page.locator('.graphiql-doc-explorer').getByText('Query', { exact: true }).waitFor({ timeout: 10_000 });
  await page.getByRole('button', { name: /Hide Documentation Explorer/ }).click();
}

describe('outside the demo setting', () => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
  });
  const server = useIdeServer();

  it('serves a page that carries no key and says where to get one', async () => {
    const r = await request(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(r.status).toBe(200);
    expect(r.text).not.toMatch(/sk_(test|live)_[A-Za-z0-9]{8}/);
    expect(r.text).toContain('POST /v1/admin/merchants');
    expect(r.text).not.toContain('unpkg.com'); // assets served locally
    expect((await request(`${server.url}/graphql-ide/graphql-ws.min.js`)).status).toBe(200);
    expect((await request(`${server.url}/graphql-ide/ruru.js`)).status).toBe(200);
  });

  it('opens without a request, loads the schema once a key is typed in, and a second tab has the key', async () => {
    const context = await browser.newContext();
    try {
      const first = await openIde(context, server.url);
      expect(await editorText(first.page, 'query')).toContain('POST /v1/admin/merchants');
      expect(await editorText(first.page, 'headers')).toContain('"Authorization": "Bearer "');
      await first.page.waitForTimeout(1500);
      expect(first.statuses).toEqual([]); // no key: no schema request, so no 401

      await setEditor(first.page, 'headers', `{ "Authorization": "Bearer ${m.keys.test}" }`);
      await expectSchemaLoaded(first.page); // no manual re-fetch
      expect(first.statuses).not.toContain(401);

      const second = await openIde(context, server.url);
      expect(await editorText(second.page, 'headers')).toContain(m.keys.test);
      await expectSchemaLoaded(second.page);
      expect(second.statuses).toEqual([200]);
      await second.page.getByRole('button', { name: 'New tab' }).click(); // a new IDE tab
      await eventually(async () => (await editorText(second.page, 'query')) === '', 5000, 'the new tab');
      expect(await editorText(second.page, 'headers')).toContain(m.keys.test);
      await second.page.waitForTimeout(1000);
      expect(second.statuses).not.toContain(401);
    } finally {
      await context.close();
    }
  });

  it('a wrong key changes the schema request: refused, then loaded again with a good key', async () => {
    const context = await browser.newContext();
    try {
      const ide = await openIde(context, server.url);
      await setEditor(ide.page, 'headers', `{ "Authorization": "Bearer sk_test_wrong" }`);
      await eventually(() => ide.statuses.includes(401), 5000, 'the schema request with the wrong key');
      await setEditor(ide.page, 'headers', `{ "Authorization": "Bearer ${m.keys.test}" }`);
      await eventually(() => ide.statuses.at(-1) === 200, 5000, 'the schema request with the good key');
      await expectSchemaLoaded(ide.page);
    } finally {
      await context.close();
    }
  });
});

describe('in the demo setting', () => {
  let demo: DemoMerchant;
  let client: Client_;
  let productName: string;
  let subscriptionId: string;
  // As `npm start` on its embedded database (src/main.ts): the demo merchant, connected to the sandbox, and its test
  // key given to the IDE.
  const server = useIdeServer(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-ide-'));
    demo = await ensureDemoMerchant(h.app.orm, dataDir);
    await connectDemoGateways(h.app.orm, h.app.app.services, demo.merchantId);
    client = new Client_(h.app.url, demo.keys.test);
    const catalog = await recurringPlan(client);
    productName = catalog.product.name;
    const created = await createSubscription(client, catalog.plan.id);
    const { subscription } = await authorise(client, created);
    expect(subscription.status).toBe('active');
    subscriptionId = subscription.id;
    return demo.keys.test;
  });

  it('opens with the demo test key, the schema loaded and the example query, which runs', async () => {
    const context = await browser.newContext();
    try {
      const ide = await openIde(context, server.url);
      expect(await editorText(ide.page, 'headers')).toContain(`"Authorization": "Bearer ${demo.keys.test}"`);
      expect(await editorText(ide.page, 'query')).toContain('query Catalog');
      expect(await editorText(ide.page, 'query')).toContain('# subscription Changes');
      await expectSchemaLoaded(ide.page);
      expect(ide.statuses).toEqual([200]); // the schema, with the key: no 401

      await ide.page.locator('.graphiql-execute-button').click();
      await eventually(async () => (await editorText(ide.page, 'response')).includes(productName), 10_000, 'data');
      const response = await editorText(ide.page, 'response');
      expect(response).toContain('"currency": "INR"');
      expect(response).not.toContain('"errors"');
      expect(ide.statuses).toEqual([200, 200]);
    } finally {
      await context.close();
    }
  });

  it('runs a subscription over graphql-ws, with the headers as its connection params', async () => {
    const context = await browser.newContext();
    try {
      const ide = await openIde(context, server.url);
      const sent: string[] = [];
      ide.page.on('websocket', (ws) => ws.on('framesent', (f) => sent.push(String(f.payload))));
      await expectSchemaLoaded(ide.page);
      await setEditor(ide.page, 'query', 'subscription { subscriptionUpdated { id status } }');
      // GraphiQL reads the operation name from the text a moment after an edit (its tab shows it): run before that
      // and it sends the example's name, `Catalog`, with the new text, as a user pressing Run at once would.
      await ide.page.locator('.graphiql-tab', { hasText: '<untitled>' }).waitFor({ timeout: 5000 });
      await ide.page.locator('.graphiql-execute-button').click();
      // Generous: the browser's first WebSocket and graphql-ws's handshake on a busy two-core machine.
      await eventually(() => sent.some((f) => JSON.parse(f).type === 'subscribe'), 20_000, 'the subscribe message');
      expect(JSON.parse(sent[0])).toEqual({
        type: 'connection_init',
        payload: { Authorization: `Bearer ${demo.keys.test}` },
      });
      await ide.page.waitForTimeout(500); // the server runs the subscribe (key, limits, document) before it listens

      expect((await ok(client.post(`/subscriptions/${subscriptionId}/pause`))).status).toBe('paused');
      await eventually(
        async () => (await editorText(ide.page, 'response')).includes('"status": "PAUSED"'),
        10_000,
        'the pause in the IDE',
      );
      expect(await editorText(ide.page, 'response')).toContain(subscriptionId);
      expect(ide.statuses).toEqual([200]); // the subscription was not POSTed
    } finally {
      await context.close();
    }
  });
});

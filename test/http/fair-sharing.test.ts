/**
 * One merchant cannot slow the others (docs/operations.md, "Fair sharing"): expensive GraphQL fields carry a cost the
 * operation's cost limit counts (one PDF per request at most; analytics by their window; usage by its events), issued
 * documents' PDFs are rendered once on worker threads and kept, and a merchant has a bounded share of the rendering
 * pool. The last test puts it together: merchant A asks for PDFs and analytics at its full rate limit while merchant
 * B's catalog reads keep a p99 under 250 ms.
 */
import http from 'node:http';
import { Mode } from '../../src/core/entity';
import { MAX_COST, PDF_COST } from '../../src/core/operation-cost';
import { RENDER_PER_MERCHANT } from '../../src/modules/invoices/invoice.documents';
import { TestMerchant, useHarness } from '../harness';
import { startProcessServer } from '../harness/process';
import { useWsClients } from '../harness/ws';
import { customer, draft, issue, rows } from '../invoices/helpers';

const h = useHarness();
const wsClient = useWsClients(h);

/** Issues `n` invoices of the merchant's test mode, each with its own lines (so each PDF is its own render). */
async function invoices(m: TestMerchant, n: number): Promise<string[]> {
  const c = await customer(h, m.id, { stateCode: '29' });
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const lines = Array.from({ length: 12 }, (_, k) => ({
      description: `Seat ${i}.${k}`,
      quantity: 1,
      unitAmount: 1000 + k,
      amount: 1000 + k,
    }));
    const inv = await issue(h, m.id, draft(c, { lines }), Mode.TEST);
    ids.push(inv.id);
  }
  return ids;
}

const PDF = 'pdf { filename contentType base64 }';

/** One request on `agent`'s kept-alive connections, its body read in full; answers the status. */
function call(
  agent: http.Agent,
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      `${base}${path}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${key}`, ...(text ? { 'content-type': 'application/json' } : {}) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** GET /v1/invoices/{id}/pdf's bytes. */
async function pdfBytes(m: TestMerchant, id: string): Promise<Buffer> {
  const res = await fetch(`${h.app.url}/v1/invoices/${id}/pdf`, {
    headers: { authorization: `Bearer ${m.keys.test}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('the cost limit counts expensive fields', () => {
  let m: TestMerchant;
  let ids: string[];
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29' });
    ids = await invoices(m, 3);
  });

  const refused = (r: any) => {
    expect(r.status).toBe(400);
    expect(r.body.errors[0].extensions.code).toBe('query_too_complex');
    expect(r.body.errors[0].message).toMatch(/Cost limit of 20000/);
    expect(r.body.data).toBeUndefined();
  };

  it('one PDF per request: a second alias is refused before anything renders', async () => {
    expect(2 * PDF_COST).toBeGreaterThan(MAX_COST);
    const one = await h.graphql(m.keys.test, `{ a: invoice(id: "${ids[0]}") { ${PDF} } }`);
    expect(one.status).toBe(200);
    expect(one.body.data.a.pdf.contentType).toBe('application/pdf');
    const before = await rows(h, 'select count(*)::int as n from invoice_documents where merchant_id = ?', [m.id]);
    refused(
      await h.graphql(m.keys.test, `{ a: invoice(id: "${ids[1]}") { ${PDF} } b: invoice(id: "${ids[2]}") { ${PDF} } }`),
    );
    const after = await rows(h, 'select count(*)::int as n from invoice_documents where merchant_id = ?', [m.id]);
    expect(after[0].n).toBe(before[0].n);
  });

  it('counts the same over the GraphQL WebSocket', async () => {
    const client = wsClient(m.keys.test);
    const errors = await new Promise<any[]>((resolve) => {
      client.subscribe(
        {
          query: `query($first: Int) { invoices(first: $first) { edges { node { ${PDF} } } } }`,
          variables: { first: 2 },
        },
        { next: () => undefined, error: (e) => resolve(e as any[]), complete: () => resolve([]) },
      );
    });
    expect(errors[0].extensions.code).toBe('query_too_complex');
    expect(errors[0].message).toMatch(/Cost limit of 20000/);
  });

  it('a PDF inside a list counts once per item `first` asks for, read from the variables', async () => {
    const q = `query($first: Int) { invoices(first: $first) { edges { node { number ${PDF} } } } }`;
    refused(await h.graphql(m.keys.test, q, { first: 2 }));
    refused(await h.graphql(m.keys.test, `{ invoices { edges { node { ${PDF} } } } }`)); // default page: 20
    const ok = await h.graphql(m.keys.test, q, { first: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body.data.invoices.edges).toHaveLength(1);
  });

  it('analytics cost by the buckets of their window; several long ones do not fit one request', async () => {
    const long = (alias: string) =>
      `${alias}: cohorts(granularity: WEEK, from: "2024-01-01", to: "2026-12-31") { granularity }`;
    const one = await h.graphql(m.keys.test, `{ ${long('a')} }`);
    expect(one.body.errors).toBeUndefined();
    refused(await h.graphql(m.keys.test, `{ ${long('a')} ${long('b')} }`));
    const mrr = (alias: string) => `${alias}: mrr(interval: WEEK, from: "2024-01-01", to: "2026-12-31") { mrr }`;
    const many = Array.from({ length: 8 }, (_, i) => mrr(`m${i}`)).join(' ');
    refused(await h.graphql(m.keys.test, `{ ${many} }`));
    // The same fields over their default window fit many times over.
    const short = Array.from({ length: 8 }, (_, i) => `m${i}: mrr { mrr }`).join(' ');
    expect((await h.graphql(m.keys.test, `{ ${short} }`)).body.errors).toBeUndefined();
  });

  it('usage ingestion costs by its events: one full batch fits, two do not', async () => {
    const events = Array.from({ length: 1000 }, () => ({
      subscriptionId: '00000000-0000-7000-8000-000000000000',
      eventType: 'api_call',
      quantity: 1,
      unit: 'call',
    }));
    const q = `mutation($a: ReportUsageBatchInput!, $b: ReportUsageBatchInput!) {
      a: reportUsageBatch(input: $a) { data { id } } b: reportUsageBatch(input: $b) { data { id } } }`;
    refused(await h.graphql(m.keys.test, q, { a: { events }, b: { events } }));
    // One batch is not refused for its cost (it fails later, on the unknown subscription).
    const one = await h.graphql(
      m.keys.test,
      `mutation($a: ReportUsageBatchInput!) { reportUsageBatch(input: $a) { data { id } } }`,
      { a: { events } },
    );
    expect(one.body.errors[0].extensions.code).toBe('resource_not_found');
  });
});

describe('issued documents are rendered once and kept', () => {
  it('answers the kept bytes after the merchant changes what the PDF printed; one row per document', async () => {
    const m = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29' });
    await m.test.post('/merchant/tax-settings', { address: '1 MG Road, Bengaluru' });
    const [id] = await invoices(m, 1);
    const first = await pdfBytes(m, id);
    const [kept] = await rows(h, 'select rendered_at from invoice_documents where invoice_id = ?', [id]);
    expect(kept).toBeDefined();
    await m.test.post('/merchant/tax-settings', { address: '99 Brigade Road, Bengaluru' });
    expect((await pdfBytes(m, id)).equals(first)).toBe(true);
    const gql = await h.graphql(m.keys.test, `{ invoice(id: "${id}") { ${PDF} } }`);
    expect(Buffer.from(gql.body.data.invoice.pdf.base64, 'base64').equals(first)).toBe(true);
    const after = await rows(h, 'select rendered_at from invoice_documents where invoice_id = ?', [id]);
    expect(after).toHaveLength(1);
    expect(after[0].rendered_at).toEqual(kept.rendered_at);
  });

  it('renders off the event loop, and a merchant waits its turn past its share (429 with Retry-After, nothing lost)', async () => {
    const m = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29' });
    const ids = await invoices(m, RENDER_PER_MERCHANT * 4);
    const answers = await Promise.all(ids.map((id) => m.test.get(`/invoices/${id}/pdf`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(RENDER_PER_MERCHANT);
    const busy = answers.filter((a) => a.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    for (const b of busy) {
      expect(b.body.error.code).toBe('rate_limited');
      expect(b.headers.get('retry-after')).toBe('1');
    }
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    // Retried one at a time, every one renders.
    for (const [i, id] of ids.entries()) {
      if (answers[i].status === 429) expect((await m.test.get(`/invoices/${id}/pdf`)).status).toBe(200);
    }
    const kept = await rows(h, 'select count(*)::int as n from invoice_documents where merchant_id = ?', [m.id]);
    expect(kept[0].n).toBe(ids.length);
  });
});

describe('one merchant at its full rate limit does not slow another', () => {
  it("keeps merchant B's catalog reads under 250 ms at p99 while A asks for PDFs and analytics at 100 requests a second", async () => {
    const a = await h.merchant({ gstin: '29AAGCB7383J1Z4', state_code: '29', rate_limit_per_second: 100 });
    const b = await h.merchant();
    const product = await b.test.post('/products', { name: 'Pro', type: 'subscription' });
    expect(product.status).toBe(201);
    const ids = await invoices(a, 60);

    // The service in a process of its own, as in production: the merchants' clients (this process) do not share its
    // event loop. Each merchant's back end keeps its connections open, as HTTP clients do (A up to 16, B one).
    const server = await startProcessServer(h.app.databaseUrl);
    const agentA = new http.Agent({ keepAlive: true, maxSockets: 16 });
    const agentB = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const SECONDS = 6;
      const stop = Date.now() + SECONDS * 1000;
      const aStatuses: number[] = [];
      const aLoad = (async () => {
        const inFlight: Promise<void>[] = [];
        for (let i = 0; Date.now() < stop; i++) {
          const kind = i % 3;
          const sent =
            kind === 0
              ? call(agentA, server.url, a.keys.test, 'GET', `/v1/invoices/${ids[i % ids.length]}/pdf`)
              : kind === 1
                ? call(agentA, server.url, a.keys.test, 'POST', '/graphql', {
                    query: `{ invoice(id: "${ids[(i * 7) % ids.length]}") { ${PDF} } }`,
                  })
                : call(
                    agentA,
                    server.url,
                    a.keys.test,
                    'GET',
                    '/v1/analytics/mrr?interval=week&from=2024-01-01&to=2026-12-31',
                  );
          inFlight.push(sent.then((status) => void aStatuses.push(status)));
          await new Promise((r) => setTimeout(r, 10)); // 100 a second: A's own limit
        }
        await Promise.all(inFlight);
      })();

      const latencies: number[] = [];
      await new Promise((r) => setTimeout(r, 300)); // A's load under way
      while (Date.now() < stop) {
        const t = performance.now();
        const status = await call(agentB, server.url, b.keys.test, 'GET', '/v1/products');
        latencies.push(performance.now() - t);
        expect(status).toBe(200);
        await new Promise((res) => setTimeout(res, 15));
      }
      await aLoad;
      latencies.sort((x, y) => x - y);
      const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))];
      expect(latencies.length).toBeGreaterThan(50);
      expect(p99).toBeLessThan(250);
      // A was really at work: PDFs rendered and answers refused past its share, none failed.
      expect(aStatuses.filter((s) => s === 200).length).toBeGreaterThan(30);
      expect(aStatuses.every((s) => s === 200 || s === 429)).toBe(true);
    } finally {
      agentA.destroy();
      agentB.destroy();
      await server.stop();
    }
  });
});

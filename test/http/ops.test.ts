/**
 * Operations (docs/operations.md): health and readiness, the OpenAPI document, the offline REST reference.
 */
import { routes } from '../../rest-shim/routes';
import { ERROR_CODES } from '../../src/core/errors';
import { request, startTestApp, TestMerchant, useHarness } from '../harness';
import { REQUEST_ID, unknownId } from '../harness/http';
import { inlineRefs } from '../rest/openapi-inline';

const h = useHarness();
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
});

describe('health', () => {
  it('/healthz answers 200 without a key', async () => {
    const r = await request(`${h.app.url}/healthz`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
    expect(r.headers.get('request-id')).toMatch(REQUEST_ID);
  });

  it('/readyz answers 200 when the database answers', async () => {
    const r = await request(`${h.app.url}/readyz`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready' });
  });

  it('/readyz answers 503 when the database is gone, while /healthz stays 200', async () => {
    const s = await startTestApp();
    try {
      expect((await request(`${s.url}/readyz`)).status).toBe(200);
      await s.orm.close(true);
      const started = Date.now();
      const r = await request(`${s.url}/readyz`);
      expect(r.status).toBe(503);
      expect(r.body).toEqual({ status: 'unavailable' });
      expect(r.text).not.toMatch(/pool|knex|ECONNREFUSED|select/i);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await request(`${s.url}/healthz`)).status).toBe(200);
    } finally {
      await s.close();
    }
    // It starts a service of its own (a fresh database, every migration): on a loaded machine that alone can take most
    // of the default minute. The answer's own bound is the 10 s above.
  }, 180_000);
});

describe('GET /v1/openapi.json', () => {
  let doc: any;
  beforeAll(async () => {
    const r = await request(`${h.app.url}/v1/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    doc = r.body;
  });

  it('needs no key, and ignores a bad one', async () => {
    const r = await request(`${h.app.url}/v1/openapi.json`, { key: 'sk_test_wrong' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(doc);
  });

  it('is OpenAPI 3.1.0 served under /v1 with both security schemes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toEqual(expect.any(String));
    expect(doc.servers).toEqual([{ url: '/v1' }]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['operatorToken', 'secretKey']);
  });

  it('documents exactly the routes of the table', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.keys(ops as object).map((m) => `${m} ${p}`),
    );
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    for (const r of routes) {
      const op = doc.paths[r.path][r.method];
      expect(op.summary).toBe(r.summary);
      // Success first, `default` last, and the documented 4xx answers between (test/rest/openapi.test.ts checks them).
      const answers = Object.keys(op.responses);
      expect([answers[0], answers[answers.length - 1]]).toEqual([String(r.status ?? 200), 'default']);
      expect(answers.slice(1, -1)).toEqual(expect.arrayContaining(['400', '401']));
      const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]);
      for (const p of pathParams) {
        expect(op.parameters).toEqual(
          expect.arrayContaining([expect.objectContaining({ name: p, in: 'path', required: true })]),
        );
      }
      expect(op.security).toEqual([{ [r.auth === 'admin' ? 'operatorToken' : 'secretKey']: [] }]);
    }
  });

  it('describes lists, bodies and errors in REST terms', () => {
    const inlined = inlineRefs(doc); // bodies and answers are named components (docs/api.md)
    const list = inlined.paths['/products'].get;
    expect(list.parameters.map((p: any) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'status', 'type']),
    );
    const listSchema = list.responses['200'].content['application/json'].schema;
    expect(listSchema.required).toEqual(['object', 'data', 'has_more', 'next_cursor']);
    expect(Object.keys(listSchema.properties.data.items.properties)).toEqual(
      expect.arrayContaining(['id', 'object', 'created_at', 'plans']),
    );
    const create = inlined.paths['/products'].post.requestBody.content['application/json'].schema;
    expect(create.additionalProperties).toBe(false);
    expect(create.required).toEqual(expect.arrayContaining(['name', 'type']));
    expect(create.properties.type.enum).toEqual(['subscription', 'one_time']);
    expect(Object.keys(create.properties)).toContain('product_family_id');
    const err = doc.components.schemas.Error.properties.error;
    expect(err.required).toEqual(['type', 'code', 'message', 'param', 'request_id']);
    expect(err.properties.code.enum.sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it('every documented operation is served (none answers "unrecognized URL")', async () => {
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops as object)) {
        const url = `${h.app.url}/v1${p.replace(/\{\w+\}/g, unknownId())}`;
        const r = await request(url, {
          method: method.toUpperCase(),
          key: m.keys.test,
          ...(method === 'get' ? {} : { body: {} }),
        });
        expect({
          op: `${method} ${p}`,
          unrecognized: /Unrecognized request URL/.test(r.body?.error?.message ?? ''),
        }).toEqual({
          op: `${method} ${p}`,
          unrecognized: false,
        });
        expect(r.status).toBeLessThan(500);
      }
    }
  });
});

describe('GET /docs', () => {
  it('serves the REST reference page, with every asset served locally, offline', async () => {
    const r = await request(`${h.app.url}/docs`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/text\/html/);
    const html = r.text;
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/(?:src|href)="\/\//);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((x) => x[1]);
    expect(assets).toEqual(
      expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js']),
    );
    for (const a of assets) {
      const res = await fetch(new URL(a, `${h.app.url}/docs`));
      expect({ a, status: res.status }).toEqual({ a, status: 200 });
      expect(res.headers.get('content-type')).toMatch(a.endsWith('.css') ? /text\/css/ : /javascript/);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
    // the spec it loads is this service's own document
    const spec = /url:\s*'([^']+)'/.exec(html)?.[1];
    expect(spec).toBe('/v1/openapi.json');
    expect((await request(`${h.app.url}${spec}`)).body.openapi).toBe('3.1.0');
    // Swagger UI would otherwise send the spec's URL to validator.swagger.io on any non-localhost host
    expect(html).toMatch(/validatorUrl:\s*(null|'none')/);
  });

  it('does not serve files outside the Swagger UI bundle', async () => {
    for (const p of [
      '/docs/assets/../package.json',
      '/docs/assets/%2e%2e/%2e%2e/package.json',
      '/docs/assets/nope.js',
    ]) {
      const r = await request(`${h.app.url}${p}`);
      expect(r.status).toBe(404);
      expect(r.text).not.toContain('"dependencies"');
    }
  });
});

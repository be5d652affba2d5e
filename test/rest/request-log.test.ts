/**
 * The request log line (src/http/request.ts): the path as the client sent it (`/v1/payments`, `/graphql`; not the
 * path relative to a router mount) and, for an error answer, the API's error code.
 */
import pino from 'pino';
import { logger } from '../../src/core/logger';
import { eventually, HttpResult, TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';

const h = useHarness();
let m: TestMerchant;

/** Every line the service logs, parsed; the logger writes to a stream on fd 1, so its `write` is where lines pass. */
const lines: Record<string, unknown>[] = [];
const stream = (logger as unknown as Record<symbol, { write(s: string): boolean }>)[pino.symbols.streamSym];
const write = stream.write;
const level = logger.level;

beforeAll(async () => {
  stream.write = (s: string) => (lines.push(JSON.parse(s)), true);
  logger.level = 'info'; // tests run silent; request loggers are children made per request, after this
  m = await h.merchant();
});
afterAll(() => {
  stream.write = write;
  logger.level = level;
});

/** The `request` line of the response `r`, found by its Request-Id. */
const requestLine = (r: HttpResult) =>
  eventually(
    () => lines.find((l) => l.msg === 'request' && l.request_id === r.headers.get('request-id')),
    5000,
    'the request log line',
  );

describe('request log lines', () => {
  it('carry the full path and no code on success', async () => {
    const r = await m.test.get('/payments?limit=1');
    expect(r.status).toBe(200);
    const line = await requestLine(r);
    expect(line).toMatchObject({ method: 'GET', path: '/v1/payments', status: 200 });
    expect(line).not.toHaveProperty('code');
    const g = await h.graphql(m.keys.test, '{ payments(first: 1) { totalCount } }');
    expect(await requestLine(g)).toMatchObject({ method: 'POST', path: '/graphql', status: 200 });
  });

  it('carry the error code of a 4xx: REST shim, catalog read path, guards, unknown routes, GraphQL', async () => {
    const cases: [Promise<HttpResult>, string, number, string][] = [
      [m.test.post('/payments', { amount: '100' }), '/v1/payments', 400, 'parameter_invalid'],
      [
        m.test.get(`/payments/${unknownId()}`),
        expect.stringMatching(/^\/v1\/payments\/[0-9a-f-]{36}$/) as never,
        404,
        'resource_not_found',
      ],
      [m.test.get('/products?type=bogus'), '/v1/products', 400, 'parameter_invalid'],
      [h.rest('/v1/payments'), '/v1/payments', 401, 'invalid_api_key'],
      [h.rest('/v1/nowhere', { key: m.keys.test }), '/v1/nowhere', 404, 'resource_not_found'],
      [h.graphql(undefined, '{ payments { totalCount } }'), '/graphql', 401, 'invalid_api_key'],
    ];
    // GraphQL answers its errors in `errors[]`; the line carries the first one's code.
    const g = await h.graphql(m.keys.test, 'query($s: PaymentStatus) { payments(status: $s) { totalCount } }', {
      s: 'paid',
    });
    expect(g.body.errors[0].extensions.code).toBe('parameter_invalid');
    expect(await requestLine(g)).toMatchObject({ path: '/graphql', code: 'parameter_invalid' });
    for (const [pending, path, status, code] of cases) {
      const r = await pending;
      expect(r.status).toBe(status);
      expect(await requestLine(r)).toMatchObject({ path, status, code });
    }
  });
});

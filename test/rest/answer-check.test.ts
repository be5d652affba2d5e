/**
 * The harness checks every REST answer against the OpenAPI document (test/harness/openapi-check.ts): here it is shown
 * to fail on answers that do not match, through `request` itself against a stand-in service, and case by case.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request } from '../harness';
import { checkAgainst, checkAnswersOf, forgetService, openApiValidator } from '../harness/openapi-check';

const doc = JSON.parse(fs.readFileSync(path.join(__dirname, '../../schema/openapi.json'), 'utf8'));
const ID = '0190a6f2-6a7e-7cc3-8d3e-6a0d4c1f2e3b';
const event = {
  id: ID,
  object: 'subscription_event',
  livemode: false,
  subscription_id: ID,
  from_state: 'created',
  to_state: 'active',
  triggered_by: 'webhook',
  event_type: 'subscription.activated',
  metadata_json: {},
  created_at: '2026-01-01T00:00:00.000Z',
};
const error = (code: string, type = 'invalid_request_error') => ({
  error: { type, code, message: 'x', param: null, request_id: 'req_0123456789abcdef01234567' },
});

describe('the harness hook in request()', () => {
  let server: http.Server;
  let url = '';
  /** What the stand-in answers for GET /v1/subscriptions/{id}/events. */
  let events: unknown = [event];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(body));
      };
      if (req.url === '/v1/openapi.json') return send(200, doc);
      if (req.url === `/v1/subscriptions/${ID}/events`) return send(200, events);
      send(404, error('resource_not_found'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    checkAnswersOf(url);
  });
  afterAll(async () => {
    forgetService(url);
    await new Promise((r) => server.close(r));
  });

  it('passes an answer that matches the document', async () => {
    events = [event];
    const r = await request(`${url}/v1/subscriptions/${ID}/events`, { key: 'sk_test_x' });
    expect(r.body).toEqual([event]);
  });

  it('fails the request when the answer does not match: one event object where the document says an array', async () => {
    events = event;
    await expect(request(`${url}/v1/subscriptions/${ID}/events`, { key: 'sk_test_x' })).rejects.toThrow(
      /OpenAPI check: the answer of GET \/subscriptions\/.+\/events .* must be array/s,
    );
  });

  it('fails on an event with a mistyped field', async () => {
    events = [{ ...event, created_at: 12 }];
    await expect(request(`${url}/v1/subscriptions/${ID}/events`, { key: 'sk_test_x' })).rejects.toThrow(
      /\/0\/created_at must be string/,
    );
  });

  it('checks answers of no documented operation against the error shape', async () => {
    const r = await request(`${url}/v1/no-such-thing`, { key: 'sk_test_x' });
    expect(r.status).toBe(404);
  });
});

describe('checkAgainst', () => {
  const checker = openApiValidator(doc);
  const json = (body: unknown) => ({
    contentType: 'application/json; charset=utf-8',
    body,
    text: JSON.stringify(body),
  });
  const check = (method: string, p: string, status: number, body: unknown) =>
    checkAgainst(checker, method, p, status, json(body));

  it('matches path templates, literal paths first', () => {
    // /offerings/resolve is its own operation, not /offerings/{id}: an offering is no resolution.
    expect(() => check('post', '/offerings/resolve', 200, { customer_id: ID })).toThrow(/POST \/offerings\/resolve/);
  });

  it('refuses a property the document does not declare, and a missing one', () => {
    expect(() => check('get', `/subscriptions/${ID}/events`, 200, [{ ...event, extra: 1 }])).toThrow(
      /must NOT have additional properties/,
    );
    const { triggered_by: _t, ...short } = event;
    expect(() => check('get', `/subscriptions/${ID}/events`, 200, [short])).toThrow(/triggered_by/);
  });

  it('holds 4xx answers to the error shape, and its codes', () => {
    expect(() => check('get', `/payments/${ID}`, 404, error('resource_not_found'))).not.toThrow();
    expect(() => check('get', `/payments/${ID}`, 404, { message: 'not found' })).toThrow(/must have required/);
    expect(() => check('get', `/payments/${ID}`, 404, error('no_such_code'))).toThrow(/must be equal to one of/);
  });

  it('refuses a success status the operation does not document', () => {
    expect(() => check('get', `/payments/${ID}`, 201, {})).toThrow(/status 201 is not documented/);
    expect(() => check('get', '/no-such-thing', 200, {})).toThrow(/no operation of the document/);
  });

  it('refuses a JSON answer that is not JSON', () => {
    expect(() =>
      checkAgainst(checker, 'get', `/payments/${ID}`, 404, { contentType: 'text/html', body: '<p>', text: '<p>' }),
    ).toThrow(/not JSON/);
  });
});

/**
 * No 500 on bad input, anywhere (docs/operations.md). A deterministic fuzz run (fast-check, fixed seed, bounded runs)
 * over every route, method, path parameter, query parameter and body field of schema/openapi.json, every root query
 * and mutation of schema/schema.graphql at POST and GET /graphql, the gateway webhook route, and the gateway
 * sandbox: wrong types, huge and negative numbers, NUL and odd unicode, oversize strings and arrays, deep nesting,
 * bad content types and encodings, odd query strings. Every request must answer below 500, in the API's error
 * shape when it fails, and change no row of the database when it fails. Then the strict-input classes
 * (docs/operations.md) on every route and root field, each with the exact refusal it must get: bodies that are not JSON
 * objects, strings for numbers and booleans, scalars for lists, empty and malformed ids, lone surrogates
 * (strictInputRequests).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import fc from 'fast-check';
import {
  buildSchema,
  getNamedType,
  GraphQLArgument,
  GraphQLField,
  GraphQLInputType,
  GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from 'graphql';
import { Client } from 'pg';
import { getMetadataStorage as validatorMetadata } from 'class-validator';
import { getMetadataStorage as typeGraphQLMetadata } from 'type-graphql';
import { ERROR_CODES } from '../../src/core/errors';
import { MAX_ARGUMENT_LENGTH, MAX_JSON_DEPTH } from '../../src/core/input-limits';
import { createSchema } from '../../src/schema';
import { ADMIN_TOKEN, Client_, TestMerchant, useHarness } from '../harness';
import { expectNoLeak, unknownId } from '../harness/http';
import { SNAPSHOT_TABLES_SQL, snapshotSql as snapshotSqlOf } from '../harness/snapshot';
import { connect, createPayment, pay } from '../payments/helpers';
import { inlineRefs } from '../rest/openapi-inline';

const SEED = 20261108;
/**
 * Requests per REST operation, per GraphQL root field, and for the other targets: about 2,400 requests in all (and
 * about 400 strict-input ones).
 */
const RUNS = { rest: 48, graphql: 14, webhook: 60, sandbox: 90 };

const ROOT = path.join(__dirname, '..', '..');
// Components inlined: the generators below walk plain JSON Schema.
const openapi = inlineRefs(JSON.parse(fs.readFileSync(path.join(ROOT, 'schema/openapi.json'), 'utf8')));
const gqlSchema = buildSchema(fs.readFileSync(path.join(ROOT, 'schema/schema.graphql'), 'utf8'));

// ---------------------------------------------------------------------------------------------------------------
// Values

/** JSON text spliced into a body as is: deep nesting, numbers JSON.stringify cannot write. */
class Raw {
  constructor(readonly json: string) {}
}

/** A GraphQL enum value: a string in JSON, a bare name in a GraphQL literal. */
class EnumValue {
  constructor(readonly name: string) {}
}

function toJson(v: unknown): string {
  if (v instanceof Raw) return v.json;
  if (v instanceof EnumValue) return JSON.stringify(v.name);
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : toJson(x))).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** A GraphQL literal of a value (objects with bare keys; Raw JSON text is a JSON literal too, near enough). */
function toLiteral(v: unknown): string {
  if (v instanceof Raw) return v.json.replace(/"([^"\\]*)":/g, '$1:');
  if (v instanceof EnumValue) return v.name;
  if (Array.isArray(v)) return `[${v.map(toLiteral).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v)
      .filter(([k, x]) => x !== undefined && /^[_A-Za-z][_0-9A-Za-z]*$/.test(k))
      .map(([k, x]) => `${k}: ${toLiteral(x)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const deep = (n: number) =>
  fc.constantFrom(new Raw('['.repeat(n) + ']'.repeat(n)), new Raw('{"a":'.repeat(n) + '"x"' + '}'.repeat(n)));

const oversizeString = fc
  .constantFrom(41, 256, 501, 1001, 2049, 5001, 70_000)
  .chain((n) => fc.constantFrom('x', 'é', '😀', '\u0000', ' ').map((c) => c.repeat(n)));

const strangeString = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '\ud800',
  '\udfff',
  'e\u0301',
  '😀',
  '\u202e',
  '\ufeff',
  'ÿ',
  '\\',
  '"',
  "'; drop table products; --",
  '<script>alert(1)</script>',
  'null',
  'NaN',
  'Infinity',
  '1e309',
  '-1',
  '0x1F',
  '9'.repeat(40),
  '{CHECKOUT_SESSION_ID}',
  'http://',
  'javascript:alert(1)',
  'http://[::1]:80/x',
  'file:///etc/passwd',
  'sk_test_',
  'whsec_',
  'rzp_test_',
  '*',
  'payment.*',
  'ACTIVE',
  'active ',
  'INR',
  'inr',
  '  29  ',
  '2031-02-30T00:00:00Z',
  '-271821-04-20T00:00:00Z',
  '275760-09-13T00:00:01Z',
  '0000-00-00',
  unknownId(),
  unknownId().toUpperCase(),
);

const anyString = fc.oneof(
  { weight: 3, arbitrary: strangeString },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: oversizeString },
);

const oddNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    1.5,
    -1.5,
    99,
    100,
    365,
    366,
    731,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    -(2 ** 53),
    Number.MAX_SAFE_INTEGER + 2,
    1e21,
    1e308,
    -1e308,
    5e-324,
  ),
  fc.constantFrom(
    new Raw('1e999'),
    new Raw('-1e999'),
    new Raw('123456789012345678901234567890'),
    new Raw('-0'),
    new Raw('1E400'),
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const oddContainer = fc.oneof(
  fc.constantFrom(
    [],
    {},
    [null],
    [''],
    { $ne: null },
    { $gt: '' },
    { toString: 'x' },
    { constructor: { prototype: {} } },
  ),
  fc.array(anyString, { maxLength: 4 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 4 }),
  fc.constantFrom(1000, 20_000).map((n) => Array(n).fill('payment.succeeded')),
  fc.constant(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']))),
  fc.constant({ ['k'.repeat(41)]: 'v' }),
  fc.constant({ k: 'v'.repeat(501) }),
  fc.constant({ k: { nested: 'v' } }),
  fc.constant({ 'a\u0000': 'v' }),
  deep(MAX_JSON_DEPTH + 1),
  deep(MAX_JSON_DEPTH - 1),
  deep(100_000),
);

/** Anything a field might be sent instead of what it wants. */
const badValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: anyString },
  { weight: 3, arbitrary: oddNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false) },
  { weight: 3, arbitrary: oddContainer },
);

// ---------------------------------------------------------------------------------------------------------------
// The merchant's real data, so routes with ids reach their records

type IdKind = 'family' | 'product' | 'plan' | 'price' | 'connection' | 'payment' | 'customer' | 'endpoint' | 'delivery';
let ids: Record<IdKind, string>;
let otherIds: string[];

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A plausible value for a field, by its name (REST snake_case). */
function goodByName(name: string): unknown {
  const n = snake(name);
  if (n.endsWith('email')) return 'fuzz@example.com';
  if (n.endsWith('_url')) return 'https://merchant.example/done?p={PAYMENT_ID}';
  if (n === 'url') return 'http://127.0.0.1:9/fuzz-hook';
  if (n.endsWith('currency')) return 'INR';
  if (n.endsWith('state_code')) return '29';
  if (n.endsWith('gstin')) return '29ABCDE1234F1ZW';
  if (n.endsWith('phone')) return '+919876543210';
  if (n === 'mode') return 'test';
  if (n === 'enabled_events') return ['payment.*'];
  if (n === 'metadata') return { order: '42' };
  if (n === 'to') return '2031-01-01T00:00:00Z';
  if (n === 'seconds') return 3600;
  if (n === 'grace_seconds') return 86_400;
  if (n === 'amount') return 10_000;
  if (n === 'setup_fee') return 0;
  if (n === 'billing_interval' || n === 'max_cycles') return 1;
  if (n === 'trial_period_days') return 0;
  if (n === 'secret_key') return `sk_test_${'f'.repeat(24)}`;
  if (n === 'webhook_secret') return `whsec_${'f'.repeat(24)}`;
  if (n === 'key_id') return `rzp_test_${'f'.repeat(8)}`;
  if (n === 'key_secret') return 'f'.repeat(16);
  return undefined;
}

/** The id a path, field or argument name refers to. */
function idFor(name: string): string {
  const n = snake(name).replace(/_id$/, '');
  const kinds: Record<string, IdKind> = {
    product_families: 'family',
    product_family: 'family',
    products: 'product',
    product: 'product',
    plans: 'plan',
    plan: 'plan',
    prices: 'price',
    price: 'price',
    connections: 'connection',
    provider_connection: 'connection',
    payments: 'payment',
    payment: 'payment',
    customers: 'customer',
    customer: 'customer',
    endpoints: 'endpoint',
    endpoint: 'endpoint',
    webhook_endpoint: 'endpoint',
    deliveries: 'delivery',
    delivery: 'delivery',
    webhook_delivery: 'delivery',
  };
  return ids[kinds[n] ?? 'product'];
}

const idVariant = (real: () => string) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(null).map(() => real()) },
    { weight: 1, arbitrary: fc.constant(null).map(() => unknownId()) },
    { weight: 1, arbitrary: fc.constantFrom(...[0, 1, 2]).map((i) => otherIds[i]) },
    { weight: 1, arbitrary: fc.constant(null).map(() => real().toUpperCase()) },
    { weight: 3, arbitrary: anyString },
  );

// ---------------------------------------------------------------------------------------------------------------
// Requests

interface FuzzRequest {
  target: 'rest' | 'graphql' | 'sandbox';
  label: string;
  method: string;
  /** Path and query, on the API (or the sandbox). `{KEY}` in headers is the merchant's current test key. */
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /**
   * The refusal a strict-input request must get (strictInputRequests); `param` undefined: not checked. `loose`: a
   * refusal (4xx) naming another field is fine too, when a check of that field may come first.
   */
  refusal?: { status: number; code: string; param?: string | null; loose?: boolean };
}

/** Percent-encoded text; lone surrogates (which encodeURIComponent refuses) go as U+FFFD plus one surrogate's bytes. */
const encodeText = (s: string): string => {
  try {
    return encodeURIComponent(s);
  } catch {
    return (
      encodeURIComponent(
        s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
      ) + '%ED%A0%80'
    );
  }
};

const pathSegment = (v: unknown): string => {
  if (typeof v !== 'string') return encodeURIComponent(String(v));
  if (/^%|%[0-9A-Z]{0,2}$|\.\./.test(v)) return v; // deliberately odd encodings
  return encodeText(v);
};

const queryPart = (name: string, v: unknown): string =>
  Array.isArray(v)
    ? v.map((x) => queryPart(name, x)).join('&')
    : `${encodeURIComponent(name)}=${pathSegment(typeof v === 'string' ? v : toJson(v))}`;

/** How the body travels: mostly as JSON, sometimes compressed, mislabelled, or broken. */
const transport = fc.oneof(
  { weight: 12, arbitrary: fc.constant('json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'gzip-plain',
      'br-plain',
      'deflate-plain',
      'zstd-plain',
      'bogus-encoding',
      'gzip+br-plain',
      'gzip-ok',
      'br-ok',
      'deflate-ok',
      'gzip-truncated',
      'no-type',
      'text/plain',
      'form',
      'latin1',
      'utf-16',
      'bogus-charset',
      'multipart',
      'bom',
      'truncated',
      'trailing',
      'empty',
      'invalid-utf8',
      'over-1mib',
      'gzip-bomb',
    ),
  },
);

function encodeBody(json: string, how: string): { body?: string | Buffer; headers: Record<string, string> } {
  const type = { 'content-type': 'application/json' };
  switch (how) {
    case 'gzip-plain':
      return { body: json, headers: { ...type, 'content-encoding': 'gzip' } };
    case 'br-plain':
      return { body: json, headers: { ...type, 'content-encoding': 'br' } };
    case 'deflate-plain':
      return { body: json, headers: { ...type, 'content-encoding': 'deflate' } };
    case 'zstd-plain':
      return { body: json, headers: { ...type, 'content-encoding': 'zstd' } };
    case 'bogus-encoding':
      return { body: json, headers: { ...type, 'content-encoding': 'x-fuzz' } };
    case 'gzip+br-plain':
      return { body: json, headers: { ...type, 'content-encoding': 'gzip, br' } };
    case 'gzip-ok':
      return { body: zlib.gzipSync(json), headers: { ...type, 'content-encoding': 'gzip' } };
    case 'br-ok':
      return { body: zlib.brotliCompressSync(json), headers: { ...type, 'content-encoding': 'br' } };
    case 'deflate-ok':
      return { body: zlib.deflateSync(json), headers: { ...type, 'content-encoding': 'deflate' } };
    case 'gzip-truncated': {
      const z = zlib.gzipSync(json);
      return { body: z.subarray(0, Math.max(1, z.length - 6)), headers: { ...type, 'content-encoding': 'gzip' } };
    }
    case 'gzip-bomb':
      return {
        body: zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 0x20)),
        headers: { ...type, 'content-encoding': 'gzip' },
      };
    case 'no-type':
      return { body: Buffer.from(json), headers: {} };
    case 'text/plain':
      return { body: json, headers: { 'content-type': 'text/plain' } };
    case 'form':
      return { body: json, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    case 'latin1':
      return { body: json, headers: { 'content-type': 'application/json; charset=latin1' } };
    case 'utf-16':
      return { body: Buffer.from(json, 'utf16le'), headers: { 'content-type': 'application/json; charset=utf-16' } };
    case 'bogus-charset':
      return { body: json, headers: { 'content-type': 'application/json; charset=x-fuzz' } };
    case 'multipart':
      return { body: json, headers: { 'content-type': 'multipart/form-data; boundary=fuzz' } };
    case 'bom':
      return { body: `\ufeff${json}`, headers: type };
    case 'truncated':
      return { body: json.slice(0, Math.floor(json.length / 2)), headers: type };
    case 'trailing':
      return { body: `${json} }`, headers: type };
    case 'empty':
      return { body: '', headers: type };
    case 'invalid-utf8':
      return {
        body: Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('"}')]),
        headers: type,
      };
    case 'over-1mib':
      return { body: `{"pad":"${'x'.repeat(1024 * 1024)}"}`, headers: type };
    default:
      return { body: json, headers: type };
  }
}

const auth = fc.oneof(
  { weight: 30, arbitrary: fc.constant('Bearer {KEY}') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      'Bearer ',
      'Basic Zm9vOmJhcg==',
      `Bearer ${ADMIN_TOKEN}`,
      'Bearer {LIVE}',
      'Bearer {KEY} x',
      `Bearer sk_test_${'x'.repeat(5000)}`,
    ),
  },
);

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
}

/** A valid value of a JSON schema (by field name where the type says too little). */
function goodFor(name: string, schema: JsonSchema): unknown {
  const byName = goodByName(name);
  if (byName !== undefined) return byName;
  if (schema.enum) return schema.enum.find((e) => e !== null);
  const type = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  if (schema.format === 'uuid') return idFor(name);
  if (type === 'object') {
    return Object.fromEntries(
      Object.entries(schema.properties ?? {})
        .map(([k, s]) => [k, goodFor(k, s)])
        .filter(([, v]) => v !== undefined),
    );
  }
  if (type === 'array') return [goodFor(name, schema.items ?? {})];
  if (type === 'integer') return 10;
  if (type === 'boolean') return true;
  if (type === 'string') return `Fuzz ${name}`;
  return undefined;
}

/** A body for a JSON schema: valid, then some fields swapped for bad values, dropped, or joined by unknown ones. */
function bodyArbitrary(schema: JsonSchema): fc.Arbitrary<unknown> {
  const props = schema.properties ?? {};
  const names = Object.keys(props);
  const good = () => goodFor('', schema) as Record<string, unknown>;
  const field = (k: string): fc.Arbitrary<unknown> => {
    const s = props[k];
    const nested = (Array.isArray(s.type) ? s.type.includes('object') : s.type === 'object') && s.properties;
    return nested ? fc.oneof(bodyArbitrary(s), badValue) : badValue;
  };
  const mutated = names.length
    ? fc
        .uniqueArray(fc.constantFrom(...names), { minLength: 1, maxLength: Math.min(3, names.length) })
        .chain((keys) => fc.tuple(...keys.map((k) => field(k).map((v) => [k, v] as const))))
        .map((pairs) => ({ ...good(), ...Object.fromEntries(pairs) }))
    : fc.constant({});
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(null).map(good) },
    { weight: 10, arbitrary: mutated },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...(schema.required?.length ? schema.required : ['']))
        .map((k) => Object.fromEntries(Object.entries(good()).filter(([n]) => n !== k))),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            'bogus_field',
            '__proto__',
            'constructor',
            '',
            'a\u0000',
            'customerEmail',
            'ID',
            'x'.repeat(300),
          ),
          badValue,
        )
        .map(([k, v]) => ({ ...good(), [k]: v })),
    },
    {
      weight: 2,
      arbitrary: fc.oneof(fc.constantFrom([good()], 'text', 42, true, new Raw('null'), new Raw('[]')), deep(100_000)),
    },
  );
}

function restOperations(): { method: string; path: string; op: any }[] {
  const out: { method: string; path: string; op: any }[] = [];
  for (const [p, methods] of Object.entries<any>(openapi.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) out.push({ method: method.toUpperCase(), path: p, op });
  }
  return out;
}

function restArbitrary(method: string, template: string, op: any): fc.Arbitrary<FuzzRequest> {
  const params: any[] = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const idempotent = params.some((p) => p.in === 'header' && p.name === 'Idempotency-Key');
  const schema: JsonSchema | undefined = op.requestBody?.content?.['application/json']?.schema;
  const admin = (op.security ?? []).some((s: any) => 'operatorToken' in s);
  const segments = template.split('/');
  const resource = segments[segments.indexOf('{id}') - 1] ?? ''; // /webhooks/endpoints/{id}/toggle -> endpoints

  const pathArb = fc.tuple(...pathParams.map(() => idVariant(() => idFor(resource)))).map((values) => {
    let i = 0;
    return template.replace(/\{\w+\}/g, () => pathSegment(values[i++]));
  });
  const paramValue = (p: any): fc.Arbitrary<unknown> =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      {
        weight: 2,
        arbitrary: fc
          .constant(null)
          .map(() =>
            p.schema?.format === 'uuid' || p.name.endsWith('_id')
              ? idFor(p.name)
              : (goodFor(p.name, p.schema ?? {}) ?? 'x'),
          ),
      },
      { weight: 3, arbitrary: anyString },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '1',
          '100',
          '101',
          '0',
          '-1',
          '1e3',
          '01',
          ' 5',
          '5 ',
          '99999999999999999999',
          '0x10',
          '1.0',
          'true',
          'TEST',
        ),
      },
      { weight: 1, arbitrary: fc.tuple(anyString, anyString) }, // repeated: a=1&a=2
    );
  const oddQuery = fc.oneof(
    { weight: 5, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '&',
        '&&=&',
        '=x',
        'a[]=1',
        'limit[]=1',
        'limit[a]=1',
        'cursor[]=',
        '%',
        '%ZZ=1',
        'limit=%00',
        `q=${'9'.repeat(8000)}`,
        'bogus=1',
        '__proto__[x]=1',
      ),
    },
  );
  const queryArb = fc
    .tuple(fc.tuple(...queryParams.map((p) => paramValue(p).map((v) => [p.name, v] as const))), oddQuery)
    .map(([pairs, odd]) => {
      const parts = pairs.filter(([, v]) => v !== undefined).map(([k, v]) => queryPart(k, v));
      if (odd) parts.push(odd);
      return parts.length ? `?${parts.join('&')}` : '';
    });
  const bodyArb: fc.Arbitrary<unknown> = schema
    ? bodyArbitrary(schema)
    : fc.oneof(
        { weight: 5, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: bodyArbitrary({ type: 'object', properties: {} }) },
      );
  const idemArb = idempotent
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: fc.uuid().map((u) => `fuzz-${u}`) },
        {
          weight: 1,
          arbitrary: fc.constantFrom('', ' ', 'k'.repeat(255), 'k'.repeat(256), 'café', 'fuzz-reused', 'a\tb'),
        },
      )
    : fc.constant(undefined);
  return fc
    .record({ p: pathArb, q: queryArb, body: bodyArb, how: transport, auth, idem: idemArb })
    .map(({ p, q, body, how, auth: a, idem }) => {
      const headers: Record<string, string> = {};
      const authorization = admin && a === 'Bearer {KEY}' ? `Bearer ${ADMIN_TOKEN}` : a;
      if (authorization) headers.authorization = authorization;
      if (idem !== undefined) headers['idempotency-key'] = idem;
      let sent: { body?: string | Buffer; headers: Record<string, string> } = { headers: {} };
      // fetch sends no body with a GET; a DELETE may carry one.
      if (method !== 'GET' && (body !== undefined || (method === 'POST' && how !== 'json')))
        sent = encodeBody(body === undefined ? '' : toJson(body), how);
      return {
        target: 'rest' as const,
        label: `${method} ${template} [${how}]`,
        method,
        url: `/v1${p}${q}`,
        headers: { ...headers, ...sent.headers },
        body: sent.body,
      };
    });
}

// GraphQL: every root query and mutation, its arguments as variables (or inline literals), good and bad values.

function gqlGood(name: string, type: GraphQLInputType, field: string): unknown {
  if (isNonNullType(type)) return gqlGood(name, type.ofType, field);
  if (isListType(type)) return [gqlGood(name, type.ofType, field)];
  if (isEnumType(type)) return new EnumValue(type.getValues()[0].name);
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .map((f) => [f.name, gqlGood(f.name, f.type, field)])
        .filter(([, v]) => v !== undefined),
    );
  }
  const byName = goodByName(name);
  if (byName !== undefined) return byName;
  switch (type.name) {
    case 'ID':
      return idFor(name === 'id' ? field : name);
    case 'Int':
      return name === 'first' ? 10 : 1;
    case 'SafeInt':
      return 10_000;
    case 'Boolean':
      return true;
    case 'DateTimeISO':
      return '2031-01-01T00:00:00Z';
    case 'JSONObject':
      return { order: '42' };
    default:
      return `Fuzz ${name}`;
  }
}

function gqlValue(name: string, type: GraphQLInputType, field: string): fc.Arbitrary<unknown> {
  const inner = isNonNullType(type) ? type.ofType : type;
  if (isInputObjectType(inner)) {
    const fields = Object.values(inner.getFields());
    return fc.oneof(
      { weight: 1, arbitrary: fc.constant(null).map(() => gqlGood(name, inner, field)) },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            ...fields.map((f) =>
              fc.oneof(
                { weight: 3, arbitrary: fc.constant(null).map(() => gqlGood(f.name, f.type, field)) },
                { weight: 1, arbitrary: gqlValue(f.name, f.type, field) },
                { weight: 1, arbitrary: fc.constant(undefined) },
              ),
            ),
          )
          .map((vs) => Object.fromEntries(fields.map((f, i) => [f.name, vs[i]]))),
      },
      { weight: 1, arbitrary: badValue },
    );
  }
  const named = getNamedType(type);
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(null).map(() => gqlGood(name, type, field)) },
    { weight: 1, arbitrary: named.name === 'ID' ? idVariant(() => idFor(name === 'id' ? field : name)) : anyString },
    { weight: 2, arbitrary: badValue },
    { weight: 1, arbitrary: fc.constant('x'.repeat(900_000)) },
  );
}

function selectionOf(field: GraphQLField<unknown, unknown>): string {
  const t = getNamedType(field.type);
  if (!isObjectType(t)) return '';
  const fields = t.getFields();
  return `{ __typename${'secretKey' in fields ? ' secretKey' : ''}${'id' in fields ? ' id' : ''} }`;
}

function graphqlArbitrary(
  kind: 'query' | 'mutation',
  field: GraphQLField<unknown, unknown>,
): fc.Arbitrary<FuzzRequest> {
  const args: readonly GraphQLArgument[] = field.args;
  const values = fc.tuple(
    ...args.map((a) =>
      fc.oneof(
        { weight: 4, arbitrary: gqlValue(a.name, a.type, field.name) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
    ),
  );
  const how = fc.oneof(
    { weight: 8, arbitrary: fc.constant('variables') },
    { weight: 2, arbitrary: fc.constant('inline') },
    { weight: kind === 'query' ? 2 : 1, arbitrary: fc.constant('get') },
    { weight: 2, arbitrary: transport.filter((x) => x !== 'json') },
  );
  return fc.record({ vs: values, how, auth }).map(({ vs, how: h, auth: a }) => {
    const headers: Record<string, string> = {};
    const authorization = field.name === 'createMerchant' && a === 'Bearer {KEY}' ? `Bearer ${ADMIN_TOKEN}` : a;
    if (authorization) headers.authorization = authorization;
    const given = args.map((arg, i) => [arg, vs[i]] as const).filter(([, v]) => v !== undefined);
    let query: string;
    let variables: Record<string, unknown> | undefined;
    if (h === 'inline') {
      query = `${kind} { ${field.name}${given.length ? `(${given.map(([arg, v]) => `${arg.name}: ${toLiteral(v)}`).join(', ')})` : ''} ${selectionOf(field)} }`;
    } else {
      const defs = given.map(([arg]) => `$${arg.name}: ${arg.type.toString()}`).join(', ');
      query = `${kind} Fuzz${defs ? `(${defs})` : ''} { ${field.name}${given.length ? `(${given.map(([arg]) => `${arg.name}: $${arg.name}`).join(', ')})` : ''} ${selectionOf(field)} }`;
      variables = Object.fromEntries(given.map(([arg, v]) => [arg.name, v]));
    }
    const label = `GraphQL ${kind} ${field.name} [${h}]`;
    if (h === 'get') {
      const qs = `query=${encodeURIComponent(query)}${variables ? `&variables=${encodeText(toJson(variables))}` : ''}`;
      return {
        target: 'graphql' as const,
        label,
        method: 'GET',
        url: `/graphql?${qs}`,
        headers: { ...headers, 'apollo-require-preflight': 'true' },
      };
    }
    const json = toJson({ query, variables });
    const sent = encodeBody(json, h === 'variables' || h === 'inline' ? 'json' : h);
    return {
      target: 'graphql' as const,
      label,
      method: 'POST',
      url: '/graphql',
      headers: { ...headers, ...sent.headers },
      body: sent.body,
    };
  });
}

/** Whole-request oddities GraphQL must answer as errors. */
function graphqlSpecials(): FuzzRequest[] {
  const post = (label: string, body: unknown, extra: Record<string, string> = {}): FuzzRequest => ({
    target: 'graphql',
    label: `GraphQL ${label}`,
    method: 'POST',
    url: '/graphql',
    headers: { authorization: 'Bearer {KEY}', 'content-type': 'application/json', ...extra },
    body: typeof body === 'string' ? body : toJson(body),
  });
  const get = (label: string, qs: string): FuzzRequest => ({
    target: 'graphql',
    label: `GraphQL GET ${label}`,
    method: 'GET',
    url: `/graphql?${qs}`,
    headers: { authorization: 'Bearer {KEY}', 'apollo-require-preflight': 'true', accept: 'application/json' },
  });
  const two = 'query A { products { totalCount } } query B { customers { totalCount } }';
  const list: FuzzRequest[] = [
    post('subscription over POST', { query: 'subscription { paymentUpdated { id } }' }),
    post('subscription over POST, named', {
      query: 'subscription S { paymentUpdated(id: "x") { id } }',
      operationName: 'S',
    }),
    get('subscription', `query=${encodeURIComponent('subscription { paymentUpdated { id } }')}`),
    get('mutation', `query=${encodeURIComponent('mutation { rollApiKey { secretKey } }')}`),
    post('two operations, no operationName', { query: two }),
    post('two catalog operations, no operationName', {
      query: 'query A { products { totalCount } } query B { product(id: "x") { id } }',
    }),
    post('unknown operationName', { query: 'query A { products { totalCount } }', operationName: 'Nope' }),
    post('unknown operationName of two', { query: two, operationName: 'C' }),
    post('operationName a number', { query: two, operationName: 1 }),
    post('operationName an object', { query: two, operationName: { a: 1 } }),
    post('operationName null with two', { query: two, operationName: null }),
    get('two operations', `query=${encodeURIComponent(two)}`),
    get('unknown operationName', `query=${encodeURIComponent(two)}&operationName=Nope`),
    post('no query', {}),
    post('query null', { query: null }),
    post('query a number', { query: 42 }),
    post('query an array', { query: ['{ products { totalCount } }'] }),
    post('query an object', { query: { kind: 'Document' } }),
    post('empty query', { query: '' }),
    post('variables a string', { query: '{ products { totalCount } }', variables: '{"a":1}' }),
    post('variables an array', { query: '{ products { totalCount } }', variables: [1, 2] }),
    post('variables a number', { query: '{ products { totalCount } }', variables: 7 }),
    post('variables deep', {
      query: 'query($a: JSONObject) { products { totalCount } }',
      variables: { a: new Raw('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)) },
    }),
    post('variables deep list', {
      query: 'query($s: [String]) { products { totalCount } }',
      variables: { s: new Raw('['.repeat(100_000) + ']'.repeat(100_000)) },
    }),
    post('variables just too deep', {
      query: 'query($a: JSONObject) { products { totalCount } }',
      variables: { a: new Raw('{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1)) },
    }),
    post('catalog query, deep variables', {
      query: 'query($id: ID!) { product(id: $id) { id } }',
      variables: { id: '1', x: new Raw('['.repeat(100_000) + ']'.repeat(100_000)) },
    }),
    post('extensions junk', {
      query: '{ products { totalCount } }',
      extensions: { persistedQuery: { version: 1, sha256Hash: 'x' } },
    }),
    post('extensions deep', {
      query: '{ products { totalCount } }',
      extensions: new Raw('['.repeat(100_000) + ']'.repeat(100_000)),
    }),
    post('batch', [{ query: '{ products { totalCount } }' }, { query: '{ customers { totalCount } }' }]),
    post('body a string', '"{ products { totalCount } }"'),
    post('deep selection text', { query: `{ ${'products { edges { node { '.repeat(400)}id${' } } }'.repeat(400)} }` }),
    post('selection text just under the nesting limit', {
      query: `{ ${'products { edges { node { '.repeat(160)}id${' } } }'.repeat(160)} }`,
    }),
    post('list literal just under the nesting limit', {
      query: `{ products(status: ${'['.repeat(490)}ACTIVE${']'.repeat(490)}) { totalCount } }`,
    }),
    post('object literal just under the nesting limit', {
      query: `mutation { createPayment(input: { amount: 10000, customerEmail: "a@b.co", successUrl: "https://a.b", cancelUrl: "https://a.b", metadata: ${'{a: '.repeat(490)}1${'}'.repeat(490)} }) { id } }`,
    }),
    post('deep list literal', {
      query: `{ products(status: ${'['.repeat(2400)}ACTIVE${']'.repeat(2400)}) { totalCount } }`,
    }),
    post('deep object literal', {
      query: `mutation { createPayment(input: { amount: 10000, customerEmail: "a@b.co", successUrl: "https://a.b", cancelUrl: "https://a.b", metadata: ${'{a: '.repeat(1200)}1${'}'.repeat(1200)} }) { id } }`,
    }),
    post('literal just too deep', {
      query: `mutation { createPayment(input: { amount: 10000, customerEmail: "a@b.co", successUrl: "https://a.b", cancelUrl: "https://a.b", metadata: ${'{a: '.repeat(40)}"x"${'}'.repeat(40)} }) { id } }`,
    }),
    post('token limit', { query: `{ ${'__typename '.repeat(6000)} }` }),
    post('900 KB filter', {
      query: 'query($e: String) { customers(email: $e) { totalCount } }',
      variables: { e: 'x'.repeat(900_000) },
    }),
    post('900 KB filter inline', { query: `{ customers(email: "${'x'.repeat(900_000)}") { totalCount } }` }),
    post('900 KB id', { query: 'query($id: ID!) { payment(id: $id) { id } }', variables: { id: 'x'.repeat(900_000) } }),
    post('900 KB cursor', {
      query: 'query($a: String) { products(after: $a) { totalCount } }',
      variables: { a: 'x'.repeat(900_000) },
    }),
    post('many aliases', {
      query: `{ ${Array.from({ length: 200 }, (_, i) => `a${i}: products { totalCount }`).join(' ')} }`,
    }),
    post('deep introspection', { query: `{ __schema { types { ${'ofType { '.repeat(60)}name${' }'.repeat(60)} } } }` }),
    post('unknown directive', { query: '{ products @fuzz { totalCount } }' }),
    post('syntax error', { query: '{ products { ' }),
    post('NUL in query', { query: '{ products { totalCount } }\u0000' }),
    post('lone surrogate in query', { query: '{ customers(email: "\ud800") { totalCount } }' }),
    post('createMerchant with a merchant key', { query: 'mutation { createMerchant(input: { name: "x" }) { id } }' }),
    post(
      'createMerchant, 300-char name',
      { query: `mutation { createMerchant(input: { name: "${'x'.repeat(300)}" }) { id } }` },
      { authorization: `Bearer ${ADMIN_TOKEN}` },
    ),
    post('introspection', { query: '{ __schema { queryType { name } } }' }),
    post('no auth', { query: '{ products { totalCount } }' }, { authorization: '' }),
  ];
  return list;
}

// Strict input (docs/operations.md): each class on every route and root field, each
// request with the one refusal it must get. Deterministic, drawn when its turn comes (the ids of that moment).

const HIGH = '\ud800';
const LOW = 'x\udfff';

/** The schema's type, without null (`["string", "null"]` -> "string"). */
const typeOf = (schema: JsonSchema): string | undefined =>
  Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;

/**
 * Fields of a REST body schema to mutate, by their `param` (REST's path to them): top-level fields, an object
 * field's fields, and the first item's fields of an array of objects (`events[0].quantity`).
 */
function bodyFields(schema: JsonSchema): { param: string; path: (string | number)[]; schema: JsonSchema }[] {
  const out: { param: string; path: (string | number)[]; schema: JsonSchema }[] = [];
  for (const [k, f] of Object.entries(schema.properties ?? {})) {
    out.push({ param: k, path: [k], schema: f });
    if (typeOf(f) === 'object' && f.properties) {
      for (const [k2, f2] of Object.entries(f.properties)) out.push({ param: `${k}.${k2}`, path: [k, k2], schema: f2 });
    }
    if (typeOf(f) === 'array' && f.items && typeOf(f.items) === 'object' && f.items.properties) {
      for (const [k2, f2] of Object.entries(f.items.properties))
        out.push({ param: `${k}[0].${k2}`, path: [k, 0, k2], schema: f2 });
    }
  }
  return out;
}

/** A valid value of a JSON schema, as goodFor, with numbers and date-times too (so a mutation is the only fault). */
function strictGood(name: string, schema: JsonSchema): unknown {
  const byName = goodByName(name);
  if (byName !== undefined) return byName;
  const type = typeOf(schema);
  if ((schema as { format?: string }).format === 'date-time') return '2031-01-01T00:00:00Z';
  if (type === 'number') return 10;
  if (type === 'object' && schema.properties) {
    return Object.fromEntries(
      Object.entries(schema.properties)
        .map(([k, f]) => [k, strictGood(k, f)])
        .filter(([, v]) => v !== undefined),
    );
  }
  if (type === 'array' && schema.items && !schema.enum) return [strictGood(name, schema.items)];
  return goodFor(name, schema);
}

/** A valid GraphQL value, as gqlGood, with Float and by-name lists (`enabledEvents`) too. */
function strictGqlGood(name: string, type: GraphQLInputType, field: string): unknown {
  if (isNonNullType(type)) return strictGqlGood(name, type.ofType, field);
  if (isListType(type)) {
    const byName = goodByName(name);
    return Array.isArray(byName) ? byName : [strictGqlGood(name, type.ofType, field)];
  }
  if (isInputObjectType(type)) {
    return Object.fromEntries(
      Object.values(type.getFields())
        .map((f) => [f.name, strictGqlGood(f.name, f.type, field)])
        .filter(([, v]) => v !== undefined),
    );
  }
  return type.name === 'Float' ? 10 : gqlGood(name, type, field);
}

/** A deep copy of plain objects and arrays (EnumValue and Raw kept as they are). */
const copyOf = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(copyOf)
    : v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copyOf(x)]))
      : v;

/** A copy of `value` with `v` at `path` (containers on the way made when missing). */
function setAt(value: unknown, path: (string | number)[], v: unknown): unknown {
  const copy = copyOf(value ?? {}) as any;
  let at = copy;
  for (let i = 0; i < path.length - 1; i++) {
    at[path[i]] ??= typeof path[i + 1] === 'number' ? [] : {};
    at = at[path[i]];
  }
  at[path[path.length - 1]] = v;
  return copy;
}

/** Locations in a root field's arguments where ids and strings go (GraphQL names), two input levels deep, lists' first item. */
function gqlLocations(
  args: readonly GraphQLArgument[],
): { path: (string | number)[]; kind: 'id' | 'string' | 'json' }[] {
  const out: { path: (string | number)[]; kind: 'id' | 'string' | 'json' }[] = [];
  const walk = (type: GraphQLInputType, path: (string | number)[], depth: number) => {
    const inner = isNonNullType(type) ? type.ofType : type;
    if (isListType(inner)) return walk(inner.ofType, [...path, 0], depth);
    if (isInputObjectType(inner)) {
      if (depth < 2) for (const f of Object.values(inner.getFields())) walk(f.type, [...path, f.name], depth + 1);
      return;
    }
    const name = getNamedType(inner).name;
    if (name === 'ID') out.push({ path, kind: 'id' });
    else if (name === 'String') out.push({ path, kind: 'string' });
    else if (name === 'JSONObject') out.push({ path, kind: 'json' });
  };
  for (const a of args) walk(a.type, [a.name], 0);
  return out;
}

/** The API's `param` for a GraphQL argument path (src/core/errors.ts paramFromPath). */
const gqlParam = (path: (string | number)[]): string =>
  path
    .slice(path[0] === 'input' ? 1 : 0)
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${snake(p)}`))
    .join('');

function strictInputRequests(): FuzzRequest[] {
  const out: FuzzRequest[] = [];
  const refused = (param: string | null | undefined, code = 'parameter_invalid', status = 400) => ({
    status,
    code,
    param,
  });
  let turn = 0; // rotates the variants of a class over the routes
  const json = { 'content-type': 'application/json' };

  // REST: every route (bodies; for GET, the query string).
  for (const { method, path: template, op } of restOperations()) {
    const schema: JsonSchema | undefined = op.requestBody?.content?.['application/json']?.schema;
    const params: any[] = op.parameters ?? [];
    const admin = (op.security ?? []).some((x: any) => 'operatorToken' in x);
    const segments = template.split('/');
    const resource = segments[segments.indexOf('{id}') - 1] ?? '';
    const url = `/v1${template.replace(/\{\w+\}/g, () => idFor(resource))}`;
    const headers = { authorization: admin ? `Bearer ${ADMIN_TOKEN}` : 'Bearer {KEY}', ...json };
    const rest = (label: string, body: string, refusal: FuzzRequest['refusal']): FuzzRequest => ({
      target: 'rest',
      label: `strict ${method} ${template} ${label}`,
      method,
      url,
      headers,
      body,
      refusal,
    });
    if (method === 'GET') {
      // Percent-encoded bytes that are not UTF-8 (a surrogate's) in a query parameter.
      const query = params.filter((p) => p.in === 'query');
      if (query.length) {
        const p = query[turn++ % query.length];
        out.push({
          ...rest('query string %ED%A0%80', '', refused(p.name)),
          url: `${url}?${p.name}=%ED%A0%80`,
          body: undefined,
        });
      }
      continue;
    }
    // A body that is not a JSON object: an array or null, and a scalar (test/http/strict-input.test.ts: each on each).
    for (const body of [['[]', 'null', '[{}]'][turn % 3], ['"x"', '1', 'true', 'false', '0'][turn++ % 5]]) {
      out.push(rest(`body ${body}`, body, refused(null)));
    }
    if (!schema) continue;
    const good = strictGood('', schema);
    const strings: string[] = [];
    for (const f of bodyFields(schema)) {
      const type = typeOf(f.schema);
      const value = (v: unknown) => toJson(setAt(good, f.path, v));
      // A string where a number or a boolean goes.
      if (type === 'integer' || type === 'number') out.push(rest(`${f.param} "10"`, value('10'), refused(f.param)));
      if (type === 'boolean') out.push(rest(`${f.param} "true"`, value('true'), refused(f.param)));
      // A scalar where a list goes (GraphQL would make it a list of one).
      if (type === 'array') {
        const item = strictGood(f.param, f.schema.items ?? {}) ?? 'x';
        out.push(rest(`${f.param} a scalar`, value(Array.isArray(item) ? item[0] : item), refused(f.param)));
      }
      // Empty and malformed ids: "" is refused naming the field; a malformed one names nothing (404 naming the
      // field, unless a check of another field comes first: loose).
      const uuids = f.schema.format === 'uuid' ? '' : f.schema.items?.format === 'uuid' ? '[0]' : null;
      if (uuids !== null) {
        const at = (v: string) => (uuids ? [v] : v);
        out.push(rest(`${f.param} ""`, value(at('')), refused(`${f.param}${uuids}`)));
        const malformed = refused(`${f.param}${uuids}`, 'resource_not_found', 404);
        out.push(
          rest(`${f.param} malformed`, value(at(turn++ % 2 ? 'not-an-id' : ' ')), { ...malformed, loose: true }),
        );
      }
      if (type === 'string' || uuids === '[0]') strings.push(f.param);
      // A lone surrogate in a key of a free-form object: named by the object.
      if (type === 'object' && !f.schema.properties)
        out.push(rest(`${f.param} key lone surrogate`, value({ [HIGH]: 'v' }), refused(f.param)));
    }
    // A lone surrogate (high, low) in string fields: up to two per route, rotating.
    for (let i = 0; i < Math.min(2, strings.length); i++) {
      const param = strings[(turn + i) % strings.length];
      const f = bodyFields(schema).find((x) => x.param === param)!;
      const list = f.schema.items?.format === 'uuid' || typeOf(f.schema) === 'array';
      const text = (turn + i) % 2 ? LOW : HIGH;
      out.push(
        rest(
          `${param} lone surrogate`,
          toJson(setAt(good, f.path, list ? [text] : text)),
          refused(list ? `${param}[0]` : param),
        ),
      );
    }
    // In a key of the body itself: an unknown parameter (every third route).
    if (turn++ % 3 === 0)
      out.push(
        rest('key lone surrogate', toJson({ ...(good as object), [LOW]: 1 }), refused(undefined, 'parameter_unknown')),
      );
  }

  // GraphQL: every root query and mutation; variables, and a few inline literals.
  for (const [kind, type] of [
    ['query', gqlSchema.getQueryType()],
    ['mutation', gqlSchema.getMutationType()],
  ] as const) {
    for (const field of Object.values(type!.getFields())) {
      const args = field.args;
      const locations = gqlLocations(args);
      if (!locations.length) continue;
      const defs = args.map((a) => `$${a.name}: ${a.type.toString()}`).join(', ');
      const query = `${kind} Strict(${defs}) { ${field.name}(${args.map((a) => `${a.name}: $${a.name}`).join(', ')}) ${selectionOf(field)} }`;
      const good = Object.fromEntries(args.map((a) => [a.name, strictGqlGood(a.name, a.type, field.name)]));
      const authorization = field.name === 'createMerchant' ? `Bearer ${ADMIN_TOKEN}` : 'Bearer {KEY}';
      const gql = (label: string, variables: unknown, refusal: FuzzRequest['refusal']): FuzzRequest => ({
        target: 'graphql',
        label: `strict GraphQL ${field.name} ${label}`,
        method: 'POST',
        url: '/graphql',
        headers: { authorization, ...json },
        body: toJson({ query, variables }),
        refusal,
      });
      const at = (path: (string | number)[], v: unknown) => setAt(good, path, v);
      // One id location (rotating): "". One text location (rotating), high or low. One free-form object's key.
      const idLocations = locations.filter((x) => x.kind === 'id');
      if (idLocations.length) {
        const l = idLocations[turn % idLocations.length];
        out.push(gql(`${gqlParam(l.path)} ""`, at(l.path, ''), refused(gqlParam(l.path))));
      }
      const texts = locations.filter((x) => x.kind !== 'json');
      if (texts.length) {
        const l = texts[turn % texts.length];
        out.push(
          gql(`${gqlParam(l.path)} lone surrogate`, at(l.path, turn % 2 ? LOW : HIGH), refused(gqlParam(l.path))),
        );
      }
      const objects = locations.filter((x) => x.kind === 'json');
      if (objects.length) {
        const l = objects[turn % objects.length];
        out.push(gql(`${gqlParam(l.path)} key lone surrogate`, at(l.path, { [LOW]: 'v' }), refused(gqlParam(l.path))));
      }
      turn++;
    }
  }
  // Inline literals cannot carry a lone surrogate: as a character or a GraphQL escape, it is a syntax error.
  for (const text of ['\\ud800', '\\\\ud800', 'x\\\\udfff', '\\\\udc00\\\\ud800']) {
    out.push({
      target: 'graphql',
      label: 'strict GraphQL literal lone surrogate',
      method: 'POST',
      url: '/graphql',
      headers: { authorization: 'Bearer {KEY}', ...json },
      body: `{"query":"mutation { createProductFamily(input: { name: \\"${text}\\" }) { id } }"}`,
      refusal: refused(null),
    });
  }
  return out;
}

/** The gateway webhook route (raw body, signature checked): bad encodings, bodies, and connection ids. */
function webhookArbitrary(): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      provider: fc.constantFrom('stripe', 'razorpay', 'bogus', '%00', 'x'.repeat(300)),
      id: idVariant(() => ids.connection),
      body: fc.oneof(badValue, fc.constant({ id: 'evt_1', type: 'payment_intent.succeeded', data: { object: {} } })),
      how: transport,
      sig: fc.constantFrom(undefined, '', 't=1,v1=00', 'x'.repeat(9000), 'sha256=ff'),
    })
    .map(({ provider, id, body, how, sig }) => {
      const sent = encodeBody(toJson(body), how);
      const headers: Record<string, string> = { ...sent.headers };
      if (sig !== undefined) {
        headers['stripe-signature'] = sig;
        headers['x-razorpay-signature'] = sig;
      }
      return {
        target: 'rest' as const,
        label: `POST /providers/${provider.slice(0, 10)}/webhooks [${how}]`,
        method: 'POST',
        url: `/v1/providers/${pathSegment(provider)}/webhooks/${pathSegment(id)}`,
        headers,
        body: sent.body,
      };
    });
}

/** The gateway sandbox: its Stripe (form), Razorpay (JSON) and checkout routes, with the same bad bodies. */
function sandboxArbitrary(): fc.Arbitrary<FuzzRequest> {
  const routes: [string, string, 'stripe' | 'razorpay' | 'checkout'][] = [
    ['POST', '/v1/products', 'stripe'],
    ['POST', '/v1/prices', 'stripe'],
    ['POST', '/v1/checkout/sessions', 'stripe'],
    ['POST', '/v1/refunds', 'stripe'],
    ['POST', '/v1/subscriptions/sub_x', 'stripe'],
    ['GET', '/v1/products/prod_x', 'stripe'],
    ['POST', '/razorpay/v1/plans', 'razorpay'],
    ['POST', '/razorpay/v1/payment_links', 'razorpay'],
    ['POST', '/razorpay/v1/subscriptions', 'razorpay'],
    ['PATCH', '/razorpay/v1/subscriptions/sub_x', 'razorpay'],
    ['POST', '/razorpay/v1/payments/pay_x/refund', 'razorpay'],
    ['POST', '/checkout/cs_x', 'checkout'],
    ['GET', '/checkout/%00', 'checkout'],
  ];
  const form = (v: unknown): string => {
    if (v !== null && typeof v === 'object' && !(v instanceof Raw) && !Array.isArray(v)) {
      return Object.entries(v)
        .map(([k, x]) => `${encodeURIComponent(k)}=${pathSegment(typeof x === 'string' ? x : toJson(x))}`)
        .join('&');
    }
    return `a${'[a]'.repeat(40)}=1&${'b[]=1&'.repeat(50)}x=${pathSegment(typeof v === 'string' ? v : toJson(v))}`;
  };
  return fc
    .record({ route: fc.constantFrom(...routes), body: badValue, how: transport, asForm: fc.boolean() })
    .map(({ route: [method, p, kind], body, how, asForm }) => {
      const sent =
        asForm && how === 'json'
          ? { body: form(body), headers: { 'content-type': 'application/x-www-form-urlencoded' } }
          : encodeBody(toJson(body), how);
      const authorization =
        kind === 'stripe'
          ? 'Bearer sk_test_fuzzfuzzfuzz'
          : kind === 'razorpay'
            ? `Basic ${Buffer.from('rzp_test_fuzz:secret').toString('base64')}`
            : '';
      return {
        target: 'sandbox' as const,
        label: `sandbox ${method} ${p} [${asForm ? 'form' : how}]`,
        method,
        url: p,
        headers: { ...(authorization ? { authorization } : {}), ...(method === 'GET' ? {} : sent.headers) },
        body: method === 'GET' ? undefined : sent.body,
      };
    });
}

// ---------------------------------------------------------------------------------------------------------------
// Running and judging

// No delivery worker: nothing writes to the database between requests except the requests themselves.
const h = useHarness({ worker: false });
let m: TestMerchant;
let pg: Client;
let snapshotSql: string;
let testKey: string;

async function snapshot(): Promise<Record<string, string>> {
  const { rows } = await pg.query<{ t: string; v: string }>(snapshotSql);
  return Object.fromEntries(rows.map((r) => [r.t, r.v]));
}

async function send(r: FuzzRequest): Promise<{ status: number; text: string; headers: Headers }> {
  const base = r.target === 'sandbox' ? h.app.app.sandboxUrl! : h.app.url;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers))
    headers[k] = v.replace('{KEY}', testKey).replace('{LIVE}', m.keys.live);
  const res = await fetch(`${base}${r.url}`, { method: r.method, headers, body: r.body, redirect: 'manual' });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const parse = (text: string): any => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** What is wrong with an answer, or null. Also says whether the request failed (so must have changed nothing). */
function judge(
  r: FuzzRequest,
  res: { status: number; text: string; headers: Headers },
): { problem: string | null; failed: boolean } {
  if (res.status >= 500) return { problem: `status ${res.status}`, failed: true };
  try {
    if (r.target !== 'sandbox') expectNoLeak(res.text);
  } catch (e) {
    return { problem: (e as Error).message.slice(0, 120), failed: res.status >= 400 };
  }
  const body = parse(res.text);
  const requestId = res.headers.get('request-id');
  if (r.target === 'sandbox') {
    if (res.status >= 400 && !body?.error && res.status !== 404)
      return { problem: 'sandbox error without an error body', failed: true };
    return { problem: null, failed: res.status >= 400 };
  }
  if (r.target === 'rest') {
    if (res.status < 400) return { problem: null, failed: false };
    const e = body?.error;
    if (!e || Object.keys(body).length !== 1) return { problem: 'not the error envelope', failed: true };
    if (Object.keys(e).sort().join() !== 'code,message,param,request_id,type')
      return { problem: `error keys ${Object.keys(e)}`, failed: true };
    const row = ERROR_CODES[e.code as keyof typeof ERROR_CODES];
    if (!row) return { problem: `unknown code ${e.code}`, failed: true };
    if (row[0] !== res.status || row[1] !== e.type)
      return { problem: `${e.code} answered ${res.status} ${e.type}`, failed: true };
    if (e.request_id !== requestId) return { problem: 'request_id differs from Request-Id', failed: true };
    if (typeof e.message !== 'string' || !e.message || (e.param !== null && typeof e.param !== 'string'))
      return { problem: 'bad message or param', failed: true };
    return { problem: null, failed: true };
  }
  // GraphQL: errors[].extensions carry an API error code, never internal_error, even inside a 200.
  if (!body || typeof body !== 'object') return { problem: `not JSON (${res.status})`, failed: res.status >= 400 };
  const errors: any[] | undefined = body.errors;
  if (res.status >= 400 && !errors?.length) return { problem: `${res.status} without errors`, failed: true };
  for (const e of errors ?? []) {
    const code = e?.extensions?.code;
    const row = ERROR_CODES[code as keyof typeof ERROR_CODES];
    if (!row)
      return { problem: `GraphQL error without an API error code: ${JSON.stringify(e).slice(0, 200)}`, failed: true };
    if (row[0] >= 500) return { problem: `GraphQL ${code}: ${e.message}`, failed: true };
    if (e.extensions.http?.status !== row[0])
      return { problem: `GraphQL ${code} with http.status ${e.extensions.http?.status}`, failed: true };
    if (typeof e.message !== 'string') return { problem: 'GraphQL error without a message', failed: true };
  }
  const data = body.data;
  const failed = !!errors?.length && (data == null || Object.values(data).every((v) => v === null));
  return { problem: null, failed };
}

/** What differs from the refusal a strict-input request must get (its status, code and `param`), or null. */
function refusalProblem(r: FuzzRequest, res: { status: number; text: string }): string | null {
  if (!r.refusal) return null;
  const body = parse(res.text);
  const e = r.target === 'rest' ? body?.error : body?.errors?.[0]?.extensions;
  const got = { status: r.target === 'rest' ? res.status : e?.http?.status, code: e?.code, param: e?.param ?? null };
  const want = r.refusal;
  if (got.status === want.status && got.code === want.code && (want.param === undefined || got.param === want.param))
    return null;
  if (want.loose && got.status >= 400 && got.status < 500 && got.param !== want.param) return null;
  return `expected ${want.status} ${want.code} ${want.param ?? ''}, answered ${got.status ?? res.status} ${got.code} ${got.param ?? ''}`;
}

beforeAll(async () => {
  m = await h.merchant();
  testKey = m.keys.test;
  const other = await h.merchant();
  const c = m.test;
  const connection = (await connect(c, 'stripe')).connection;
  const family = (await c.post('/product-families', { name: 'Fuzz family' })).body;
  const product = (
    await c.post('/products', { name: 'Fuzz plan product', type: 'subscription', product_family_id: family.id })
  ).body;
  const plan = (await c.post(`/products/${product.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly' })).body;
  const price = (await c.post(`/plans/${plan.id}/prices`, { currency: 'INR', amount: 49_900 })).body;
  const paid = await pay(c, await createPayment(c));
  const payment = paid.payment;
  const endpoint = (await c.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/fuzz-hook', mode: 'test' })).body;
  const delivery = (await c.post('/webhooks/trigger-test', { endpoint_id: endpoint.id })).body.deliveries[0];
  for (const [name, v] of Object.entries({ connection, family, product, plan, price, payment, endpoint, delivery })) {
    if (!v?.id) throw new Error(`fuzz setup: no ${name}`);
  }
  ids = {
    family: family.id,
    product: product.id,
    plan: plan.id,
    price: price.id,
    connection: connection.id,
    payment: payment.id,
    customer: payment.customer_id,
    endpoint: endpoint.id,
    delivery: delivery.id,
  };
  const op = (await other.test.post('/products', { name: 'Other', type: 'one_time' })).body;
  otherIds = [op.id, (await other.test.post('/product-families', { name: 'Other' })).body.id, unknownId()];

  pg = new Client({ connectionString: h.app.databaseUrl });
  await pg.connect();
  // Rows and the newest row version (xmin) of every table: any insert, update or delete changes one of them.
  const { rows } = await pg.query<{ table_name: string }>(SNAPSHOT_TABLES_SQL);
  snapshotSql = snapshotSqlOf(rows);
}, 60_000);

h.cleanup(() => pg?.end());

/**
 * The run, one batch per operation (and per other target). A batch is drawn when its turn comes, so the ids it uses
 * are the merchant's at that moment (a deleted connection or endpoint has been made again by then).
 */
function batches(): (() => FuzzRequest[])[] {
  const out: (() => FuzzRequest[])[] = [];
  let seed = SEED;
  const take = (arb: () => fc.Arbitrary<FuzzRequest>, n: number) => {
    const s = seed++;
    out.push(() => fc.sample(arb(), { seed: s, numRuns: n }));
  };
  for (const { method, path: p, op } of restOperations()) take(() => restArbitrary(method, p, op), RUNS.rest);
  for (const [kind, type] of [
    ['query', gqlSchema.getQueryType()],
    ['mutation', gqlSchema.getMutationType()],
  ] as const) {
    for (const field of Object.values(type!.getFields())) take(() => graphqlArbitrary(kind, field), RUNS.graphql);
  }
  out.push(graphqlSpecials);
  out.push(strictInputRequests);
  take(webhookArbitrary, RUNS.webhook);
  take(sandboxArbitrary, RUNS.sandbox);
  return out;
}

/** A request with full control of bytes and headers; answers status, parsed body and headers. */
async function call(method: string, url: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${url.startsWith('http') ? '' : h.app.url}${url}`, {
    method,
    body,
    headers,
    redirect: 'manual',
  });
  const text = await res.text();
  return { status: res.status, body: parse(text), text, headers: res.headers };
}
const json = (key = testKey) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const gql = (query: string, variables?: unknown, key = testKey) =>
  call('POST', '/graphql', toJson({ query, variables }), json(key));
const count = async (table: string) => Number((await pg.query(`select count(*)::int as n from ${table}`)).rows[0].n);
/** JSON text of `n` nested objects. */
const nest = (n: number, inner = '"x"') => '{"a":'.repeat(n) + inner + '}'.repeat(n);

function expectRest(
  r: { status: number; body: any; headers: Headers },
  status: number,
  code: string,
  param: string | null = null,
) {
  expect({ status: r.status, code: r.body?.error?.code, param: r.body?.error?.param }).toEqual({ status, code, param });
  expect(r.body.error.request_id).toBe(r.headers.get('request-id'));
}
function expectGql(r: { status: number; body: any }, status: number, code: string, param?: string | null) {
  const e = r.body?.errors?.[0];
  expect({ code: e?.extensions?.code, status: e?.extensions?.http?.status }).toEqual({ code, status });
  if (param !== undefined) expect(e.extensions.param).toBe(param);
}

describe('request bodies: encodings and charsets', () => {
  const product = JSON.stringify({ name: 'Encoded', type: 'one_time' });

  it.each([
    ['gzip', product],
    ['br', product],
    ['deflate', product],
    ['gzip', ''],
    ['zstd', product],
    ['x-fuzz', product],
    ['gzip, br', product],
  ])(
    'Content-Encoding %s on a body that is not so encoded: 400 parameter_invalid, nothing created',
    async (encoding, body) => {
      const before = await count('products');
      const r = await call('POST', '/v1/products', body, { ...json(), 'content-encoding': encoding });
      expectRest(r, 400, 'parameter_invalid');
      const g = await call('POST', '/graphql', body, { ...json(), 'content-encoding': encoding });
      expect(g.status).toBe(400);
      expectGql(g, 400, 'parameter_invalid', null);
      const w = await call('POST', `/v1/providers/stripe/webhooks/${ids.connection}`, body, {
        'content-type': 'application/json',
        'content-encoding': encoding,
      });
      expectRest(w, 400, 'parameter_invalid');
      expect(await count('products')).toBe(before);
    },
  );

  it.each([
    ['gzip', zlib.gzipSync],
    ['br', zlib.brotliCompressSync],
    ['deflate', zlib.deflateSync],
  ] as const)('a body that is %s-encoded is read', async (encoding, compress) => {
    const r = await call('POST', '/v1/products', compress(product), { ...json(), 'content-encoding': encoding });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('Encoded');
  });

  it('a charset other than UTF-8, or a truncated compressed body: 400', async () => {
    for (const type of ['application/json; charset=latin1', 'application/json; charset=x-fuzz']) {
      expectRest(
        await call('POST', '/v1/products', product, { authorization: `Bearer ${testKey}`, 'content-type': type }),
        400,
        'parameter_invalid',
      );
    }
    // UTF-16 is read as such: these UTF-8 bytes are then not JSON
    expectRest(
      await call('POST', '/v1/products', product, {
        authorization: `Bearer ${testKey}`,
        'content-type': 'application/json; charset=utf-16',
      }),
      400,
      'invalid_json',
    );
    const z = zlib.gzipSync(product);
    expectRest(
      await call('POST', '/v1/products', z.subarray(0, z.length - 8), { ...json(), 'content-encoding': 'gzip' }),
      400,
      'parameter_invalid',
    );
  });

  it('a body that inflates past 1 MiB: 413 request_too_large', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(4 * 1024 * 1024, 0x20));
    expectRest(
      await call('POST', '/v1/products', bomb, { ...json(), 'content-encoding': 'gzip' }),
      413,
      'request_too_large',
    );
  });

  it('a URL and headers over 16 KiB: 413 request_too_large in the API error shape, REST and GraphQL', async () => {
    const r = await call('GET', `/v1/products?cursor=${'A'.repeat(20_000)}`, undefined, {
      authorization: `Bearer ${testKey}`,
    });
    expectRest(r, 413, 'request_too_large');
    const g = await call('GET', `/graphql?query=${'%20'.repeat(7000)}`, undefined, {
      authorization: `Bearer ${testKey}`,
    });
    expect(g.status).toBe(413);
    expectGql(g, 413, 'request_too_large');
  });
});

describe(`nesting deeper than ${MAX_JSON_DEPTH} levels`, () => {
  const payment = (metadata: string) =>
    `{"amount":10000,"customer_email":"deep@example.com","success_url":"https://a.example","cancel_url":"https://a.example","metadata":${metadata}}`;

  it('REST: refused before anything walks it (metadata 100,000 deep, with and without Idempotency-Key)', async () => {
    const before = await count('payments');
    for (const extra of [{}, { 'idempotency-key': 'deep-1' }] as Record<string, string>[]) {
      const r = await call('POST', '/v1/payments', payment(nest(100_000)), { ...json(), ...extra });
      expectRest(r, 400, 'parameter_invalid', 'metadata');
      expect(r.body.error.message).toMatch(/nested too deeply.*32 levels/);
    }
    const list = await call('POST', '/v1/products', `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`, json());
    expectRest(list, 400, 'parameter_invalid', 'name');
    expect(await count('payments')).toBe(before);
  });

  it('REST: the body may nest exactly 32 levels (then ordinary validation answers)', async () => {
    // the body (1) holds metadata (2 .. 32): 32 levels in all
    const at = await call('POST', '/v1/payments', payment(nest(MAX_JSON_DEPTH - 1)), {
      ...json(),
      'idempotency-key': 'deep-2',
    });
    expectRest(at, 400, 'parameter_invalid', 'metadata.a');
    expect(at.body.error.message).toMatch(/must be strings/);
    const over = await call('POST', '/v1/payments', payment(nest(MAX_JSON_DEPTH)), {
      ...json(),
      'idempotency-key': 'deep-3',
    });
    expectRest(over, 400, 'parameter_invalid', 'metadata');
    expect(over.body.error.message).toMatch(/nested too deeply/);
  });

  it('GraphQL variables: each variable may nest 32 levels; deeper is refused with the variable named', async () => {
    const ok = await call(
      'POST',
      '/graphql',
      `{"query":"{ __typename }","variables":{"x":${nest(MAX_JSON_DEPTH)}}}`,
      json(),
    );
    expect(ok.status).toBe(200);
    expect(ok.body.data.__typename).toBe('Query');
    for (const deepValue of [nest(MAX_JSON_DEPTH + 1), nest(100_000), `${'['.repeat(100_000)}${']'.repeat(100_000)}`]) {
      const r = await call(
        'POST',
        '/graphql',
        `{"query":"query($customerEmail: String) { customers(email: $customerEmail) { totalCount } }","variables":{"customerEmail":${deepValue}}}`,
        json(),
      );
      expect(r.status).toBe(400);
      expectGql(r, 400, 'parameter_invalid', 'customer_email');
    }
    const get = await call(
      'GET',
      `/graphql?query=${encodeURIComponent('{ __typename }')}&variables=${encodeURIComponent(`{"x":${nest(40)}}`)}`,
      undefined,
      {
        authorization: `Bearer ${testKey}`,
        'apollo-require-preflight': 'true',
      },
    );
    expect(get.status).toBe(400);
    expectGql(get, 400, 'parameter_invalid');
  });

  it('GraphQL inline literals: an argument nested past 32 levels is refused; query text past 500 brackets too', async () => {
    const before = await count('payments');
    const literal = `${'{a: '.repeat(40)}"x"${'}'.repeat(40)}`;
    const r = await gql(
      `mutation { createPayment(input: { amount: 10000, customerEmail: "a@b.co", successUrl: "https://a.example", cancelUrl: "https://a.example", metadata: ${literal} }) { id } }`,
    );
    expectGql(r, 400, 'parameter_invalid', 'metadata');
    const text = await gql(`{ products(status: ${'['.repeat(2400)}ACTIVE${']'.repeat(2400)}) { totalCount } }`);
    expect(text.status).toBe(400);
    expectGql(text, 400, 'query_too_complex');
    expect(text.body.errors[0].message).toMatch(/500 levels/);
    expect(await count('payments')).toBe(before);
  });
});

describe('string lengths', () => {
  /** Every String field of every GraphQL input, and the column (entity.property) or columns it is stored in. */
  const COLUMNS: Record<string, string[]> = {
    'CreateCustomerInput.email': ['Customer.email'],
    'CreateCustomerInput.name': ['Customer.name'],
    'CreateCustomerInput.phone': ['Customer.phone'],
    'CreateCustomerInput.stateCode': ['Customer.stateCode'],
    'CreateCustomerInput.gstin': ['Customer.gstin'],
    'CreateCustomerInput.address': ['Customer.address'],
    'UpdateCustomerInput.email': ['Customer.email'],
    'UpdateCustomerInput.name': ['Customer.name'],
    'UpdateCustomerInput.phone': ['Customer.phone'],
    'UpdateCustomerInput.stateCode': ['Customer.stateCode'],
    'UpdateCustomerInput.gstin': ['Customer.gstin'],
    'UpdateCustomerInput.address': ['Customer.address'],
    'CreateOfferingInput.lookupKey': ['Offering.lookupKey'],
    'CreateOfferingInput.name': ['Offering.name'],
    'CreateOfferingInput.description': ['Offering.description'],
    'CreatePackageInput.lookupKey': ['Package.lookupKey'],
    'CreatePackageInput.name': ['Package.name'],
    'CreatePackageInput.description': ['Package.description'],
    'CreatePaywallInput.name': ['Paywall.name'],
    'CreateExperimentInput.name': ['Experiment.name'],
    'UpdateExperimentInput.name': ['Experiment.name'],
    'ExperimentVariantInput.key': ['ExperimentVariant.key'],
    'ExperimentVariantInput.name': ['ExperimentVariant.name'],
    'UpdateExperimentVariantInput.key': ['ExperimentVariant.key'],
    'UpdateExperimentVariantInput.name': ['ExperimentVariant.name'],
    'CreateEntitlementInput.lookupKey': ['Entitlement.lookupKey'],
    'CreateEntitlementInput.name': ['Entitlement.name'],
    'CreateEntitlementInput.description': ['Entitlement.description'],
    'CreateMerchantInput.name': ['Merchant.name'],
    'CreateMerchantInput.gstin': ['Merchant.gstin'],
    'CreateMerchantInput.stateCode': ['Merchant.stateCode'],
    'CreateMerchantInput.reportingCurrency': ['Merchant.reportingCurrency'],
    'CreatePaymentInput.currency': ['Payment.currency'],
    'CreatePaymentInput.customerEmail': ['Payment.customerEmail', 'Customer.email'],
    'CreatePaymentInput.customerName': ['Payment.customerName', 'Customer.name'],
    'CreatePaymentInput.customerPhone': ['Payment.customerPhone', 'Customer.phone'],
    'CreatePaymentInput.customerStateCode': ['Customer.stateCode'],
    'CreatePaymentInput.customerGstin': ['Customer.gstin'],
    'CreatePaymentInput.referenceId': ['Payment.referenceId'],
    'CreatePaymentInput.successUrl': ['Payment.successUrl'],
    'CreatePortalSessionInput.returnUrl': ['PortalSession.returnUrl'],
    'CreatePaymentInput.cancelUrl': ['Payment.cancelUrl'],
    'RefundPaymentInput.reason': ['Refund.reason'],
    'ProviderCredentialsInput.secretKey': ['ProviderConnection.credentialsSealed'],
    'ProviderCredentialsInput.webhookSecret': ['ProviderConnection.credentialsSealed'],
    'ProviderCredentialsInput.keyId': ['ProviderConnection.credentialsSealed'],
    'ProviderCredentialsInput.keySecret': ['ProviderConnection.credentialsSealed'],
    'CreateWebhookEndpointInput.url': ['WebhookEndpoint.url'],
    'CreateWebhookEndpointInput.description': ['WebhookEndpoint.description'],
    'CreateWebhookEndpointInput.enabledEvents': ['WebhookEndpoint.enabledEvents'],
    'CreateProductFamilyInput.name': ['ProductFamily.name'],
    'CreateProductFamilyInput.description': ['ProductFamily.description'],
    'CreateProductInput.name': ['Product.name'],
    'CreateProductInput.description': ['Product.description'],
    'UpdateProductInput.name': ['Product.name'],
    'UpdateProductInput.description': ['Product.description'],
    'CreatePlanInput.name': ['Plan.name'],
    'CreatePriceInput.currency': ['Price.currency'],
    'CreateUsageRateInput.eventType': ['UsageRate.eventType'],
    'CreateUsageRateInput.currency': ['UsageRate.currency'],
    'CreateUsageRateInput.unitAmountDecimal': ['UsageRate.unitAmountDecimal'],
    'CreateMerchantInput.sacCode': ['Merchant.sacCode'],
    'CreateMerchantInput.address': ['Merchant.address'],
    'UpdateTaxSettingsInput.gstin': ['Merchant.gstin'],
    'UpdateTaxSettingsInput.stateCode': ['Merchant.stateCode'],
    'UpdateTaxSettingsInput.sacCode': ['Merchant.sacCode'],
    'UpdateTaxSettingsInput.address': ['Merchant.address'],
    'CreateSubscriptionInput.currency': ['BillingSubscription.currency'],
    'CreateSubscriptionInput.customerEmail': ['Customer.email'],
    'CreateSubscriptionInput.customerName': ['Customer.name'],
    'CreateSubscriptionInput.customerPhone': ['Customer.phone'],
    'CreateSubscriptionInput.customerStateCode': ['Customer.stateCode'],
    'CreateSubscriptionInput.customerGstin': ['Customer.gstin'],
    'CreateSubscriptionInput.successUrl': ['BillingSubscription.successUrl'],
    'CreateSubscriptionInput.cancelUrl': ['BillingSubscription.cancelUrl'],
    'CreateSubscriptionInput.couponCode': ['BillingSubscription.couponCode'],
    'CreateCouponInput.code': ['Coupon.code'],
    'CreateCouponInput.name': ['Coupon.name'],
    'CreateCouponInput.currency': ['Coupon.currency'],
    'ValidateCouponInput.code': [],
    // Usage events are no ORM entities: the migration's varchar(100/50/255) columns match these MaxLength limits.
    'ReportUsageInput.eventType': [],
    'ReportUsageInput.unit': [],
    'ReportUsageInput.idempotencyKey': [],
    'ValidateCouponInput.currency': [],
    // Handed to the gateway's page, not stored.
    'MandateSetupInput.successUrl': [],
    'MandateSetupInput.cancelUrl': [],
    // Handed to the invoice registration portal, not stored.
    'CancelEInvoiceInput.remark': [],
  };

  /** An input class as type-graphql's metadata holds it. */
  type InputClass = ReturnType<typeof typeGraphQLMetadata>['inputTypes'][number]['target'];

  /** The declared maximum of a class-validator MaxLength or Length on a field. */
  function declaredMax(target: InputClass, property: string): number | null {
    const rules = validatorMetadata()
      .getTargetValidationMetadatas(target, '', true, false)
      .filter((v) => v.propertyName === property);
    const max = rules.flatMap((v) =>
      v.name === 'maxLength' ? [v.constraints[0]] : v.name === 'isLength' ? [v.constraints[1]] : [],
    );
    return max.length ? Math.min(...max) : null;
  }

  it('every String field of every input declares a maximum no longer than the column it is stored in (and is validated)', async () => {
    const schema: GraphQLSchema = await createSchema(); // registers every input class's metadata
    const inputs = typeGraphQLMetadata().inputTypes;
    const found: string[] = [];
    const wrong: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isInputObjectType(type)) continue;
      const target = inputs.find((i) => i.name === type.name)?.target;
      for (const field of Object.values(type.getFields())) {
        // class-validator checks a nested input's fields only through @ValidateNested on the field holding it
        if (
          isInputObjectType(getNamedType(field.type)) &&
          target &&
          !validatorMetadata()
            .getTargetValidationMetadatas(target, '', true, false)
            .some((v) => v.propertyName === field.name && v.type === 'nestedValidation')
        )
          wrong.push(`${type.name}.${field.name}: no ValidateNested`);
        if (getNamedType(field.type).name !== 'String') continue;
        const key = `${type.name}.${field.name}`;
        found.push(key);
        const max = target ? declaredMax(target, field.name) : null;
        if (max === null) {
          wrong.push(`${key}: no MaxLength`);
          continue;
        }
        for (const column of COLUMNS[key] ?? []) {
          const [entity, prop] = column.split('.');
          const columnType = h.app.orm.getMetadata().find(entity)?.properties[prop as never]?.columnTypes?.[0] ?? '';
          const limit = /^varchar\((\d+)\)$/.exec(columnType)?.[1];
          if (!columnType) wrong.push(`${key}: no column ${column}`);
          else if (limit && max > Number(limit)) wrong.push(`${key}: MaxLength ${max} > ${column} ${columnType}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(found.sort()).toEqual(Object.keys(COLUMNS).sort()); // a new String field needs its row above
  });

  it('an over-long merchant name on the admin route: 400 naming the field, nothing created; 255 characters are fine', async () => {
    const before = await count('merchants');
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    expectRest(
      await call('POST', '/v1/admin/merchants', toJson({ name: 'x'.repeat(256) }), admin),
      400,
      'parameter_invalid',
      'name',
    );
    expectRest(
      await call('POST', '/v1/admin/merchants', toJson({ name: 'M', gstin: 'x'.repeat(256) }), admin),
      400,
      'parameter_invalid',
      'gstin',
    );
    expect(await count('merchants')).toBe(before);
    expect((await call('POST', '/v1/admin/merchants', toJson({ name: 'x'.repeat(255) }), admin)).status).toBe(201);
  });

  it.each([
    ['/payments', { customer_gstin: 'x'.repeat(16) }, 'customer_gstin'],
    ['/payments', { customer_name: 'x'.repeat(256) }, 'customer_name'],
    ['/payments', { reference_id: 'x'.repeat(256) }, 'reference_id'],
    ['/payments', { success_url: `https://a.example/${'x'.repeat(2048)}` }, 'success_url'],
    [
      '/providers/connections',
      {
        provider: 'razorpay',
        credentials: { key_id: `rzp_test_${'x'.repeat(250)}`, key_secret: 'x', webhook_secret: 'x' },
      },
      'credentials.key_id',
    ],
    ['/webhooks/endpoints', { url: 'http://127.0.0.1:9/x', mode: 'test', description: 'x'.repeat(501) }, 'description'],
    [
      '/webhooks/endpoints',
      { url: 'http://127.0.0.1:9/x', mode: 'test', enabled_events: ['x'.repeat(65)] },
      'enabled_events',
    ],
  ])('POST %s with %j: 400 parameter_invalid naming the field', async (route, fields, param) => {
    const base =
      route === '/payments'
        ? {
            amount: 10_000,
            customer_email: 'long@example.com',
            success_url: 'https://a.example',
            cancel_url: 'https://a.example',
          }
        : {};
    expectRest(
      await call('POST', `/v1${route}`, toJson({ ...base, ...fields }), json()),
      400,
      'parameter_invalid',
      param,
    );
  });

  it('a refund reason longer than its column: 400, nothing reserved', async () => {
    const before = await count('refunds');
    expectRest(
      await call(
        'POST',
        `/v1/payments/${ids.payment}/refund`,
        toJson({ amount: 100, reason: 'x'.repeat(256) }),
        json(),
      ),
      400,
      'parameter_invalid',
      'reason',
    );
    expect(await count('refunds')).toBe(before);
  });

  it(`root String and ID arguments hold at most ${MAX_ARGUMENT_LENGTH} characters (filters, cursors, ids)`, async () => {
    const q = 'query($e: String) { customers(email: $e) { totalCount } }';
    expect((await gql(q, { e: 'x'.repeat(MAX_ARGUMENT_LENGTH) })).body.data.customers.totalCount).toBe(0);
    for (const e of ['x'.repeat(MAX_ARGUMENT_LENGTH + 1), 'x'.repeat(900_000)])
      expectGql(await gql(q, { e }), 400, 'parameter_invalid', 'email');
    expectGql(
      await gql(`{ customers(email: "${'x'.repeat(900_000)}") { totalCount } }`),
      400,
      'parameter_invalid',
      'email',
    );
    expectRest(
      await call('GET', `/v1/customers?email=${'x'.repeat(MAX_ARGUMENT_LENGTH + 1)}`, undefined, json()),
      400,
      'parameter_invalid',
      'email',
    );
    // an id that long names nothing: 404, as any malformed id
    expectGql(
      await gql('query($id: ID!) { payment(id: $id) { id } }', { id: 'x'.repeat(900_000) }),
      404,
      'resource_not_found',
    );
    expectRest(
      await call('GET', `/v1/payments?customer_id=${'x'.repeat(MAX_ARGUMENT_LENGTH + 1)}`, undefined, json()),
      404,
      'resource_not_found',
    );
  });
});

describe('GraphQL over HTTP', () => {
  it('a subscription operation: 400 parameter_invalid over POST and GET, not an internal error', async () => {
    for (const query of [
      'subscription { paymentUpdated { id } }',
      `subscription S { paymentUpdated(id: "${ids.payment}") { id } }`,
    ]) {
      const r = await gql(query);
      expect(r.status).toBe(400);
      expectGql(r, 400, 'parameter_invalid', null);
      expect(r.body.errors[0].message).toMatch(/WebSocket/);
      expect(r.body.errors[0].extensions.requestId).toBe(r.headers.get('request-id'));
      const g = await call('GET', `/graphql?query=${encodeURIComponent(query)}`, undefined, {
        authorization: `Bearer ${testKey}`,
        'apollo-require-preflight': 'true',
      });
      expect(g.status).toBe(400);
      expectGql(g, 400, 'parameter_invalid', null);
    }
  });
});

describe('found by the fuzzer', () => {
  it('a gateway webhook for a provider name with NUL: 404, not a database error', async () => {
    const r = await call('POST', `/v1/providers/%00/webhooks/${ids.connection}`, '{}', {
      'content-type': 'application/json',
    });
    expectRest(r, 404, 'resource_not_found');
  });

  it('a refund refused because the connection was removed changes nothing (no failed refund left behind)', async () => {
    const c = (await h.merchant()).test;
    await connect(c, 'stripe');
    const paid = (await pay(c, await createPayment(c))).payment;
    const connection = (await c.get('/providers/connections')).body;
    const id = (Array.isArray(connection) ? connection : connection.data)[0].id;
    expect((await c.delete(`/providers/connections/${id}`)).status).toBe(200);
    const before = await snapshot();
    const r = await c.post(`/payments/${paid.id}/refund`, { amount: 100 });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('provider_not_connected');
    expect(await snapshot()).toEqual(before);
  });

  it('the sandbox answers a body of the wrong type, NUL and deep nesting as client errors', async () => {
    const sb = h.app.app.sandboxUrl!;
    const stripe = { authorization: 'Bearer sk_test_fuzzfuzzfuzz' };
    const missing = await call('POST', `${sb}/v1/checkout/sessions`, '{"mode":"payment"}', {
      ...stripe,
      'content-type': 'application/json',
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('parameter_missing');
    const nul = await call('POST', `${sb}/v1/products`, 'name=%00', {
      ...stripe,
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(nul.status).toBe(400);
    expect((await call('GET', `${sb}/checkout/%00`)).status).toBe(400);
    const razorpay = {
      authorization: `Basic ${Buffer.from('rzp_test_fuzz:secret').toString('base64')}`,
      'content-type': 'application/json',
    };
    expect((await call('POST', `${sb}/razorpay/v1/plans`, nest(100_000), razorpay)).status).toBe(400);
    expect(
      (await call('POST', `${sb}/razorpay/v1/plans`, '{"item":1}', { ...razorpay, 'content-encoding': 'gzip' })).status,
    ).toBe(400);
  });

  it('the row snapshot the fuzz run relies on sees an update that changes no value', async () => {
    const before = await snapshot();
    await pg.query('update products set name = name where id = $1', [ids.product]);
    expect(await snapshot()).not.toEqual(before);
  });
});

/** A deleted connection or endpoint is made again, so the routes after it still reach past their 404s and 409s. */
async function restoreDeleted(): Promise<void> {
  const c = new Client_(h.app.url, testKey);
  if ((await c.get(`/webhooks/endpoints/${ids.endpoint}`)).status === 404) {
    ids.endpoint = (await c.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/fuzz-hook', mode: 'test' })).body.id;
  }
  const list = (await c.get('/providers/connections')).body;
  if ((Array.isArray(list) ? list : (list.data ?? [])).length === 0) {
    ids.connection = (await connect(c, 'stripe')).connection.id;
    // The paid payment went through the removed connection: refunds need one through the new one.
    ids.payment = (await pay(c, await createPayment(c))).payment.id;
  }
}

it('no request answers 5xx, every error has the API error shape, and a failed request changes no row', async () => {
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let requests = 0;
  let before = await snapshot();
  for (const batch of batches())
    for (const r of batch()) {
      requests++;
      const res = await send(r);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const judged = judge(r, res);
      const { failed } = judged;
      const problem = judged.problem ?? refusalProblem(r, res);
      const what = `${r.label} ${r.url.slice(0, 120)} <<${Buffer.isBuffer(r.body) ? `${r.body.length} bytes` : String(r.body ?? '').slice(0, 120)}>>`;
      if (problem) problems.push(`${what}: ${problem} ${res.text.slice(0, 200)}`);
      // A rolled key replaces ours (grace 0 would lock the rest of the run out).
      const body = res.status < 300 ? parse(res.text) : undefined;
      const rolled = body?.secret_key ?? body?.data?.rollApiKey?.secretKey;
      if (typeof rolled === 'string' && rolled.startsWith('sk_test_')) testKey = rolled;
      if (failed) {
        const after = await snapshot();
        const changed = Object.keys(after).filter((k) => after[k] !== before[k]);
        if (changed.length) problems.push(`${what}: answered ${res.status} but changed ${changed.join(', ')}`);
        before = after;
      } else {
        if (r.method === 'DELETE' || /delete(ProviderConnection|WebhookEndpoint)/.test(r.label)) await restoreDeleted();
        // Gateway webhooks the sandbox sends after a success land before the next request.
        await h.app.app.sandbox?.sandbox.settle();
        before = await snapshot();
      }
    }
  // About 2,400 requests, and they reached past validation too: successes, client errors of several kinds.
  expect(requests).toBeGreaterThan(2000);
  expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
  expect(statuses.get(201) ?? 0).toBeGreaterThan(20);
  expect(statuses.get(400) ?? 0).toBeGreaterThan(300);
  expect(statuses.get(404) ?? 0).toBeGreaterThan(50);
  expect(problems.slice(0, 40)).toEqual([]);
}, 420_000); // about 2,700 requests one after another, each with a table snapshot: minutes on a busy machine

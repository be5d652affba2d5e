import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Every answer a test receives from the service's REST API is checked against the OpenAPI document the service
 * serves (`/v1/openapi.json`): the operation's path template and method, then the answer's status (the exact code,
 * else `4XX`/`5XX`, else `default`), then its body against that answer's schema. A path or method the document does
 * not have must answer the documented error shape. Answers are held to exactly the documented properties: an object
 * schema that does not say otherwise admits no other property here, so a field the document forgot fails too.
 *
 * `request` (test/harness/app.ts) calls `checkAnswer` for the service URLs registered with `checkAnswersOf`.
 */

type Json = Record<string, unknown>;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: Json }> }>;
}

interface Checker {
  paths: { segments: (string | null)[]; methods: Record<string, Operation> }[];
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
}

const checkers = new Map<string, Promise<Checker>>();
const DOC_ID = 'https://cadence.invalid/openapi.json';

/** The document with every object schema closed to undeclared properties (unless it says otherwise). */
function closeObjects(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(closeObjects);
  if (!value || typeof value !== 'object') return value;
  const o = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, closeObjects(v)])) as Json;
  if (o.properties && typeof o.properties === 'object' && !('additionalProperties' in o))
    o.additionalProperties = false;
  return o;
}

/** An ajv for OpenAPI 3.1 schemas (JSON Schema 2020-12 plus the OpenAPI keywords), holding `doc` as DOC_ID. */
export function openApiValidator(doc: Json): Checker {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, validateFormats: true });
  addFormats(ajv);
  ajv.addFormat('binary', true);
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs', 'components']);
  const closed = closeObjects(doc) as Json;
  ajv.addSchema({ $id: DOC_ID, components: closed.components });
  const paths = Object.entries(closed.paths as Record<string, Record<string, Operation>>).map(([p, methods]) => ({
    segments: p.split('/').map((s) => (/^\{\w+\}$/.test(s) ? null : s)),
    methods,
  }));
  // Literal paths first: `/offerings/resolve` before `/offerings/{id}` (OpenAPI's matching rule).
  paths.sort((a, b) => a.segments.filter((s) => s === null).length - b.segments.filter((s) => s === null).length);
  return { paths, validators: new Map(), ajv };
}

/** The schema a JSON answer of `method path` with `status` must meet, or why there is none. */
export function answerSchema(
  checker: Checker,
  method: string,
  path: string,
  status: number,
): { schema: Json; where: string } | { error: string } {
  const segs = path.split('/');
  const found = checker.paths.find(
    (p) =>
      p.segments.length === segs.length && p.segments.every((s, i) => (s === null ? segs[i] !== '' : s === segs[i])),
  );
  const op = found?.methods[method.toLowerCase()];
  const errorRef = { $ref: `${DOC_ID}#/components/schemas/Error` };
  if (!op) {
    // Not an operation of the document: the service answers the error shape (404, or 401 before routing).
    if (status < 400) return { error: `${method} ${path} answered ${status} but is no operation of the document` };
    return { schema: errorRef, where: `${method} ${path} (no such operation): Error` };
  }
  // `default` is the document's catch-all for errors: a success must be documented by its own code.
  const keys = [String(status), `${String(status)[0]}XX`, ...(status >= 400 ? ['default'] : [])];
  const key = keys.find((k) => k in op.responses);
  if (!key) return { error: `${method} ${path}: status ${status} is not documented` };
  const schema = op.responses[key].content?.['application/json']?.schema;
  if (!schema) {
    const types = Object.keys(op.responses[key].content ?? {});
    return { error: `${method} ${path} ${status}: documented as ${types.join(', ') || 'no content'}, not JSON` };
  }
  const where = `${method.toUpperCase()} ${found!.segments.map((s) => s ?? '{}').join('/')} ${key}`;
  return { schema, where };
}

/** `#/components/...` references resolved against the document added as DOC_ID. */
function rebase(value: unknown): Json {
  return JSON.parse(JSON.stringify(value).replace(/"#\/components\//g, `"${DOC_ID}#/components/`)) as Json;
}

/** The compiled validator of a schema of the document (`#/components/...` references allowed), kept for reuse. */
export function validatorFor(checker: Checker, schema: Json): ValidateFunction {
  const rebased = rebase(schema);
  const key = JSON.stringify(rebased);
  let validate = checker.validators.get(key);
  if (!validate) checker.validators.set(key, (validate = checker.ajv.compile(rebased)));
  return validate;
}

/** Fails (throws) with the schema errors when `body` is not what the document says `method path status` answers. */
export function checkAgainst(checker: Checker, method: string, path: string, status: number, r: AnswerFacts): void {
  const picked = answerSchema(checker, method, path, status);
  if ('error' in picked) {
    // A binary answer (a PDF) is checked by its media type only.
    if (!(r.contentType ?? '').includes('json') && picked.error.includes('not JSON')) return;
    throw new Error(`OpenAPI check: ${picked.error}: ${r.text.slice(0, 300)}`);
  }
  if (!(r.contentType ?? '').startsWith('application/json'))
    throw new Error(`OpenAPI check: ${picked.where} answered ${r.contentType ?? 'no content type'}, not JSON`);
  const validate = validatorFor(checker, picked.schema);
  if (!validate(r.body)) {
    const errors = (validate.errors ?? [])
      .slice(0, 8)
      .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
    throw new Error(
      `OpenAPI check: the answer of ${method.toUpperCase()} ${path} (${picked.where}) does not match the document:\n  ${errors.join('\n  ')}\nbody: ${r.text.slice(0, 600)}`,
    );
  }
}

export interface AnswerFacts {
  contentType: string | null;
  body: unknown;
  text: string;
}

/** Checks the REST answers of the service at `baseUrl` (its `/v1` paths) from now on. */
export function checkAnswersOf(baseUrl: string): void {
  if (checkers.has(baseUrl)) return;
  checkers.set(
    baseUrl,
    (async () => {
      const res = await fetch(`${baseUrl}/v1/openapi.json`);
      if (res.status !== 200) throw new Error(`OpenAPI check: GET /v1/openapi.json answered ${res.status}`);
      return openApiValidator((await res.json()) as Json);
    })(),
  );
}

/** Stops checking the service at `baseUrl` (it stopped; its port may be reused). */
export function forgetService(baseUrl: string): void {
  checkers.delete(baseUrl);
}

/** Checks one answer when `url` is a REST path of a registered service; throws when it does not match. */
export async function checkAnswer(method: string, url: string, status: number, r: AnswerFacts): Promise<void> {
  const u = new URL(url);
  const checker = checkers.get(u.origin);
  if (!checker || !u.pathname.startsWith('/v1/') || u.pathname === '/v1/openapi.json') return;
  // The gateways' own endpoint (src/http/provider-webhooks.ts) answers them, not merchants: it is no REST operation.
  if (/^\/v1\/providers\/[^/]+\/webhooks\//.test(u.pathname)) return;
  let path = u.pathname.slice(3);
  try {
    path = decodeURIComponent(path);
  } catch {
    /* not decodable: matched as sent */
  }
  checkAgainst(await checker, method, path, status, r);
}

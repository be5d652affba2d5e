import { GraphQLError } from 'graphql';
import { toSnake as snake } from './case';

/**
 * The one error type of the service. Its `code` decides the HTTP status and the error `type` through
 * the single table below, used by both transports (GraphQL extensions and the REST envelope).
 */
export const ERROR_CODES = {
  parameter_missing: [400, 'invalid_request_error'],
  parameter_invalid: [400, 'invalid_request_error'],
  parameter_unknown: [400, 'invalid_request_error'],
  amount_too_small: [400, 'invalid_request_error'],
  amount_exceeds_refundable: [400, 'invalid_request_error'],
  currency_mismatch: [400, 'invalid_request_error'],
  plan_unchanged: [400, 'invalid_request_error'],
  plan_not_recurring: [400, 'invalid_request_error'],
  invalid_json: [400, 'invalid_request_error'],
  test_mode_only: [400, 'invalid_request_error'],
  mode_mismatch: [400, 'invalid_request_error'],
  query_too_complex: [400, 'invalid_request_error'],
  signature_invalid: [400, 'invalid_request_error'],
  idempotency_key_reused: [400, 'idempotency_error'],
  invalid_api_key: [401, 'authentication_error'],
  resource_not_found: [404, 'invalid_request_error'],
  invalid_state_transition: [409, 'invalid_request_error'],
  idempotency_key_in_use: [409, 'invalid_request_error'],
  payment_not_refundable: [409, 'invalid_request_error'],
  provider_not_connected: [409, 'invalid_request_error'],
  provider_already_connected: [409, 'invalid_request_error'],
  provider_in_use: [409, 'invalid_request_error'],
  coupon_code_exists: [409, 'invalid_request_error'],
  lookup_key_exists: [409, 'invalid_request_error'],
  subscription_not_billable: [409, 'invalid_request_error'],
  experiment_not_draft: [409, 'invalid_request_error'],
  experiment_not_running: [409, 'invalid_request_error'],
  paywall_exists: [409, 'invalid_request_error'],
  usage_rate_exists: [409, 'invalid_request_error'],
  mandate_update_unsupported: [409, 'invalid_request_error'],
  no_announced_debit: [409, 'invalid_request_error'],
  e_invoice_not_cancellable: [409, 'invalid_request_error'],
  customer_exists: [409, 'invalid_request_error'],
  request_too_large: [413, 'invalid_request_error'],
  rate_limited: [429, 'rate_limit_error'],
  gateway_unavailable: [502, 'gateway_error'],
  gateway_rejected: [502, 'gateway_error'],
  service_unavailable: [503, 'api_error'],
  internal_error: [500, 'api_error'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
  get status(): number {
    return ERROR_CODES[this.code][0];
  }
  get type(): string {
    return ERROR_CODES[this.code][1];
  }
}

export const notFound = (what: string, id: string, param: string | null = null) =>
  new DomainError('resource_not_found', `No such ${what}: '${id}'`, param);

export const invalid = (param: string, message: string) => new DomainError('parameter_invalid', message, param);

/** Codes a client should simply retry (after Retry-After): the same request may succeed unchanged. */
const RETRYABLE_CODES: ReadonlySet<ErrorCode> = new Set(['service_unavailable']);

/**
 * PostgreSQL cannot be reached now: a connection lost or refused, a server shutting down or starting up, out of
 * connections, a database not accepting connections (`allow_connections false`), a pool that cannot connect.
 * A property of the moment, not of the request: answered 503 `service_unavailable`, retryable, never internal_error.
 */
export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    originalError?: unknown;
    thrownValue?: unknown;
    errors?: unknown;
  };
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  // SQLSTATE class 08 (connection exception), 57P01-57P03 (admin or crash shutdown, cannot connect now), 53300 (too
  // many connections), 55000 when the database does not accept connections; socket errors reaching the server.
  if (/^08[0-9A-Z]{3}$|^57P0[123]$|^53300$/.test(code)) return true;
  if (code === '55000' && /not currently accepting connections/.test(message)) return true;
  if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)$/.test(code)) return true;
  // pg, pg-pool and knex say it in words only.
  if (
    /Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Timeout acquiring a connection/.test(
      message,
    )
  ) {
    return true;
  }
  // graphql-js wraps a thrown value that is not an `Error` of its own realm in a NonErrorThrown with `thrownValue` (a
  // socket error of Node's under a vm context, as jest runs the code).
  const inner = [e.originalError, e.cause, e.thrownValue, ...(Array.isArray(e.errors) ? e.errors.slice(0, 3) : [])];
  return inner.some((x) => x !== err && isDatabaseUnavailable(x, depth + 1));
}

/** The answer while the database cannot be reached (any transport): 503, retryable. */
export const serviceUnavailable = () =>
  new DomainError(
    'service_unavailable',
    'The service is temporarily unavailable: its database cannot be reached. Retry shortly.',
    null,
    {
      'Retry-After': '1',
    },
  );

/** The REST error body; GraphQL carries the same fields in `extensions`. */
export interface ErrorBody {
  error: { type: string; code: string; message: string; param: string | null; request_id: string };
}

export function errorBody(err: DomainError, requestId: string): ErrorBody {
  return { error: { type: err.type, code: err.code, message: err.message, param: err.param, request_id: requestId } };
}

/** `input.customerEmail` / `events.3.quantity` -> `customer_email` / `events[3].quantity` (the API's `param`). */
export function paramFromPath(parts: readonly (string | number)[]): string | null {
  const rest = parts[0] === 'input' ? parts.slice(1) : parts;
  if (rest.length === 0) return null;
  let out = '';
  for (const p of rest) {
    if (typeof p === 'number' || /^\d+$/.test(String(p))) out += `[${p}]`;
    else out += (out ? '.' : '') + snake(String(p));
  }
  return out;
}

/**
 * A scalar's coercion failure (graphql-js, graphql-scalars) in plain words: `SafeInt cannot represent non-integer
 * value: "100"` -> `expected an integer`. Both transports share these: they name JSON types, not GraphQL scalars.
 * Anything not recognised (enums, class-validator rules) keeps its own text.
 */
const PLAIN_REASONS: [RegExp, string][] = [
  [/^(?:Int|SafeInt) cannot represent non-integer value/, 'expected an integer'],
  [/^Int cannot represent non 32-bit signed integer value/, 'expected an integer between -2147483648 and 2147483647'],
  [
    /^SafeInt cannot represent unsafe integer value/,
    'expected an integer between -9007199254740991 and 9007199254740991',
  ],
  [/^Float cannot represent/, 'expected a number'],
  [/^String cannot represent/, 'expected a string'],
  [/^ID cannot represent/, 'expected a string id'],
  [/^Boolean cannot represent/, 'expected a boolean (true or false)'],
  [/^DateTime(?:ISO)? cannot /, 'expected an ISO 8601 date-time such as 2026-01-31T12:00:00Z'],
  [/^JSONObject cannot represent/, 'expected a JSON object'],
  [/^Expected type "[^"]+" to be an object/, 'expected an object'],
  [/^Expected non-nullable type "[^"]+" not to be null/, 'expected a value, not null'],
];

function plainReason(reason: string): string {
  return (
    PLAIN_REASONS.find(([re]) => re.test(reason))?.[1] ??
    reason.replace(/"([A-Z][A-Za-z]+)" enum/, 'the allowed values')
  );
}

/**
 * graphql-js reports bad variables and unknown input fields as plain GraphQLErrors with a message only.
 * Turn those into the API's codes and `param`, so both transports answer them identically.
 * `rename` maps a variable's name to the transport's (REST calls `$first` `limit`); params and messages use it.
 */
export function fromGraphQLError(err: GraphQLError, rename: (param: string) => string = (p) => p): DomainError {
  const original = err.originalError;
  if (original instanceof DomainError) return original;
  const named = (param: string | null) => (param === null ? null : rename(param));
  // class-validator failures, raised by type-graphql as ArgumentValidationError
  const ext = (err.extensions ?? {}) as { validationErrors?: ValidationErrorLike[]; code?: unknown; param?: unknown };
  const validationErrors =
    ext.validationErrors ??
    (original as { extensions?: { validationErrors?: ValidationErrorLike[] } })?.extensions?.validationErrors;
  if (validationErrors?.length) return fromValidationErrors(validationErrors);
  // The database is away: retryable, whatever read or wrote it (a resolver, a subscription's event, a loader).
  if (original && isDatabaseUnavailable(original)) return serviceUnavailable();
  // Anything thrown that is not a GraphQLError is a bug or an outage: never show its message (SQL, stack).
  if (original && !(original instanceof GraphQLError))
    return new DomainError('internal_error', 'An internal error occurred.');
  const code = ext.code;
  if (typeof code === 'string' && code in ERROR_CODES && code !== 'internal_error') {
    return new DomainError(code as ErrorCode, err.message, (ext.param as string | null) ?? null);
  }
  const msg = err.message;
  if (
    /(depth limit|Query Cost limit|Aliases limit|Token limit|Directives limit|Document contains more tha[nt] \d+ tokens)/i.test(
      msg,
    )
  ) {
    return new DomainError('query_too_complex', msg.replace(/^Syntax Error: /, ''));
  }
  let m = /Field "([^"]+)" is not defined by type "[^"]+"/.exec(msg);
  if (m) {
    const at = /at "([^"]+)"/.exec(msg);
    const base = at ? at[1].split('.') : [];
    return new DomainError(
      'parameter_unknown',
      `Received unknown parameter: ${snake(m[1])}`,
      named(paramFromPath([...base, m[1]])),
    );
  }
  m = /Field "([^"]+)" of required type "[^"]+" was not provided/.exec(msg);
  if (m) {
    const at = /at "([^"]+)"/.exec(msg);
    const base = at ? at[1].split('.') : [];
    // An inline literal names the field with its input type (`CreateProductInput.name`): keep the field.
    const param = named(paramFromPath([...base, m[1].slice(m[1].lastIndexOf('.') + 1)]));
    return new DomainError('parameter_missing', `Missing required parameter: ${param}`, param);
  }
  m = /^Variable "\$([^"]+)" of (?:non-null|required) type "[^"]+" (?:must not be null|was not provided)/.exec(msg);
  if (m)
    return new DomainError(
      'parameter_missing',
      `Missing required parameter: ${rename(snake(m[1]))}`,
      rename(snake(m[1])),
    );
  m = /^Variable "\$([^"]+)" got invalid value (.*?)(?: at "([^"]+)")?; (.*)$/s.exec(msg);
  if (m) {
    const param = named(m[3] ? paramFromPath(m[3].split('.')) : paramFromPath([m[1]]));
    return new DomainError(
      'parameter_invalid',
      `Invalid value for ${param ?? 'the request body'}: ${plainReason(m[4])}`,
      param,
    );
  }
  // Several operations and no operationName, or an operationName the document does not define (Apollo wraps
  // graphql-js's own error, so it has an originalError and must not fall through to internal_error).
  if (err.extensions?.code === 'OPERATION_RESOLUTION_FAILURE') return operationNotFound(null, msg);
  if (
    err.extensions?.code === 'GRAPHQL_PARSE_FAILED' ||
    err.extensions?.code === 'GRAPHQL_VALIDATION_FAILED' ||
    err.extensions?.code === 'BAD_USER_INPUT' ||
    /^Syntax Error|Cannot query field|Unknown argument|Unknown type/.test(msg)
  ) {
    return new DomainError('parameter_invalid', msg);
  }
  if (!original && !/^Cannot return null for non-nullable field/.test(msg))
    return new DomainError('parameter_invalid', msg);
  return new DomainError('internal_error', 'An internal error occurred.');
}

/**
 * No operation to run: several in the document and no `operationName`, or a name it does not define. Over HTTP
 * graphql-js words it (through Apollo, `message`); graphql-ws gets the same words and `param` from this.
 */
export const operationNotFound = (operationName: string | null | undefined, message?: string) =>
  new DomainError(
    'parameter_invalid',
    message ??
      (operationName
        ? `Unknown operation named "${operationName}".`
        : 'Must provide operation name if query contains multiple operations.'),
    'operationName',
  );

interface ValidationErrorLike {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationErrorLike[];
}

function fromValidationErrors(errors: ValidationErrorLike[], prefix: (string | number)[] = []): DomainError {
  const first = errors[0];
  const path = [...prefix, first.property];
  if (!first.constraints && first.children?.length) return fromValidationErrors(first.children, path);
  const param = paramFromPath(path);
  const message = Object.values(first.constraints ?? {})[0] ?? 'is invalid';
  return new DomainError('parameter_invalid', `Invalid ${param}: ${message.replace(/^\S+ /, '')}`, param);
}

/** GraphQL's view of a DomainError: the same code, type, param and status, in `extensions`. */
export function graphQLExtensions(err: DomainError, requestId?: string) {
  return {
    code: err.code,
    type: err.type,
    param: err.param,
    ...(RETRYABLE_CODES.has(err.code) ? { retryable: true } : {}),
    ...(requestId ? { requestId } : {}),
    http: { status: err.status },
  };
}

/** A GraphQL-over-HTTP answer holding only this error (refused before Apollo runs: auth, body, rate limit). */
export function graphQLErrorBody(err: DomainError, requestId: string) {
  return { errors: [{ message: err.message, extensions: graphQLExtensions(err, requestId) }] };
}

/** Formats any error leaving graphql-js (Apollo, graphql-ws, the REST shim) into the API's error terms. */
export function formatGraphQLError(error: unknown, log?: (err: unknown) => void) {
  const gqlError =
    error instanceof GraphQLError
      ? error
      : new GraphQLError(String((error as Error)?.message ?? error), {
          originalError: error instanceof Error ? error : undefined,
        });
  const domain = fromGraphQLError(gqlError);
  if (domain.code === 'internal_error' && log) log(gqlError.originalError ?? gqlError);
  return {
    message: domain.message,
    ...(gqlError.locations ? { locations: gqlError.locations } : {}),
    ...(gqlError.path ? { path: gqlError.path } : {}),
    extensions: graphQLExtensions(domain),
  };
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { NextFunction, Request, Response } from 'express';
import { logger } from '../../core/logger';
import { SandboxIdempotencyKey } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { v7 as uuidv7 } from 'uuid';
import { requestHash } from './request-hash';
import { MAX_JSON_DEPTH, pathDeeperThan } from '../../core/input-limits';
import { nulAt } from '../../core/nul';
import { openAnswer, sealAnswer } from './sealed';
import { Account, Draft } from './store';

/** Request plumbing shared by the Stripe and Razorpay routes: errors, idempotency, commit-then-deliver. */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
}

/**
 * A call the sandbox does not serve, in Stripe's shape: 404 invalid_request_error, as Stripe answers a URL it does not
 * know, saying that it is the sandbox that lacks it (docs/sandbox.md lists what it serves). Also the answer to any
 * path outside the gateways' APIs and the checkout pages.
 */
export const notEmulated = (method: string, path: string) =>
  new ApiError(
    404,
    `The Cadence gateway sandbox does not emulate ${method} ${path}: it serves only the Stripe calls listed in docs/sandbox.md.`,
  );

/**
 * Refuses a path or query the sandbox's store cannot take, as a 400: U+0000 anywhere (PostgreSQL cannot store it in
 * text or jsonb). Mounted once, before every route; bodies are checked after each router's parser (bodyChecks).
 */
export function requestChecks(req: Request, _res: Response, next: NextFunction): void {
  let path = req.path;
  try {
    path = decodeURIComponent(path);
  } catch {
    /* the router answers an undecodable path */
  }
  const at = path.includes('\u0000') ? ['path'] : nulAt(req.query, 'query');
  if (at) return next(nulError(at));
  next();
}

/**
 * Refuses a body the sandbox's store cannot take, as a 400 (mount it after the body parser): nested deeper than the
 * service accepts (before the idempotency fingerprint walks it), or holding U+0000.
 */
export function bodyChecks(req: Request, _res: Response, next: NextFunction): void {
  req.body ??= {}; // a body of another content type is not parsed: the handlers then see no parameters
  if (pathDeeperThan(req.body, MAX_JSON_DEPTH))
    return next(new ApiError(400, `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`, 'parameter_invalid'));
  const at = nulAt(req.body, 'body');
  if (at) return next(nulError(at));
  next();
}

const nulError = (at: (string | number)[]) =>
  new ApiError(
    400,
    'Parameters must not contain the NUL character (\\u0000).',
    'parameter_invalid',
    at.slice(1).join('.') || null,
  );

/**
 * The sandbox's error handler in Stripe's shape: the Stripe routes' own, and the last one of the whole app (the
 * Razorpay routes answer in Razorpay's shape first). An ApiError answers its status, code and param; a client's
 * error (body-parser's 4xx: bad encodings, bad JSON) keeps its status; anything else is a 500.
 */
export function sandboxErrorHandler(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
  if (res.headersSent) return;
  if (err instanceof ApiError) {
    res.status(err.status).json({
      error: { type: err.type, code: err.code ?? undefined, message: err.message, param: err.param ?? undefined },
    });
    return;
  }
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown };
  const status = typeof e?.status === 'number' ? e.status : typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    res.status(status).json({ error: { type: 'invalid_request_error', message: String(e.message ?? 'Bad request') } });
    return;
  }
  logger.error({ err }, 'gateway sandbox error');
  res
    .status(500)
    .json({ error: { type: 'api_error', message: 'An unexpected error occurred in the gateway sandbox.' } });
}

export interface Result {
  status?: number;
  body: unknown;
  /** Events queued in the transaction, delivered after it commits. */
  events?: string[];
  /**
   * Deliver the events (and wait for the merchant's answers) before answering, as checkouts do: for calls whose
   * caller must see its own state moved when the call returns (charge retries). Default: in the background.
   */
  deliverFirst?: boolean;
}

/**
 * Runs a handler in one transaction with the account's idempotency key: the same key and parameters replay the
 * first answer (created nothing new); the same key with other parameters is an ApiError. Then delivers events
 * in the background and answers.
 */
export async function runApi(
  sb: Sandbox,
  req: Request,
  res: Response,
  account: Account,
  idempotencyKey: string | undefined,
  handler: (em: EntityManager) => Promise<Result>,
  reused: () => ApiError,
): Promise<void> {
  const hash = requestHash(req.method, `${req.baseUrl}${req.path}`, req.body ?? {});
  const attempt = () =>
    sb.tx(async (em) => {
      if (idempotencyKey) {
        const prior = await em.findOne(SandboxIdempotencyKey, {
          provider: account.provider,
          accountKey: account.accountKey,
          key: idempotencyKey,
        });
        if (prior) {
          if (prior.requestHash !== hash) throw reused();
          return {
            replayed: true,
            status: prior.status,
            body: openAnswer(sb.secrets, prior.response),
            events: [] as string[],
            deliverFirst: false,
          };
        }
      }
      const result = await handler(em);
      const status = result.status ?? 200;
      if (idempotencyKey) {
        em.persist(
          Object.assign(new SandboxIdempotencyKey(), {
            provider: account.provider,
            accountKey: account.accountKey,
            key: idempotencyKey,
            requestHash: hash,
            status,
            response: sealAnswer(sb.secrets, result.body),
          }),
        );
        await em.flush();
      }
      return {
        replayed: false,
        status,
        body: result.body,
        events: result.events ?? [],
        deliverFirst: Boolean(result.deliverFirst),
      };
    });
  let out;
  try {
    out = await attempt();
  } catch (err) {
    // Two requests raced with one key: the loser's work rolled back; it now replays the winner's answer.
    if (!(err instanceof UniqueConstraintViolationException) || !idempotencyKey) throw err;
    out = await attempt();
  }
  if (out.deliverFirst) await sb.deliver(out.events);
  else sb.deliverLater(out.events);
  if (out.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(out.status).json(out.body);
}

export interface CreateResult {
  status?: number;
  body: unknown;
}

/** Writes the key and the draft's objects together: the objects only when the key row is new. */
const INSERT_KEY_AND_OBJECTS = `
with k as (
  insert into sandbox_idempotency_keys (id, provider, account_key, key, request_hash, status, response)
  values ($1, $2, $3, $4, $5, $6, $7::jsonb)
  on conflict (provider, account_key, key) do nothing
  returning 1
), o as (
  insert into sandbox_objects (id, provider, account_key, type, data, internal, due_at)
  select x.id, $2, $3, x.type, x.data, x.internal, x.due_at
  from jsonb_to_recordset($8::jsonb) as x(id text, type text, data jsonb, internal jsonb, due_at timestamptz)
  where exists (select 1 from k)
)
select true as inserted, null::text as request_hash, null::int as status, null::jsonb as response from k
union all
select false, request_hash, status, response from sandbox_idempotency_keys where provider = $2 and account_key = $3 and key = $4`;

const INSERT_OBJECTS = `
insert into sandbox_objects (id, provider, account_key, type, data, internal, due_at)
select x.id, $1, $2, x.type, x.data, x.internal, x.due_at
from jsonb_to_recordset($3::jsonb) as x(id text, type text, data jsonb, internal jsonb, due_at timestamptz)`;

const SELECT_KEY =
  'select request_hash, status, response from sandbox_idempotency_keys where provider = $1 and account_key = $2 and key = $3';

interface StoredKey {
  request_hash: string;
  status: number;
  response: unknown;
}

/**
 * runApi for calls that only create objects and send no events (checkout sessions, prices, products, payment
 * links, plans), with the same answers, in one SQL statement instead of an ORM transaction: the handler builds its
 * objects in a Draft, then the key and the objects are inserted together, the objects only if the key was new.
 * A replay, or the loser of a race on one key, reads the stored answer instead.
 */
export async function runCreate(
  sb: Sandbox,
  req: Request,
  res: Response,
  account: Account,
  idempotencyKey: string | undefined,
  handler: (draft: Draft) => Promise<CreateResult>,
  reused: () => ApiError,
): Promise<void> {
  const hash = requestHash(req.method, `${req.baseUrl}${req.path}`, req.body ?? {});
  const replay = (prior: StoredKey) => {
    if (prior.request_hash !== hash) throw reused();
    res.setHeader('Idempotent-Replayed', 'true');
    res.status(prior.status).json(prior.response);
  };
  const stored = async () =>
    idempotencyKey
      ? (
          await sb.pool.query<StoredKey>({
            name: 'sandbox_select_key',
            text: SELECT_KEY,
            values: [account.provider, account.accountKey, idempotencyKey],
          })
        ).rows[0]
      : undefined;

  const draft = new Draft(sb.pool, account);
  let result: CreateResult;
  try {
    result = await handler(draft);
  } catch (err) {
    // runApi looked the key up before the handler: a stored answer (or the reuse error) still wins over this error.
    const prior = await stored();
    if (prior) return replay(prior);
    throw err;
  }
  const status = result.status ?? 200;
  const objects = JSON.stringify(
    draft.created.map((o) => ({ id: o.id, type: o.type, data: o.data, internal: o.internal, due_at: o.dueAt })),
  );
  if (!idempotencyKey) {
    await sb.pool.query({
      name: 'sandbox_insert_objects',
      text: INSERT_OBJECTS,
      values: [account.provider, account.accountKey, objects],
    });
    res.status(status).json(result.body);
    return;
  }
  const { rows } = await sb.pool.query<StoredKey & { inserted: boolean }>({
    name: 'sandbox_insert_key_and_objects',
    text: INSERT_KEY_AND_OBJECTS,
    values: [
      uuidv7(),
      account.provider,
      account.accountKey,
      idempotencyKey,
      hash,
      status,
      JSON.stringify(result.body),
      objects,
    ],
  });
  if (rows[0]?.inserted) {
    res.status(status).json(result.body);
    return;
  }
  // No row: the key was committed by a concurrent request after this statement's snapshot; read it now.
  const prior = rows[0] ?? (await stored());
  if (!prior) throw new Error('sandbox idempotency key vanished');
  replay(prior);
}

/** Reads an integer parameter sent as a form string or JSON number. */
export function intParam(
  value: unknown,
  param: string,
  opts: { required?: boolean; min?: number } = {},
): number | undefined {
  if (value === undefined || value === null || value === '') {
    if (opts.required) throw new ApiError(400, `Missing required param: ${param}.`, 'parameter_missing', param);
    return undefined;
  }
  const n = typeof value === 'number' ? value : /^-?\d+$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || (opts.min !== undefined && n < opts.min)) {
    throw new ApiError(400, `Invalid integer: ${String(value)}`, 'parameter_invalid_integer', param);
  }
  return n;
}

export function strParam(value: unknown, param: string, required = false): string | undefined {
  if (value === undefined || value === null || value === '') {
    if (required) throw new ApiError(400, `Missing required param: ${param}.`, 'parameter_missing', param);
    return undefined;
  }
  if (typeof value !== 'string') throw new ApiError(400, `Invalid string: ${param}`, 'parameter_invalid_string', param);
  return value;
}

/** Form-encoded arrays arrive as arrays, or as objects keyed "0", "1", ... past the parser's array limit. */
export function listParam(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') {
    return Object.keys(value as object)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => (value as Record<string, unknown>)[k]);
  }
  return [value];
}

export function metadataParam(value: unknown): Record<string, string> {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ApiError(400, 'Invalid metadata: must be an object', 'parameter_invalid', 'metadata');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== '' && v != null) out[k] = String(v);
  return out;
}

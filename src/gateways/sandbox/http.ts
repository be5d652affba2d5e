import type { EntityManager } from '@mikro-orm/postgresql';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Request, Response } from 'express';
import { SandboxIdempotencyKey } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { fingerprint } from '../../core/idempotency';
import { Account } from './store';

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

export interface Result {
  status?: number;
  body: unknown;
  /** Events queued in the transaction, delivered after it commits. */
  events?: string[];
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
  const hash = fingerprint(req.method, `${req.baseUrl}${req.path}`, req.body ?? {});
  const attempt = () =>
    sb.tx(async (em) => {
      if (idempotencyKey) {
        const prior = await em.findOne(SandboxIdempotencyKey, { provider: account.provider, accountKey: account.accountKey, key: idempotencyKey });
        if (prior) {
          if (prior.requestHash !== hash) throw reused();
          return { replayed: true, status: prior.status, body: prior.response, events: [] as string[] };
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
            response: result.body,
          }),
        );
        await em.flush();
      }
      return { replayed: false, status, body: result.body, events: result.events ?? [] };
    });
  let out;
  try {
    out = await attempt();
  } catch (err) {
    // Two requests raced with one key: the loser's work rolled back; it now replays the winner's answer.
    if (!(err instanceof UniqueConstraintViolationException) || !idempotencyKey) throw err;
    out = await attempt();
  }
  sb.deliverLater(out.events);
  if (out.replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.status(out.status).json(out.body);
}

/** Reads an integer parameter sent as a form string or JSON number. */
export function intParam(value: unknown, param: string, opts: { required?: boolean; min?: number } = {}): number | undefined {
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
  if (typeof value !== 'object' || Array.isArray(value)) throw new ApiError(400, 'Invalid metadata: must be an object', 'parameter_invalid', 'metadata');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) if (v !== '' && v != null) out[k] = String(v);
  return out;
}

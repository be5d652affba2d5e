import express, { NextFunction, Request, Response, Router } from 'express';

/**
 * Fault injection (a sandbox extension for tests, on only with SANDBOX_FAULTS=on): makes the next `times` requests whose
 * method and path match fail in a chosen way, so tests can show that what the service asked of a gateway is neither
 * lost nor done twice.
 *
 * - `POST /_faults {method?, path, times?, kind}` adds a rule (`path`: a prefix of the request path, `*` matching one
 *   segment; `times` default 1); `DELETE /_faults` removes them all; `GET /_faults` lists them with what is left.
 * - `kind` `error`: answers 500 without doing anything. `timeout`: never answers and does nothing (the client's own
 *   timeout ends the request). `lost`: does what was asked, then drops the connection instead of answering. `slow`: does
 *   what was asked at once and answers `ms` (default 1000, at most 10000) later, so a test can run something in between
 *   (a renewal while a command's gateway call is still out).
 *
 * Rules live in the sandbox process's memory, at most MAX_RULES of them.
 */
export type FaultKind = 'error' | 'timeout' | 'lost' | 'slow';

interface Rule {
  method: string | null;
  path: RegExp;
  pattern: string;
  kind: FaultKind;
  /** `slow`: how long the answer is held. */
  ms: number;
  left: number;
  hits: number;
}

const MAX_RULES = 32;
/** A held (`timeout`) request is let go after this, so a forgotten rule never holds sockets for good. */
const HOLD_MS = 10 * 60_000;

export class Faults {
  private rules: Rule[] = [];

  /** The rule a request trips, counted; null: none. */
  take(method: string, path: string): Rule | null {
    const rule = this.rules.find((r) => r.left > 0 && (!r.method || r.method === method) && r.path.test(path));
    if (!rule) return null;
    rule.left -= 1;
    rule.hits += 1;
    return rule;
  }

  router(): Router {
    const r = express.Router();
    r.use('/_faults', express.json({ limit: '16kb' }));
    r.post('/_faults', (req, res) => {
      const b = (req.body ?? {}) as Record<string, unknown>;
      const kind = b.kind;
      const times = b.times ?? 1;
      if (kind !== 'error' && kind !== 'timeout' && kind !== 'lost' && kind !== 'slow')
        return void res.status(400).json({ error: { message: 'kind must be error, timeout, lost or slow' } });
      const ms = b.ms ?? 1000;
      if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 10_000)
        return void res.status(400).json({ error: { message: 'ms must be 0 to 10000' } });
      if (typeof b.path !== 'string' || !b.path.startsWith('/') || b.path.length > 200)
        return void res.status(400).json({ error: { message: 'path must be a path prefix' } });
      if (typeof times !== 'number' || !Number.isInteger(times) || times < 1 || times > 1000)
        return void res.status(400).json({ error: { message: 'times must be 1 to 1000' } });
      if (b.method != null && typeof b.method !== 'string')
        return void res.status(400).json({ error: { message: 'method must be a string' } });
      if (this.rules.length >= MAX_RULES)
        return void res.status(400).json({ error: { message: `at most ${MAX_RULES} rules` } });
      const escaped = b.path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+');
      this.rules.push({
        method: b.method ? b.method.toUpperCase() : null,
        path: new RegExp(`^${escaped}`),
        pattern: b.path,
        kind,
        ms,
        left: times,
        hits: 0,
      });
      res.status(201).json(this.list());
    });
    r.get('/_faults', (_req, res) => void res.json(this.list()));
    r.delete('/_faults', (_req, res) => {
      this.rules = [];
      res.json(this.list());
    });
    return r;
  }

  /** The middleware that applies the rules, mounted before the gateway routes. */
  readonly apply = (req: Request, res: Response, next: NextFunction): void => {
    if (req.path.startsWith('/_faults')) return next();
    const rule = this.take(req.method, req.path);
    if (!rule) return next();
    const kind = rule.kind;
    if (kind === 'slow') {
      // Done at once (the handler commits before it answers); the answer leaves `ms` later.
      const end = res.end.bind(res);
      res.end = ((...args: unknown[]) => {
        setTimeout(() => end(...(args as [])), rule.ms);
        return res;
      }) as typeof res.end;
      return next();
    }
    if (kind === 'error') {
      res
        .status(500)
        .json({ error: { type: 'api_error', message: 'Injected fault: the gateway sandbox failed this request.' } });
      return;
    }
    if (kind === 'timeout') {
      const t = setTimeout(() => req.socket.destroy(), HOLD_MS);
      t.unref();
      req.socket.once('close', () => clearTimeout(t));
      return;
    }
    // lost: the request is done; its answer never reaches the client.
    const end = res.end.bind(res);
    res.end = ((...args: unknown[]) => {
      req.socket.destroy();
      return end(...(args as []));
    }) as typeof res.end;
    next();
  };

  private list() {
    return {
      object: 'list',
      data: this.rules.map((r) => ({ method: r.method, path: r.pattern, kind: r.kind, left: r.left, hits: r.hits })),
    };
  }
}

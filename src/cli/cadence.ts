#!/usr/bin/env node
import { parseArgs, ParseArgsConfig } from 'node:util';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { boundedStream } from '../core/bounded-stream';

/**
 * `cadence`: the command-line client of a running Cadence service (docs/cli.md). It speaks only the service's public
 * HTTP API and its GraphQL WebSocket, never the database, so it works beside `npm start` on the embedded database.
 * Exit codes: 0 done; 1 the service refused (its error printed) or could not be reached; 2 the command line is wrong.
 */

const DEFAULT_URL = 'http://127.0.0.1:4000'; // `npm start` serves on PORT, default 4000

export const EXIT_OK = 0;
export const EXIT_API = 1;
export const EXIT_USAGE = 2;

/** A command line the CLI cannot run (exit 2). */
class UsageError extends Error {}

/** An error answer of the service, or no answer (exit 1). */
class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

const GLOBAL_HELP = `cadence: command-line client of a running Cadence service

Usage: cadence <command> [options]

Commands:
  listen --forward-to URL      Stream your events to a local URL, signed like webhook deliveries
  trigger <event type>         Send a simulated event of a kind (test mode)
  clock                        Show the test clock's time (test mode)
  clock advance <duration>     Move the test clock forward: 30d, 12h, 90m, 3600s (test mode)
  merchants create --name ...  Onboard a merchant (operator token) and print its keys
  keys roll                    Roll a secret key (yours, or a merchant's as the operator) and print the new one

Options of every command:
  --api-key KEY      Secret key sk_test_... or sk_live_... (env CADENCE_API_KEY)
  --url URL          The service (env CADENCE_URL; default ${DEFAULT_URL})
  -h, --help         Help of a command: cadence <command> --help

Exit codes: 0 done, 1 the service answered an error (printed) or could not be reached, 2 wrong command line.
Docs: docs/cli.md`;

const COMMON = {
  'api-key': { type: 'string' },
  url: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal (progress is redrawn in place there, printed every few seconds otherwise). */
  tty: boolean;
}

interface Command {
  help: string;
  options: ParseArgsConfig['options'];
  run(values: Record<string, string | boolean | undefined>, positionals: string[], io: Io): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

interface Target {
  url: string;
  auth: string | null;
}

function baseUrl(values: Record<string, unknown>, io: Io): string {
  const raw = String(values.url ?? io.env.CADENCE_URL ?? DEFAULT_URL).replace(/\/+$/, '');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(`--url: "${raw}" is not a URL (e.g. ${DEFAULT_URL}).`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError('--url must be an http or https URL.');
  return raw;
}

function apiKey(values: Record<string, unknown>, io: Io): string {
  const key = (values['api-key'] as string | undefined) ?? io.env.CADENCE_API_KEY;
  if (!key) throw new UsageError('No API key: pass --api-key sk_test_... or set CADENCE_API_KEY.');
  return key;
}

const merchantTarget = (values: Record<string, unknown>, io: Io): Target => ({
  url: baseUrl(values, io),
  auth: apiKey(values, io),
});

async function call<T = Record<string, unknown>>(
  target: Target,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}/v1${path}`, {
      method,
      headers: {
        ...(target.auth ? { authorization: `Bearer ${target.auth}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        'user-agent': 'cadence-cli',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw unreachable(target.url, err);
  }
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: reported below when the status is an error
  }
  if (!res.ok) {
    const e = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(
      e ? `${e.code}: ${e.message}` : `HTTP ${res.status} from ${target.url}${text ? `: ${text.slice(0, 200)}` : ''}`,
      res.status,
      e?.code ?? null,
    );
  }
  return parsed as T;
}

function unreachable(url: string, err: unknown): ApiError {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (err as Error).message;
  return new ApiError(`Could not reach the Cadence service at ${url} (${why}). Is it running (npm start)? See --url.`);
}

// ---------------------------------------------------------------------------------------------------------------
// Progress

/** A line redrawn in place on a terminal (every 10 s as its own line elsewhere); `done` clears it. */
function progress(io: Io, text: () => string): { done(): void } {
  const started = Date.now();
  const elapsed = () => `${Math.round((Date.now() - started) / 1000)}s`;
  let last = 0;
  const draw = () => {
    if (io.tty) process.stderr.write(`\r\x1b[2K${text()} (${elapsed()})`);
    else if (Date.now() - last >= 10_000) {
      last = Date.now();
      io.err(`${text()} (${elapsed()})`);
    }
  };
  draw();
  const timer = setInterval(draw, io.tty ? 250 : 1000);
  return {
    done() {
      clearInterval(timer);
      if (io.tty) process.stderr.write('\r\x1b[2K');
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// listen

interface LiveEventMessage {
  id: string;
  type: string;
  livemode: boolean;
  createdAt: string;
  body: string;
  missed: number;
}

const LISTEN_QUERY = `subscription($types: [String!]) { events(types: $types) { id type livemode createdAt body missed } }`;
/** Events received and not forwarded yet that the CLI keeps before it drops the oldest (the service bounds its own). */
const LOCAL_BUFFER = 1000;
/** As long as a webhook delivery waits for its answer. */
const FORWARD_TIMEOUT_MS = 10_000;

const listen: Command = {
  help: `Usage: cadence listen --forward-to URL [--events TYPES] [--secret whsec_...] [--api-key KEY] [--url URL]

Streams your merchant's events in the key's mode (the same JSON bodies and types webhook endpoints receive) and
POSTs each to URL, signed exactly as webhook deliveries are (Standard Webhooks headers webhook-id,
webhook-timestamp, webhook-signature). Prints the signing secret at start; verify with it as with an endpoint's.
One line per event: time, type, event id, and the local URL's answer.

Options:
  --forward-to URL   Where to POST events (e.g. http://localhost:3000/webhooks)
  --events TYPES     Comma-separated types or prefixes (payment.succeeded,subscription.*); default all
  --secret whsec_... Sign with this secret instead of a new one (keeps your receiver's configuration)

Events recorded while the CLI is not connected are not replayed (your webhook endpoints still get them). Events
are forwarded one at a time, in order; a receiver slower than the events drops the oldest waiting ones (reported).
Stop with Ctrl-C.`,
  options: {
    'forward-to': { type: 'string' },
    events: { type: 'string' },
    secret: { type: 'string' },
  },
  async run(values, _positionals, io) {
    const target = merchantTarget(values, io);
    const forwardTo = values['forward-to'] as string | undefined;
    if (!forwardTo) throw new UsageError('listen needs --forward-to URL (e.g. http://localhost:3000/webhooks).');
    try {
      const u = new URL(forwardTo);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new UsageError(`--forward-to: "${forwardTo}" is not an http or https URL.`);
    }
    const secret = (values.secret as string | undefined) ?? null;
    if (secret !== null && !/^whsec_[A-Za-z0-9+/=]+$/.test(secret))
      throw new UsageError('--secret must look like whsec_<base64>.');
    const types = values.events
      ? String(values.events)
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean)
      : null;

    // The key, checked over HTTP first: a wrong one is reported plainly rather than as a closed socket.
    await call(target, 'GET', '/webhooks/endpoints?limit=1');
    const { deliveryHeaders, newWebhookSecret } = webhookSigning();
    const signingSecret = secret ?? newWebhookSecret();

    const client = createClient({
      url: `${target.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${target.auth}` },
      lazy: false,
      keepAlive: 15_000,
      retryAttempts: Infinity,
      shouldRetry: () => true,
      on: {
        connected: (_socket, _payload, wasRetry) => {
          if (wasRetry) io.err('Reconnected; events recorded while disconnected are not replayed.');
        },
        closed: (event) => {
          const code = (event as { code?: number }).code;
          if (code !== 1000) io.err(`Connection to ${target.url} lost (${code ?? 'no answer'}); reconnecting...`);
        },
      },
    });

    const mode = target.auth!.startsWith('sk_live_') ? 'live' : 'test';
    io.out(`Ready! Your webhook signing secret is ${signingSecret} (^C to quit)`);
    io.out(`Forwarding ${mode}-mode events${types ? ` (${types.join(', ')})` : ''} to ${forwardTo}`);

    type Next = { data?: { events?: LiveEventMessage } | null; errors?: readonly { message: string }[] };
    let fail: ((e: Error) => void) | null = null;
    const finished = new Promise<void>((resolve, reject) => {
      fail = reject;
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    const stream = boundedStream<Next>(
      (push) =>
        client.subscribe<Next['data']>(
          { query: LISTEN_QUERY, variables: { types } },
          {
            next: (result) => push(result as Next),
            error: (err) => fail?.(subscriptionError(err)),
            complete: () => fail?.(new ApiError('The service ended the event stream.')),
          },
        ),
      LOCAL_BUFFER,
    );
    const forwarding = (async () => {
      for await (const { value, missed } of stream) {
        if (missed) io.err(`! ${missed} event(s) dropped: the receiver is slower than the events`);
        if (value.errors?.length) {
          io.err(`! ${value.errors.map((e) => e.message).join('; ')}`);
          continue;
        }
        const event = value.data?.events;
        if (!event) continue;
        if (event.missed) io.err(`! ${event.missed} event(s) dropped by the service: this listener fell behind`);
        io.out(await forward(forwardTo, event, deliveryHeaders(event.id, event.body, [signingSecret])));
      }
    })();
    try {
      await Promise.race([finished, forwarding]);
    } finally {
      await stream.return?.();
      await client.dispose();
    }
  },
};

/**
 * The signing code of webhook deliveries (src/modules/webhooks), loaded when `listen` runs: the module brings the ORM
 * entities and GraphQL types, which `--help` and the other commands do without.
 */
function webhookSigning(): Pick<typeof import('../modules/webhooks'), 'deliveryHeaders' | 'newWebhookSecret'> {
  /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use, see above */
  require('reflect-metadata');
  return require('../modules/webhooks') as typeof import('../modules/webhooks');
  /* eslint-enable @typescript-eslint/no-require-imports */
}

function subscriptionError(err: unknown): Error {
  if (Array.isArray(err)) return new ApiError(err.map((e: { message?: string }) => e.message).join('; '));
  const code = (err as { code?: number }).code;
  if (code === 4403) return new ApiError('invalid_api_key: the service refused the API key on the WebSocket.');
  if (code === 4429) return new ApiError('rate_limited: too many connections for this API key.');
  if (err instanceof Error) return new ApiError(err.message);
  return new ApiError(`The event stream closed (${code ?? 'unknown reason'}).`);
}

async function forward(url: string, event: LiveEventMessage, headers: Record<string, string>): Promise<string> {
  const time = new Date().toISOString().slice(11, 19);
  const head = `${time}  ${event.type.padEnd(32)} ${event.id}`;
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers,
      body: event.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => undefined);
    const ms = Math.round(performance.now() - started);
    return `${head}  --> [${res.status}] POST ${url} (${ms} ms)`;
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string } };
    const why =
      e.name === 'TimeoutError' ? `no answer in ${FORWARD_TIMEOUT_MS / 1000} s` : (e.cause?.code ?? String(err));
    return `${head}  --> [ERR] POST ${url} (${why})`;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// trigger

const trigger: Command = {
  help: `Usage: cadence trigger <event type> [--endpoint ID] [--json] [--api-key sk_test_...] [--url URL]

Sends a simulated event of that type, with a sample object, to your enabled test endpoints that take it (or only
to --endpoint), and to every running \`cadence listen\`. Test mode only. Types: payment.succeeded (the default),
payment.failed, payment.refunded, subscription.created, subscription.activated, subscription.trial_started,
subscription.paused, subscription.resumed, subscription.cancelled, subscription.cancellation_removed,
subscription.payment_failed, subscription.payment_succeeded, subscription.halted, subscription.completed,
subscription.plan_changed, subscription.plan_change_scheduled, subscription.scheduled_change_removed,
subscription.mandate_updated, subscription.mandate_revoked, invoice.created, invoice.paid, invoice.upcoming, invoice.payment_action_required,
credit_note.created, e_invoice.registered, e_invoice.failed, e_invoice.cancelled, webhook_endpoint.disabled. An unknown type is refused by the service (parameter_invalid).

Options:
  --endpoint ID   Only this endpoint
  --json          Print the service's answer as JSON`,
  options: { endpoint: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, positionals, io) {
    if (positionals.length > 1) throw new UsageError('trigger takes one event type.');
    const target = merchantTarget(values, io);
    const type = positionals[0] ?? 'payment.succeeded';
    const r = await call<{ event_id: string; type: string; deliveries: unknown[] }>(
      target,
      'POST',
      '/webhooks/trigger-test',
      { type, ...(values.endpoint ? { endpoint_id: values.endpoint } : {}) },
    );
    if (values.json) return io.out(JSON.stringify(r, null, 2));
    io.out(`Triggered ${r.type} (event ${r.event_id}): ${r.deliveries.length} webhook delivery(ies) queued.`);
  },
};

// ---------------------------------------------------------------------------------------------------------------
// clock

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
/** The service moves a test clock at most this far per call. */
const MAX_ADVANCE_SECONDS = 366 * 86400;

/** "30d", "12h", "90m", "3600s", "2w", "1d12h" or a plain number of seconds, in seconds. */
export function parseDuration(text: string): number | null {
  if (/^\d+$/.test(text)) return Number(text) > 0 ? Number(text) : null;
  const parts = [...text.matchAll(/(\d+)([smhdw])/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== text) return null;
  const seconds = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
  return seconds > 0 && Number.isSafeInteger(seconds) ? seconds : null;
}

interface ClockState {
  now: string;
  advance_target: string | null;
  advance_interrupted_at: string | null;
}

const clock: Command = {
  help: `Usage: cadence clock [--json] [--api-key sk_test_...] [--url URL]
       cadence clock advance <duration> | --to ISO-TIME [--json]

Shows your test clock (test mode's time), or moves it forward: 30d, 12h, 90m, 3600s, 2w, 1d12h or seconds. An
advance answers once every piece of work due by then is done (trial ends, renewals, dunning, webhooks), in time
order; it can take a while: progress is shown. Advances over 366 days are made in steps of 366 days.
Interrupted (Ctrl-C), the service stops at a consistent point; the next advance resumes it.

Options:
  --to ISO-TIME   Advance to this time instead of by a duration
  --json          Print the service's answer as JSON`,
  options: { to: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, positionals, io) {
    const [sub, duration, ...extra] = positionals;
    const show = (s: ClockState) =>
      io.out(values.json ? JSON.stringify(s, null, 2) : `Test clock: ${s.now}${unfinished(s)}`);
    if (sub === undefined) {
      if (values.to) throw new UsageError('--to goes with `cadence clock advance`.');
      return show(await call<ClockState>(merchantTarget(values, io), 'GET', '/test-clock'));
    }
    if (sub !== 'advance') throw new UsageError(`Unknown clock command "${sub}": use \`cadence clock advance 30d\`.`);
    if (extra.length) throw new UsageError('clock advance takes one duration.');
    if ((duration === undefined) === (values.to === undefined))
      throw new UsageError('clock advance needs a duration (30d, 12h, 90m, 3600s) or --to ISO-TIME, not both.');
    let to: number | null = null;
    let seconds: number | null = null;
    if (duration !== undefined) {
      seconds = parseDuration(duration);
      if (seconds === null) throw new UsageError(`"${duration}" is not a duration: use 30d, 12h, 90m or 3600s.`);
    } else {
      to = Date.parse(String(values.to));
      if (Number.isNaN(to)) throw new UsageError(`--to: "${values.to}" is not an ISO 8601 time.`);
    }
    const target = merchantTarget(values, io);
    const start = await call<ClockState>(target, 'GET', '/test-clock');
    const from = Date.parse(start.now);
    const goal = to ?? from + seconds! * 1000;
    if (goal <= from) {
      // the service's own message (to must be later than now)
      show(await call<ClockState>(target, 'POST', '/test-clock/advance', { to: new Date(goal).toISOString() }));
      return;
    }
    let state = start;
    let current = from;
    const bar = progress(io, () => {
      const pct = Math.floor(((current - from) / (goal - from)) * 100);
      return `Advancing the test clock to ${new Date(goal).toISOString()}: at ${new Date(current).toISOString()} (${pct}%)`;
    });
    const aborted = new AbortController();
    const interrupt = () => aborted.abort();
    process.once('SIGINT', interrupt);
    // While the advance runs the service shows how far it has got (its time moves as due work is done).
    const poll = setInterval(() => {
      call<ClockState>(target, 'GET', '/test-clock', undefined, aborted.signal).then(
        (s) => (current = Math.max(current, Date.parse(s.now))),
        () => undefined,
      );
    }, 1000);
    try {
      while (Date.parse(state.now) < goal) {
        const step = Math.min(goal, Date.parse(state.now) + MAX_ADVANCE_SECONDS * 1000);
        state = await call<ClockState>(
          target,
          'POST',
          '/test-clock/advance',
          { to: new Date(step).toISOString() },
          aborted.signal,
        );
        current = Date.parse(state.now);
        if (state.advance_target) break; // stopped early; the service says where
      }
    } catch (err) {
      if (aborted.signal.aborted) throw new ApiError('Interrupted; the next `cadence clock advance` resumes it.');
      throw err;
    } finally {
      clearInterval(poll);
      process.removeListener('SIGINT', interrupt);
      bar.done();
    }
    show(state);
  },
};

function unfinished(s: ClockState): string {
  if (!s.advance_target) return '';
  return ` (an advance to ${s.advance_target} is unfinished${s.advance_interrupted_at ? `, stopped at ${s.advance_interrupted_at}` : ''}; advance again to resume)`;
}

// ---------------------------------------------------------------------------------------------------------------
// merchants create, keys roll

const MERCHANT_FIELDS: Record<string, { field: string; number?: boolean }> = {
  name: { field: 'name' },
  gstin: { field: 'gstin' },
  'state-code': { field: 'state_code' },
  'reporting-currency': { field: 'reporting_currency' },
  'rate-limit': { field: 'rate_limit_per_second', number: true },
  'tax-rate-bps': { field: 'tax_rate_bps', number: true },
  'sac-code': { field: 'sac_code' },
  address: { field: 'address' },
  'max-retries': { field: 'max_retries', number: true },
};

const merchants: Command = {
  help: `Usage: cadence merchants create --name NAME [options] [--admin-token TOKEN] [--url URL]

Onboards a merchant through the operator API (POST /v1/admin/merchants) and prints it as JSON with its test and
live secret keys (shown this once). Needs the server's ADMIN_TOKEN: --admin-token or env ADMIN_TOKEN.

Options:
  --name NAME                 Required
  --gstin GSTIN               15-character GSTIN
  --state-code NN             2-digit GST state code
  --reporting-currency CODE   Default INR
  --rate-limit N              Requests per second per key (default: the server's)
  --tax-rate-bps N            GST rate in basis points (default 1800)
  --sac-code CODE             SAC of invoice lines
  --address TEXT              Registered address
  --max-retries N             Dunning retries before halting (default 3)`,
  options: {
    'admin-token': { type: 'string' },
    ...Object.fromEntries(Object.keys(MERCHANT_FIELDS).map((k) => [k, { type: 'string' as const }])),
  },
  async run(values, positionals, io) {
    if (positionals.length !== 1 || positionals[0] !== 'create')
      throw new UsageError('Usage: cadence merchants create --name NAME [options] (see --help).');
    const token = (values['admin-token'] as string | undefined) ?? io.env.ADMIN_TOKEN;
    if (!token) throw new UsageError('No operator token: pass --admin-token or set ADMIN_TOKEN (the server’s).');
    if (!values.name) throw new UsageError('merchants create needs --name.');
    const body: Record<string, unknown> = {};
    for (const [flag, { field, number }] of Object.entries(MERCHANT_FIELDS)) {
      const v = values[flag];
      if (v === undefined) continue;
      if (number && !/^-?\d+$/.test(String(v))) throw new UsageError(`--${flag} must be a whole number.`);
      body[field] = number ? Number(v) : v;
    }
    const created = await call({ url: baseUrl(values, io), auth: token }, 'POST', '/admin/merchants', body);
    io.out(JSON.stringify(created, null, 2));
  },
};

const keys: Command = {
  help: `Usage: cadence keys roll [--grace-seconds N] [--api-key KEY] [--url URL]
       cadence keys roll --merchant ID --mode test|live [--grace-seconds N] [--admin-token TOKEN] [--url URL]

Rolls a secret key and prints the new one (shown this once) as JSON. The old key stops working after
--grace-seconds (default 0: at once).

With a merchant's key: rolls that key's own merchant and mode (POST /v1/api-keys/roll).
With --merchant: the operator rolls that merchant's key for --mode, e.g. when the merchant lost it
(POST /v1/admin/merchants/{id}/api-keys/roll; needs the server's ADMIN_TOKEN: --admin-token or env ADMIN_TOKEN).`,
  options: {
    'grace-seconds': { type: 'string' },
    merchant: { type: 'string' },
    mode: { type: 'string' },
    'admin-token': { type: 'string' },
  },
  async run(values, positionals, io) {
    if (positionals.length !== 1 || positionals[0] !== 'roll') throw new UsageError('Usage: cadence keys roll.');
    const grace = values['grace-seconds'];
    if (grace !== undefined && !/^\d+$/.test(String(grace)))
      throw new UsageError('--grace-seconds must be a whole number of seconds.');
    const graceBody = grace === undefined ? {} : { grace_seconds: Number(grace) };
    const merchant = values.merchant as string | undefined;
    if (merchant === undefined) {
      if (values.mode !== undefined) throw new UsageError('--mode goes with --merchant (a key decides its own mode).');
      io.out(JSON.stringify(await call(merchantTarget(values, io), 'POST', '/api-keys/roll', graceBody), null, 2));
      return;
    }
    if (values.mode !== 'test' && values.mode !== 'live') throw new UsageError('--merchant needs --mode test or live.');
    const token = (values['admin-token'] as string | undefined) ?? io.env.ADMIN_TOKEN;
    if (!token) throw new UsageError('No operator token: pass --admin-token or set ADMIN_TOKEN (the server’s).');
    const path = `/admin/merchants/${encodeURIComponent(merchant)}/api-keys/roll`;
    const rolled = await call({ url: baseUrl(values, io), auth: token }, 'POST', path, {
      mode: values.mode,
      ...graceBody,
    });
    io.out(JSON.stringify(rolled, null, 2));
  },
};

const COMMANDS: Record<string, Command> = { listen, trigger, clock, merchants, keys };

// ---------------------------------------------------------------------------------------------------------------

/** Runs one command line; answers the exit code. */
export async function main(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    (name === undefined ? io.err : io.out)(GLOBAL_HELP);
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    io.err(`Unknown command "${name}".\n\n${GLOBAL_HELP}`);
    return EXIT_USAGE;
  }
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: { ...COMMON, ...command.options }, allowPositionals: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (parsed.values.help) {
      io.out(command.help);
      return EXIT_OK;
    }
    await command.run(parsed.values, parsed.positionals, io);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`error: ${err.message}\nSee: cadence ${name} --help`);
      return EXIT_USAGE;
    }
    io.err(`error: ${err instanceof Error ? err.message : String(err)}`);
    return EXIT_API;
  }
}

/** The process's life as the `cadence` command (scripts/cadence.js, the package's bin, calls this). */
export function runCli(): void {
  main(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
    tty: Boolean(process.stderr.isTTY),
  }).then(
    (code) => {
      process.exitCode = code;
      // Open sockets or timers of a finished command never keep the process up.
      setImmediate(() => process.exit(code));
    },
    (err) => {
      process.stderr.write(`error: ${String(err)}\n`);
      process.exit(EXIT_API);
    },
  );
}

if (require.main === module) runCli();

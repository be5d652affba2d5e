import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { AnalyticsSeed, AnalyticsShape, DEFAULT_SHAPE, seedAnalytics } from './lib/analytics-seed';
import { LoadRequest, LoadResult, runLoad } from './lib/load';
import { cpuMs, cpuMsOf, machineBusyMs, runBench } from './lib/processes';
import { connectSandbox, createMerchant } from './lib/seed';
import { startStack, Stack } from './lib/stack';
import { benchClients } from './lib/database';
import { envNumber } from './lib/env';

/**
 * Metered usage and analytics at volume (bench/README.md). One merchant (created through the API, test mode, the
 * gateway sandbox connected) gets the analytics data set of lib/analytics-seed.ts written by SQL (100,000 customers,
 * 100,000 subscriptions, 1,000,000 MRR movements, a mandate attempt per subscription, 1,000,000 usage events over
 * 1,000 subscriptions with their aggregates), the time printed. Then, in this order:
 *
 * 1. the answers are checked against SQL over the same tables (exit code 1 if one is wrong): MRR, subscriptions and
 *    paying customers now, the window's movements by kind, churn, quick ratio, LTV's churn rate, the cohorts'
 *    customers, autopay attempts, and the hot subscription's usage summary against the sums of its raw events;
 * 2. every analytics endpoint, requested one at a time (BENCH_ANALYTICS_WARMUPS warm-ups, then
 *    BENCH_ANALYTICS_REQUESTS timed): MRR with a monthly (and a weekly) series over two years, churn, quick ratio,
 *    LTV, cohorts by month over two years and by week over one, autopay over two years (target: each < 300 ms; the
 *    slowest request counts);
 * 3. `GET /v1/usage/summary` paced at BENCH_USAGE_SUMMARY_RATE/s over the 1,000 usage subscriptions in turn, and
 *    over the hot one alone (24 periods x 3 event types x 8 slots) (target: p99 < 20 ms);
 * 4. the raw INSERT baseline, on a scratch table shaped like usage_events (its columns, defaults and primary key; not
 *    partitioned): BENCH_CONNECTIONS pg clients each inserting one row per statement (autocommit, prepared), and
 *    BENCH_USAGE_BATCH_CONCURRENCY clients inserting 1,000 rows per statement (unnest of arrays, as the service does);
 * 5. `POST /v1/usage/events`, closed loop over BENCH_CONNECTIONS connections, one event per request over
 *    BENCH_USAGE_INGEST_SUBSCRIPTIONS active subscriptions (target >= 3,000 events/s), and its ratio to the raw
 *    one-row INSERT;
 * 6. `POST /v1/usage/events/batch`, 1,000 events per request, BENCH_USAGE_BATCH_CONCURRENCY requests in flight
 *    (target >= 50,000 events/s), and its ratio to the raw 1,000-row INSERT;
 * 7. the ingestion is checked: as many events stored as were answered 201 (at most as many as were sent), and the
 *    aggregates of the ingestion subscriptions equal to the sums of their events, slot by slot added up.
 *
 * Events carry a body idempotency_key each (as Lago's transaction_id) unless BENCH_USAGE_KEYS=0.
 *
 * Alone: `npm run bench:usage` (starts its own sandbox, service and database, as `npm run bench` does); within
 * `npm run bench` when BENCH_ONLY selects "usage" or "analytics".
 *
 * Environment: BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS (as npm run bench), BENCH_ANALYTICS_CUSTOMERS,
 * BENCH_ANALYTICS_SUBSCRIPTIONS, BENCH_ANALYTICS_MOVEMENTS, BENCH_USAGE_EVENTS, BENCH_USAGE_SUBSCRIPTIONS (the data
 * set), BENCH_USAGE_INGEST_SUBSCRIPTIONS (200), BENCH_USAGE_BATCH_CONCURRENCY (4), BENCH_USAGE_SUMMARY_RATE (200),
 * BENCH_ANALYTICS_REQUESTS (20), BENCH_ANALYTICS_WARMUPS (3), BENCH_USAGE_KEYS (1), BENCH_USAGE_PHASES (all: USAGE_PHASES), BENCH_JSON, DATABASE_URL,
 * BENCH_SERVICE_NODE_ARGS, BENCH_SANDBOX_NODE_ARGS.
 */

export const USAGE_BENCH = 'usage and analytics: ingestion, usage summary, analytics endpoints';

/**
 * The parts of a run, in order (BENCH_USAGE_PHASES, comma-separated; default all): `answers` (1), `analytics` (2),
 * `summary` (3), `raw` (4), `single` (5), `batch` (6); the ingestion check (7) follows `single` or `batch`. The data set
 * is always seeded. Ratios to the raw INSERT need `raw`.
 */
export const USAGE_PHASES = ['answers', 'analytics', 'summary', 'raw', 'single', 'batch'] as const;
export type UsagePhase = (typeof USAGE_PHASES)[number];

function phasesWanted(): UsagePhase[] {
  const raw = (process.env.BENCH_USAGE_PHASES ?? '')
    .split(',')
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean);
  if (!raw.length) return [...USAGE_PHASES];
  const unknown = raw.filter((x) => !(USAGE_PHASES as readonly string[]).includes(x));
  if (unknown.length)
    throw new Error(`BENCH_USAGE_PHASES: unknown phase(s) ${unknown.join(', ')} (known: ${USAGE_PHASES.join(', ')})`);
  return USAGE_PHASES.filter((x) => raw.includes(x));
}

export const TARGETS = {
  singleEventsPerSecond: 3_000,
  batchEventsPerSecond: 50_000,
  summaryP99Ms: 20,
  analyticsMaxMs: 300,
};

const DAY = 86_400_000;
const BATCH = 1_000;

const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench:usage: ${line}\n`);

/** Bench settings from the environment (default minimum 0). */
const num = (name: string, fallback: number, min = 0) => envNumber(name, fallback, min);

/** What a phase cost the machine: CPU ms of the service and of the bench database's backends, and how busy it was. */
interface Cost {
  serviceCpuMs: number | null;
  postgresCpuMs: number | null;
  /** Busy CPU of the whole machine over the phase, % of all cores. */
  machineBusyPct: number | null;
  /** 1-minute load average at the start. */
  loadAvg: number;
}

export interface RawInsertFigures {
  clients: number;
  rowsPerStatement: number;
  seconds: number;
  rows: number;
  rowsPerSecond: number;
  statementP50Ms: number;
  statementP99Ms: number;
  cost: Cost;
}

export interface IngestFigures {
  result: LoadResult;
  eventsPerSecond: number;
  /** Events sent (including the warm-up and requests cut off at the end). */
  sent: number;
  /** Events answered 201 (warm-up included). */
  answered: number;
  /** events/s divided by the raw insert's rows/s. */
  ratioToRaw: number | null;
  serviceCpuMsPerEvent: number | null;
  postgresCpuMsPerEvent: number | null;
  cost: Cost;
}

export interface TimedEndpoint {
  name: string;
  path: string;
  samples: number;
  p50: number;
  p99: number;
  max: number;
  mean: number;
}

export interface UsageFigures {
  shape: AnalyticsShape;
  seed: Omit<AnalyticsSeed, 'usageSubscriptionIds' | 'ingestSubscriptionIds'>;
  keys: boolean;
  connections: number;
  batchConcurrency: number;
  analytics: TimedEndpoint[];
  analyticsCost: Cost;
  /** Analytics requests sent while analyticsCost was measured (warm-ups included). */
  analyticsSent: number;
  summaryRate: number;
  summary: { name: string; result: LoadResult; cost: Cost }[];
  /** Null: the phase was not run (BENCH_USAGE_PHASES). */
  rawOne: RawInsertFigures | null;
  rawMulti: RawInsertFigures | null;
  single: IngestFigures | null;
  batch: IngestFigures | null;
  /** The phases run (BENCH_USAGE_PHASES). */
  phases: UsagePhase[];
  /** Answers checked against SQL (each a line). */
  verified: string[];
  problems: string[];
}

export interface UsageCheck {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

/** The usage and analytics targets (bench/README.md) as PASS/MISS lines. */
export function usageChecks(f: UsageFigures): UsageCheck[] {
  const out: UsageCheck[] = [
    ...(f.single
      ? [
          {
            name: 'single-event ingestion (POST /v1/usage/events)',
            value: `${f.single.eventsPerSecond.toFixed(0)} events/s (${ratio(f.single.ratioToRaw)} of raw one-row INSERT)`,
            target: `>= ${TARGETS.singleEventsPerSecond} events/s`,
            pass: f.single.eventsPerSecond >= TARGETS.singleEventsPerSecond,
          },
        ]
      : []),
    ...(f.batch
      ? [
          {
            name: 'batch ingestion (POST /v1/usage/events/batch, 1,000 per request)',
            value: `${f.batch.eventsPerSecond.toFixed(0)} events/s (${ratio(f.batch.ratioToRaw)} of raw 1,000-row INSERT)`,
            target: `>= ${TARGETS.batchEventsPerSecond} events/s`,
            pass: f.batch.eventsPerSecond >= TARGETS.batchEventsPerSecond,
          },
        ]
      : []),
    ...f.summary.map((s) => ({
      name: `p99 latency, ${s.name}`,
      value: `${s.result.p99} ms${s.result.non2xx + s.result.errors ? ` (${s.result.non2xx + s.result.errors} failed)` : ''}`,
      target: `< ${TARGETS.summaryP99Ms} ms`,
      pass: s.result.p99 < TARGETS.summaryP99Ms && s.result.non2xx + s.result.errors === 0,
    })),
    ...f.analytics.map((a) => ({
      name: `slowest of ${a.samples}, GET ${a.name}`,
      value: `${a.max.toFixed(1)} ms`,
      target: `< ${TARGETS.analyticsMaxMs} ms`,
      pass: a.max < TARGETS.analyticsMaxMs,
    })),
    {
      name: 'answers equal to SQL over the same rows',
      value: f.problems.length ? `${f.problems.length} wrong` : `${f.verified.length} checks`,
      target: 'all',
      pass: f.problems.length === 0,
    },
  ];
  return out;
}

const ratio = (r: number | null) => (r === null ? 'n/a' : `${(r * 100).toFixed(0)}%`);
const f1 = (x: number | null, unit = '') => (x === null ? 'n/a' : `${x.toFixed(1)}${unit}`);
const f2 = (x: number | null) => (x === null ? 'n/a' : x.toFixed(2));

function costLine(c: Cost): string {
  return `machine ${f1(c.machineBusyPct, '%')} busy (load ${c.loadAvg.toFixed(1)})`;
}

/** The figures as lines (for either bench's output). */
export function describeUsage(f: UsageFigures): string[] {
  const s = f.seed;
  const requests = f.analyticsSent;
  const perRequest = (ms: number | null) => (ms === null || !requests ? null : ms / requests);
  const lines = [
    `data set (SQL, ${s.totalSeconds.toFixed(0)} s): ${Object.entries(s.counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  seeding steps: ${s.timings.map(([k, t]) => `${k} ${t.toFixed(1)} s`).join('; ')}`,
    ...(f.analytics.length
      ? [
          `analytics, one request at a time (CPU ms per request: service ${f2(perRequest(f.analyticsCost.serviceCpuMs))}, PostgreSQL ${f2(perRequest(f.analyticsCost.postgresCpuMs))}; ${costLine(f.analyticsCost)}):`,
        ]
      : []),
    ...f.analytics.map(
      (a) =>
        `  GET ${a.name}: p50 ${a.p50.toFixed(1)} ms, p99 ${a.p99.toFixed(1)} ms, max ${a.max.toFixed(1)} ms (${a.samples} requests)`,
    ),
    ...(f.summary.length ? [`usage summary at ${f.summaryRate}/s, ${f.connections} connections:`] : []),
    ...f.summary.map(
      (x) =>
        `  ${x.name}: p50 ${x.result.p50} ms, p99 ${x.result.p99} ms, max ${x.result.max} ms, ${x.result.ok2xx} answered 200, ${x.result.non2xx + x.result.errors} failed;` +
        ` CPU ms/request: service ${f2(x.cost.serviceCpuMs === null || !x.result.requests ? null : x.cost.serviceCpuMs / x.result.requests)},` +
        ` PostgreSQL ${f2(x.cost.postgresCpuMs === null || !x.result.requests ? null : x.cost.postgresCpuMs / x.result.requests)} (${costLine(x.cost)})`,
    ),
    ...(f.rawOne ? ['raw INSERT into an unpartitioned copy of usage_events (prepared, autocommit):'] : []),
    ...[f.rawOne, f.rawMulti]
      .flatMap((r) => (r ? [r] : []))
      .map(
        (r) =>
          `  ${r.clients} clients x ${r.rowsPerStatement} row(s) per statement: ${r.rowsPerSecond.toFixed(0)} rows/s (statement p50 ${f2(r.statementP50Ms)} ms, p99 ${f2(r.statementP99Ms)} ms; PostgreSQL ${f2(
            r.cost.postgresCpuMs === null ? null : r.cost.postgresCpuMs / r.rows,
          )} CPU ms/row; ${costLine(r.cost)})`,
      ),
    ...(f.single || f.batch ? [`ingestion${f.keys ? ' (each event with an idempotency_key)' : ''}:`] : []),
    ...[
      [`POST /v1/usage/events, ${f.connections} connections`, f.single] as const,
      [`POST /v1/usage/events/batch x ${BATCH}, ${f.batchConcurrency} in flight`, f.batch] as const,
    ].flatMap(([name, x]) =>
      !x
        ? []
        : `  ${name}: ${x.eventsPerSecond.toFixed(0)} events/s = ${ratio(x.ratioToRaw)} of the raw INSERT; request p50 ${x.result.p50} ms, p99 ${x.result.p99} ms;` +
          ` ${x.result.non2xx + x.result.errors} failed; CPU ms per event: service ${f2(x.serviceCpuMsPerEvent)}, PostgreSQL ${f2(x.postgresCpuMsPerEvent)} (${costLine(x.cost)})`,
    ),
    `checked against SQL: ${f.verified.length} answers${f.problems.length ? `, ${f.problems.length} WRONG` : ', all equal'}`,
    ...f.problems.map((p) => `  PROBLEM: ${p}`),
  ];
  return lines;
}

// --- measuring --------------------------------------------------------------------------------------------------------

const percentile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] : 0;

/** CPU ms so far of the PostgreSQL backends with these pids (null when /proc cannot show them: a remote server). */
function backendsCpu(pids: number[]): number | null {
  let sum = 0;
  let seen = 0;
  for (const pid of pids) {
    const ms = cpuMs(pid);
    if (ms !== null) {
      sum += ms;
      seen++;
    }
  }
  return seen ? sum : null;
}

async function backendPids(db: Client): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  return rows.map((r) => r.pid);
}

/** Starts measuring what a phase costs; the returned function ends it. */
async function costMeter(stack: Stack, db: Client, extraPids: () => number[] = () => []): Promise<() => Promise<Cost>> {
  const pids = await backendPids(db);
  const loadAvg = os.loadavg()[0];
  const svc0 = cpuMsOf(stack.service);
  const busy0 = machineBusyMs();
  const t0 = performance.now();
  const pg0 = new Map(pids.map((p) => [p, cpuMs(p) ?? 0]));
  return async () => {
    const extra = extraPids();
    const all = [...new Set([...pids, ...(await backendPids(db)), ...extra])];
    let pg: number | null = 0;
    let seen = 0;
    for (const p of all) {
      const ms = cpuMs(p);
      if (ms === null) continue;
      seen++;
      pg += ms - (pg0.get(p) ?? 0);
    }
    if (!seen) pg = null;
    const svc1 = cpuMsOf(stack.service);
    const busy1 = machineBusyMs();
    const wall = performance.now() - t0;
    return {
      serviceCpuMs: svc0 === null || svc1 === null ? null : svc1 - svc0,
      postgresCpuMs: pg,
      machineBusyPct: busy0 === null || busy1 === null ? null : ((busy1 - busy0) / (wall * os.cpus().length)) * 100,
      loadAvg,
    };
  };
}

/** A GET over a keep-alive socket, timed to the answer's last byte. */
function timedGet(
  agent: http.Agent,
  url: URL,
  headers: Record<string, string>,
): Promise<{ ms: number; status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request(
      { agent, host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'GET', headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            ms: performance.now() - t0,
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** `clients` pg connections inserting for `seconds` (after a warm-up), one or `rowsPerStatement` rows per statement. */
async function rawInsert(
  stack: Stack,
  meter: Client,
  table: string,
  row: (n: number) => unknown[],
  clients: number,
  rowsPerStatement: number,
  seconds: number,
  warmupSeconds: number,
): Promise<RawInsertFigures> {
  const cols = [
    'id',
    '"timestamp"',
    'merchant_id',
    'mode',
    'subscription_id',
    'period_start',
    'period_end',
    'event_type',
    'unit',
    'quantity',
    'metadata',
    'idempotency_key',
  ];
  const types = [
    'uuid',
    'timestamptz',
    'uuid',
    'text',
    'uuid',
    'timestamptz',
    'timestamptz',
    'text',
    'text',
    'numeric',
    'jsonb',
    'text',
  ];
  const text =
    rowsPerStatement === 1
      ? `insert into ${table} (${cols.join(', ')}) values (${cols.map((_, i) => `$${i + 1}::${types[i]}`).join(', ')})`
      : `insert into ${table} (${cols.join(', ')})
         select ${cols.map((_, i) => `c${i}${types[i] === 'jsonb' ? '::jsonb' : ''}`).join(', ')}
         from unnest(${cols.map((_, i) => `$${i + 1}::${types[i] === 'jsonb' ? 'text' : types[i]}[]`).join(', ')}) as t(${cols.map((_, i) => `c${i}`).join(', ')})`;
  const { clients: conns, close } = await benchClients(stack.databaseUrl, clients, 'close the raw insert clients');
  try {
    const pids = await Promise.all(
      conns.map(async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid),
    );
    let n = 0;
    const values = () => {
      if (rowsPerStatement === 1) return row(n++);
      const rows = Array.from({ length: rowsPerStatement }, () => row(n++));
      return cols.map((_, i) => rows.map((r) => r[i]));
    };
    const run = async (ms: number, latencies: number[] | null) => {
      const until = performance.now() + ms;
      let rows = 0;
      await Promise.all(
        conns.map(async (c) => {
          while (performance.now() < until) {
            const v = values();
            const t = performance.now();
            await c.query({ name: `raw_insert_${rowsPerStatement}`, text, values: v });
            latencies?.push(performance.now() - t);
            rows += rowsPerStatement;
          }
        }),
      );
      return rows;
    };
    if (warmupSeconds > 0) await run(warmupSeconds * 1000, null);
    const latencies: number[] = [];
    const end = await costMeter(stack, meter, () => pids);
    const pg0 = backendsCpu(pids);
    const t0 = performance.now();
    const rows = await run(seconds * 1000, latencies);
    const wall = (performance.now() - t0) / 1000;
    const pg1 = backendsCpu(pids);
    const cost = await end();
    cost.postgresCpuMs = pg0 === null || pg1 === null ? cost.postgresCpuMs : pg1 - pg0;
    latencies.sort((a, b) => a - b);
    return {
      clients,
      rowsPerStatement,
      seconds: wall,
      rows,
      rowsPerSecond: rows / wall,
      statementP50Ms: percentile(latencies, 0.5),
      statementP99Ms: percentile(latencies, 0.99),
      cost,
    };
  } finally {
    await close();
  }
}

/** The endpoints timed one request at a time, with what each must answer (checked once, against SQL). */
function analyticsRequests(from: string, weekFrom: string): { name: string; path: string }[] {
  return [
    { name: '/v1/analytics/mrr (2 years, monthly series)', path: `/v1/analytics/mrr?from=${from}&interval=month` },
    { name: '/v1/analytics/mrr (2 years, weekly series)', path: `/v1/analytics/mrr?from=${from}&interval=week` },
    {
      name: '/v1/analytics/mrr (USD, 2 years, monthly)',
      path: `/v1/analytics/mrr?currency=USD&from=${from}&interval=month`,
    },
    { name: '/v1/analytics/mrr (default: 30 days)', path: '/v1/analytics/mrr' },
    { name: '/v1/analytics/churn (2 years, monthly)', path: `/v1/analytics/churn?from=${from}&interval=month` },
    {
      name: '/v1/analytics/quick-ratio (2 years, monthly)',
      path: `/v1/analytics/quick-ratio?from=${from}&interval=month`,
    },
    { name: '/v1/analytics/ltv', path: '/v1/analytics/ltv' },
    { name: '/v1/analytics/cohorts (month, 2 years)', path: `/v1/analytics/cohorts?granularity=month&from=${from}` },
    { name: '/v1/analytics/cohorts (week, 1 year)', path: `/v1/analytics/cohorts?granularity=week&from=${weekFrom}` },
    { name: '/v1/analytics/autopay (2 years)', path: `/v1/analytics/autopay?from=${from}` },
  ];
}

/**
 * Checks the answers against SQL over the same rows; each check that holds adds a line to `verified`, each that does
 * not a line to `problems`.
 */
async function verifyAnswers(
  db: Client,
  serviceUrl: string,
  key: string,
  seed: AnalyticsSeed,
  from: string,
  weekFrom: string,
  verified: string[],
  problems: string[],
): Promise<void> {
  const get = async (p: string) => {
    const res = await fetch(`${serviceUrl}${p}`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`GET ${p} answered ${res.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text);
  };
  const expect = (what: string, got: unknown, want: unknown) => {
    const same =
      typeof want === 'number' && typeof got === 'number'
        ? Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want))
        : got === want;
    if (same) verified.push(what);
    else problems.push(`${what}: the answer says ${JSON.stringify(got)}, SQL says ${JSON.stringify(want)}`);
  };
  const m = seed.merchantId;

  for (const currency of [seed.reportingCurrency, 'USD']) {
    const mrr = await get(`/v1/analytics/mrr?currency=${currency}&from=${from}&interval=month`);
    const asOf = mrr.as_of;
    const [w] = (
      await db.query(
        `select
           coalesce(sum(amount) filter (where occurred_at <= $3), 0)::float8 as mrr_to,
           coalesce(sum(subscription_delta) filter (where occurred_at <= $3), 0)::float8 as subs_to,
           coalesce(sum(customer_delta) filter (where occurred_at <= $3), 0)::float8 as customers_to,
           coalesce(sum(amount) filter (where occurred_at <= $2), 0)::float8 as mrr_from,
           coalesce(sum(subscription_delta) filter (where occurred_at <= $2), 0)::float8 as subs_from,
           ${['new', 'expansion', 'contraction', 'churn', 'reactivation']
             .map(
               (k) =>
                 `coalesce(sum(amount) filter (where kind = '${k}' and occurred_at > $2 and occurred_at <= $3), 0)::float8 as ${k}`,
             )
             .join(', ')},
           count(*) filter (where kind = 'churn' and occurred_at > $2 and occurred_at <= $3)::float8 as churned
         from mrr_movements where merchant_id = $1 and mode = 'test' and currency = $4`,
        [m, from, asOf, currency],
      )
    ).rows;
    // Independent of the ledger: MRR from the subscriptions' own prices (docs/analytics.md normalisation).
    const [subs] = (
      await db.query(
        `select coalesce(sum(case billing_frequency when 'monthly' then amount::numeric when 'yearly' then round(amount::numeric / 12)
                   else round(amount::numeric * 52 / 12) end), 0)::float8 as mrr,
                count(*)::float8 as subs, count(distinct customer_id)::float8 as customers
         from subscriptions where merchant_id = $1 and mode = 'test' and currency = $2 and status in ('active', 'past_due')`,
        [m, currency],
      )
    ).rows;
    expect(`mrr ${currency}: MRR = the ledger's sum`, mrr.mrr, w.mrr_to);
    expect(`mrr ${currency}: MRR = the counted subscriptions' normalised prices`, mrr.mrr, subs.mrr);
    expect(`mrr ${currency}: active_subscriptions = counted subscriptions`, mrr.active_subscriptions, subs.subs);
    expect(
      `mrr ${currency}: paying_customers = customers with a counted subscription`,
      mrr.paying_customers,
      subs.customers,
    );
    expect(`mrr ${currency}: paying_customers = the ledger's customer_delta sum`, mrr.paying_customers, w.customers_to);
    for (const k of ['new', 'expansion', 'reactivation'])
      expect(`mrr ${currency}: movements.${k} over 2 years`, mrr.movements[k], w[k]);
    for (const k of ['contraction', 'churn'])
      expect(`mrr ${currency}: movements.${k} over 2 years`, mrr.movements[k], -w[k]);
    expect(`mrr ${currency}: the series' last MRR`, mrr.series.at(-1)?.mrr, mrr.mrr);
    expect(
      `mrr ${currency}: the series starts at from`,
      new Date(mrr.series[0]?.period_start).getTime(),
      new Date(from).getTime(),
    );
    expect(
      `mrr ${currency}: series new amounts add up to the window's`,
      mrr.series.reduce((a: number, p: any) => a + p.new, 0),
      w.new,
    );
    if (currency !== seed.reportingCurrency) continue;

    const churn = await get(`/v1/analytics/churn?from=${from}&to=${encodeURIComponent(asOf)}&interval=month`);
    expect('churn: subscriptions_at_start', churn.subscriptions_at_start, w.subs_from);
    expect('churn: churned_subscriptions', churn.churned_subscriptions, w.churned);
    expect('churn: mrr_at_start', churn.mrr_at_start, w.mrr_from);
    expect('churn: churned_mrr', churn.churned_mrr, -w.churn);
    const qr = await get(`/v1/analytics/quick-ratio?from=${from}&to=${encodeURIComponent(asOf)}&interval=month`);
    expect('quick-ratio: new_mrr', qr.new_mrr, w.new);
    expect('quick-ratio: churn_mrr', qr.churn_mrr, -w.churn);
    expect('quick-ratio: quick_ratio', qr.quick_ratio, (w.new + w.expansion) / -(w.contraction + w.churn));

    const ltv = await get('/v1/analytics/ltv');
    const [l] = (
      await db.query(
        `select coalesce(sum(subscription_delta) filter (where occurred_at <= $2::timestamptz - interval '90 days'), 0)::float8 as base,
                count(*) filter (where kind = 'churn' and occurred_at > $2::timestamptz - interval '90 days' and occurred_at <= $2)::float8 as churned
         from mrr_movements where merchant_id = $1 and mode = 'test' and currency = $3`,
        [m, ltv.as_of, currency],
      )
    ).rows;
    expect(
      'ltv: monthly_logo_churn_rate = churned in 90 days / subscriptions 90 days ago x 30 / 90',
      ltv.monthly_logo_churn_rate,
      ((l.churned / l.base) * 30) / 90,
    );

    for (const [granularity, since] of [
      ['month', from],
      ['week', weekFrom],
    ]) {
      const co = await get(`/v1/analytics/cohorts?granularity=${granularity}&from=${since}`);
      const first = co.cohorts[0]?.cohort_start;
      const [c] = (
        await db.query(
          `select count(*)::float8 as n from mrr_movements
           where merchant_id = $1 and mode = 'test' and currency = $2 and kind = 'new' and occurred_at > $3 and occurred_at <= $4`,
          [m, currency, first, co.as_of],
        )
      ).rows;
      expect(
        `cohorts by ${granularity}: customers of all cohorts = new movements since the first cohort`,
        co.cohorts.reduce((a: number, x: any) => a + x.customers, 0),
        c.n,
      );
      const over = co.cohorts.filter((x: any) =>
        x.retention.some((r: any) => r.active_customers > x.customers || r.active_customers < 0),
      );
      expect(`cohorts by ${granularity}: no period retains more customers than its cohort has`, over.length, 0);
    }
  }

  const ap = await get(`/v1/analytics/autopay?from=${from}`);
  const [a] = (
    await db.query(
      `select count(*)::float8 as attempts, count(*) filter (where status = 'authorized')::float8 as authorized,
              count(distinct method)::float8 as methods
       from mandate_attempts where merchant_id = $1 and mode = 'test' and occurred_at > $2 and occurred_at <= $3`,
      [m, from, ap.to],
    )
  ).rows;
  expect('autopay: attempts', ap.attempts, a.attempts);
  expect('autopay: authorized', ap.authorized, a.authorized);
  expect('autopay: methods listed', ap.by_method.length, a.methods);

  // The hot subscription's summary (from the aggregates) against its raw events.
  const summary = await get(`/v1/usage/summary?subscription_id=${seed.hotSubscriptionId}`);
  const { rows: sums } = await db.query<{ period_start: Date; event_type: string; total: string; events: string }>(
    `select period_start, event_type, trim_scale(sum(quantity))::text as total, count(*)::text as events
     from usage_events where merchant_id = $1 and mode = 'test' and subscription_id = $2 group by 1, 2`,
    [m, seed.hotSubscriptionId],
  );
  const byKey = new Map(
    summary.aggregations.map((x: any) => [`${new Date(x.billing_period_start).toISOString()}|${x.event_type}`, x]),
  );
  expect('usage summary (hot): one aggregation per period and event type', summary.aggregations.length, sums.length);
  let equal = 0;
  for (const s of sums) {
    const x: any = byKey.get(`${s.period_start.toISOString()}|${s.event_type}`);
    if (x && x.total_quantity_decimal === s.total && String(x.event_count) === s.events) equal++;
    else if (problems.length < 50)
      problems.push(
        `usage summary (hot) ${s.period_start.toISOString()} ${s.event_type}: answer ${JSON.stringify(x ?? null)}, events sum ${s.total} over ${s.events}`,
      );
  }
  expect(
    `usage summary (hot): totals and counts equal to the raw events' sums (${sums.length} aggregations)`,
    equal,
    sums.length,
  );
}

export async function measureUsage(stack: Stack, log: (line: string) => void = note): Promise<UsageFigures> {
  const seconds = num('BENCH_SECONDS', 10, 1);
  const warmupSeconds = num('BENCH_WARMUP_SECONDS', 3, 0);
  const connections = num('BENCH_CONNECTIONS', 50, 1);
  const batchConcurrency = num('BENCH_USAGE_BATCH_CONCURRENCY', 4, 1);
  const summaryRate = num('BENCH_USAGE_SUMMARY_RATE', 200, 1);
  const samples = num('BENCH_ANALYTICS_REQUESTS', 20, 1);
  const warmups = num('BENCH_ANALYTICS_WARMUPS', 3, 0);
  const keys = process.env.BENCH_USAGE_KEYS !== '0';
  const phases = phasesWanted();
  const wants = (x: UsagePhase) => phases.includes(x);
  const shape: AnalyticsShape = {
    ...DEFAULT_SHAPE,
    customers: num('BENCH_ANALYTICS_CUSTOMERS', DEFAULT_SHAPE.customers, 10),
    subscriptions: num('BENCH_ANALYTICS_SUBSCRIPTIONS', DEFAULT_SHAPE.subscriptions, 10),
    movements: num('BENCH_ANALYTICS_MOVEMENTS', DEFAULT_SHAPE.movements, 1),
    usageEvents: num('BENCH_USAGE_EVENTS', DEFAULT_SHAPE.usageEvents, 1),
    usageSubscriptions: num('BENCH_USAGE_SUBSCRIPTIONS', DEFAULT_SHAPE.usageSubscriptions, 2),
    ingestSubscriptions: num('BENCH_USAGE_INGEST_SUBSCRIPTIONS', DEFAULT_SHAPE.ingestSubscriptions, 1),
  };

  // The merchant, through the API: test mode, no rate limit in the way, the sandbox connected (the subscriptions' gateway).
  const merchant = await createMerchant(stack.serviceUrl, stack.adminToken, {
    name: 'Bench analytics merchant',
    reporting_currency: 'INR',
    rate_limit_per_second: 1_000_000,
  });
  const key = merchant.keys.test;
  await connectSandbox(stack.serviceUrl, key);
  log(
    `usage: seeding ${shape.customers} customers, ${shape.subscriptions} subscriptions, ${shape.movements} movements, ${shape.usageEvents} usage events (SQL)`,
  );
  const seed = await seedAnalytics(stack.databaseUrl, merchant.id, shape, (line) => log(`usage: ${line}`));
  log(`usage: data set seeded in ${seed.totalSeconds.toFixed(1)} s`);
  const ingestIds = seed.ingestSubscriptionIds;
  if (!ingestIds.length) throw new Error('usage: no active subscription to ingest events into');

  const {
    clients: [db],
    close,
  } = await benchClients(stack.databaseUrl, 1, 'close the usage bench client');
  const verified: string[] = [];
  const problems: string[] = [];
  try {
    const from = new Date(seed.now.getTime() - 730 * DAY).toISOString();
    const weekFrom = new Date(seed.now.getTime() - 364 * DAY).toISOString();

    // 1. The answers, against SQL.
    if (wants('answers')) {
      await verifyAnswers(db, stack.serviceUrl, key, seed, from, weekFrom, verified, problems);
      log(
        `usage: ${verified.length} answers equal to SQL${problems.length ? `, ${problems.length} not: ${problems.slice(0, 3).join('; ')}` : ''}`,
      );
    }

    // 2. Analytics, one request at a time.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const headers = { authorization: `Bearer ${key}` };
    const analytics: TimedEndpoint[] = [];
    const endAnalytics = await costMeter(stack, db);
    for (const r of wants('analytics') ? analyticsRequests(from, weekFrom) : []) {
      const url = new URL(`${stack.serviceUrl}${r.path}`);
      const times: number[] = [];
      for (let i = 0; i < warmups + samples; i++) {
        const res = await timedGet(agent, url, headers);
        if (res.status !== 200) throw new Error(`GET ${r.path} answered ${res.status}: ${res.text.slice(0, 500)}`);
        if (i >= warmups) times.push(res.ms);
      }
      times.sort((a, b) => a - b);
      analytics.push({
        name: r.name,
        path: r.path,
        samples: times.length,
        p50: percentile(times, 0.5),
        p99: percentile(times, 0.99),
        max: times[times.length - 1],
        mean: times.reduce((a, b) => a + b, 0) / times.length,
      });
      log(
        `usage: GET ${r.name}: p50 ${percentile(times, 0.5).toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms`,
      );
    }
    const analyticsCost = await endAnalytics();
    agent.destroy();

    // 3. The usage summary, paced.
    const summary: UsageFigures['summary'] = [];
    const usageIds = seed.usageSubscriptionIds;
    for (const [name, ids] of wants('summary')
      ? ([
          [`GET /v1/usage/summary over ${usageIds.length} subscriptions in turn at ${summaryRate}/s`, usageIds],
          [`GET /v1/usage/summary of the hot subscription at ${summaryRate}/s`, [seed.hotSubscriptionId]],
        ] as const)
      : []) {
      let n = 0;
      const req: LoadRequest = {
        url: `${stack.serviceUrl}/v1/usage/summary?subscription_id=${ids[0]}`,
        method: 'GET',
        headers,
        rate: summaryRate,
        setupRequest: (r: any) => ({ ...r, path: `/v1/usage/summary?subscription_id=${ids[n++ % ids.length]}` }),
      };
      if (warmupSeconds > 0) await runLoad(req, connections, warmupSeconds);
      const end = await costMeter(stack, db);
      const result = await runLoad(req, connections, seconds);
      summary.push({ name, result, cost: await end() });
      log(`usage: ${name}: p99 ${result.p99} ms`);
    }

    // 4. The raw INSERT baseline.
    const scratch = 'bench_raw_usage_events';
    await db.query(`drop table if exists ${scratch}`);
    await db.query(`create table ${scratch} (like usage_events including all)`);
    const period = (
      await db.query<{ s: Date; e: Date }>(
        'select current_period_start as s, current_period_end as e from subscriptions where id = $1',
        [ingestIds[0]],
      )
    ).rows[0];
    const runTag = crypto.randomBytes(4).toString('hex');
    const rawRow = (n: number): unknown[] => [
      crypto.randomUUID(),
      new Date().toISOString(),
      merchant.id,
      'test',
      ingestIds[n % ingestIds.length],
      period.s.toISOString(),
      period.e.toISOString(),
      'api_calls',
      'calls',
      String(1 + (n % 7)),
      '{"region":"ap-south-1"}',
      keys ? `raw-${runTag}-${n}` : null,
    ];
    let rawOne: RawInsertFigures | null = null;
    let rawMulti: RawInsertFigures | null = null;
    if (wants('raw')) {
      log(`usage: raw one-row INSERT, ${connections} clients`);
      rawOne = await rawInsert(stack, db, scratch, rawRow, connections, 1, seconds, Math.min(warmupSeconds, 2));
      log(`usage: raw 1,000-row INSERT, ${batchConcurrency} clients`);
      rawMulti = await rawInsert(
        stack,
        db,
        scratch,
        rawRow,
        batchConcurrency,
        BATCH,
        seconds,
        Math.min(warmupSeconds, 2),
      );
    }
    await db.query(`drop table if exists ${scratch}`);

    // 5 and 6. Ingestion through the API.
    const TYPES = [
      { event_type: 'api_calls', unit: 'calls', quantity: (n: number) => 1 + (n % 7) },
      { event_type: 'storage', unit: 'GB-hours', quantity: (n: number) => (n % 40) / 8 },
      { event_type: 'sms', unit: 'messages', quantity: () => 1 },
    ];
    let n = 0;
    const event = () => {
      const i = n++;
      const t = TYPES[i % TYPES.length];
      return {
        subscription_id: ingestIds[Math.floor(i / TYPES.length) % ingestIds.length],
        event_type: t.event_type,
        quantity: t.quantity(i),
        unit: t.unit,
        metadata: { region: 'ap-south-1' },
        ...(keys ? { idempotency_key: `ev-${runTag}-${i}` } : {}),
      };
    };
    // The load requests' default bodies (every request sent gets its own from setupRequest, counted in n).
    const SAMPLE = { subscription_id: ingestIds[0], event_type: 'api_calls', quantity: 1, unit: 'calls' };
    const post = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const ingest = async (
      label: string,
      req: LoadRequest,
      conns: number,
      perRequest: number,
      raw: RawInsertFigures | null,
    ): Promise<IngestFigures> => {
      const sent0 = n;
      let answered = 0;
      if (warmupSeconds > 0) answered += (await runLoad(req, conns, warmupSeconds)).ok2xx * perRequest;
      log(`usage: ${label}: measuring ${seconds}s`);
      const end = await costMeter(stack, db);
      const result = await runLoad(req, conns, seconds);
      const cost = await end();
      answered += result.ok2xx * perRequest;
      const events = result.ok2xx * perRequest;
      const eventsPerSecond = result.rps * perRequest;
      log(`usage: ${label}: ${eventsPerSecond.toFixed(0)} events/s`);
      return {
        result,
        eventsPerSecond,
        sent: n - sent0,
        answered,
        ratioToRaw: raw && raw.rowsPerSecond > 0 ? eventsPerSecond / raw.rowsPerSecond : null,
        serviceCpuMsPerEvent: cost.serviceCpuMs === null || !events ? null : cost.serviceCpuMs / events,
        postgresCpuMsPerEvent: cost.postgresCpuMs === null || !events ? null : cost.postgresCpuMs / events,
        cost,
      };
    };
    const single = !wants('single')
      ? null
      : await ingest(
          'POST /v1/usage/events',
          {
            url: `${stack.serviceUrl}/v1/usage/events`,
            method: 'POST',
            headers: post,
            body: JSON.stringify(SAMPLE),
            setupRequest: (r: any) => ({ ...r, body: JSON.stringify(event()) }),
          },
          connections,
          1,
          rawOne,
        );
    const batch = !wants('batch')
      ? null
      : await ingest(
          `POST /v1/usage/events/batch x ${BATCH}`,
          {
            url: `${stack.serviceUrl}/v1/usage/events/batch`,
            method: 'POST',
            headers: post,
            body: JSON.stringify({ events: [SAMPLE] }),
            setupRequest: (r: any) => ({
              ...r,
              body: JSON.stringify({ events: Array.from({ length: BATCH }, event) }),
            }),
          },
          batchConcurrency,
          BATCH,
          rawMulti,
        );

    // 7. What the ingestion stored.
    if (single || batch)
      await checkIngestion(
        db,
        merchant.id,
        ingestIds,
        (single?.answered ?? 0) + (batch?.answered ?? 0),
        n,
        verified,
        problems,
      );
    for (const x of [single, batch]) {
      if (x && (x.result.non2xx || x.result.errors))
        problems.push(
          `ingestion: ${x.result.non2xx} non-2xx (${JSON.stringify(x.result.statusCodes)}), ${x.result.errors} errors`,
        );
    }

    const { usageSubscriptionIds: _u, ingestSubscriptionIds: _i, ...seedFigures } = seed;
    return {
      shape,
      seed: seedFigures,
      keys,
      connections,
      batchConcurrency,
      analytics,
      analyticsCost,
      analyticsSent: analytics.length * (warmups + samples),
      summaryRate,
      summary,
      rawOne,
      rawMulti,
      single,
      batch,
      phases,
      verified,
      problems,
    };
  } finally {
    await close();
  }
}

/** Step 7: as many events stored as were answered 201 (at most as many as were sent), aggregates equal to their sums. */
async function checkIngestion(
  db: Client,
  merchantId: string,
  ingestIds: string[],
  answered: number,
  sent: number,
  verified: string[],
  problems: string[],
) {
  const [stored] = (
    await db.query(
      `select count(*)::float8 as events,
         (select count(*)::float8 from (
            select subscription_id, period_start, event_type, sum(quantity) as q, count(*) as c from usage_events
            where merchant_id = $1 and mode = 'test' and subscription_id = any($2::uuid[]) group by 1, 2, 3
          ) e full join (
            select subscription_id, period_start, event_type, sum(total_quantity) as q, sum(event_count) as c from usage_aggregates
            where merchant_id = $1 and mode = 'test' and subscription_id = any($2::uuid[]) group by 1, 2, 3
          ) a using (subscription_id, period_start, event_type)
          where e.q is distinct from a.q or e.c is distinct from a.c) as mismatched
       from usage_events where merchant_id = $1 and mode = 'test' and subscription_id = any($2::uuid[])`,
      [merchantId, ingestIds],
    )
  ).rows;
  if (stored.events >= answered && stored.events <= sent)
    verified.push(`ingestion: ${stored.events} events stored for ${answered} answered 201 and ${sent} sent`);
  else problems.push(`ingestion: ${stored.events} events stored, but ${answered} were answered 201 and ${sent} sent`);
  if (stored.mismatched === 0) verified.push('ingestion: the aggregates equal the sums of the stored events');
  else
    problems.push(
      `ingestion: ${stored.mismatched} (subscription, period, event type) aggregates differ from the sums of their events`,
    );
}

async function main(): Promise<number> {
  const ROOT = path.resolve(__dirname, '..', '..');
  const serviceNodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const sandboxNodeArgs = (process.env.BENCH_SANDBOX_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const stack = await startStack({ root: ROOT, bare: false, serviceNodeArgs, sandboxNodeArgs, note });
  const f = await measureUsage(stack);
  if (stack.service.hasExited())
    throw new Error(`service exited during the usage bench (${await stack.service.exited}).\n${stack.service.tail()}`);
  say('');
  say('Cadence usage and analytics benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}); database: ${stack.dbLabel}`,
  );
  say(`  service: ${stack.serviceLabel}`);
  for (const line of describeUsage(f)) say(`  ${line}`);
  say('');
  for (const c of usageChecks(f)) say(`  [${c.pass ? 'PASS' : 'MISS'}] ${c.name}: ${c.value} (target ${c.target})`);
  say('');
  if (process.env.BENCH_JSON) {
    fs.writeFileSync(
      process.env.BENCH_JSON,
      JSON.stringify(
        { at: new Date().toISOString(), node: process.version, cpus: os.cpus().length, ...f, checks: usageChecks(f) },
        null,
        2,
      ),
    );
    note(`figures written to ${process.env.BENCH_JSON}`);
  }
  // A wrong answer is a failure; a missed target is a figure.
  return f.problems.length ? 1 : 0;
}

if (require.main === module) runBench(main, note);

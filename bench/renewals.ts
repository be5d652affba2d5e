import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { cpuMs, cpuMsOf, machineBusyMs, RssSampler, runBench } from './lib/processes';
import { startStack, Stack } from './lib/stack';
import { seedActiveSubscriptions, subscriptionMerchant } from './lib/subscriptions';
import { benchClients } from './lib/database';
import { envNumber } from './lib/env';

/**
 * The renewal run (bench/README.md): N active monthly subscriptions of one merchant (default 10,000), created and
 * authorised through the API, then ONE `POST /v1/test-clock/advance` by 31 days with the merchant's test key, timed.
 * Every subscription's period ends inside that month, so the advance must renew all of them: the sandbox charges
 * each and delivers its webhook, the service bills the period (a paid invoice) and writes the outbox events. Then the
 * bench database is read directly to verify: all N have cycles_completed 2 and the period after the one they had,
 * 2N invoices exist, and the outbox has N more invoice events of each renewal type.
 *
 * Target: the advance answers in < 60 s. (Stripe's own test clocks may move at most two billing intervals per
 * advance; this one moves one.)
 *
 * Run alone with `npm run bench:renewals` (starts its own sandbox, service and database, as `npm run bench` does),
 * or as part of `npm run bench` when BENCH_ONLY selects "subscription renewals".
 *
 * Environment: BENCH_RENEWALS (subscriptions, default 10000), BENCH_RENEWAL_CONCURRENCY (seeding requests in flight,
 * default 50), BENCH_ADVANCE_TIMEOUT_SECONDS (client timeout of the advance, default 900), DATABASE_URL,
 * BENCH_SERVICE_NODE_ARGS, BENCH_SANDBOX_NODE_ARGS, BENCH_RENEWAL_TOP_STATEMENTS (statements listed when pg_stat_statements is
 * installed, default 15).
 */

export const RENEWALS = 'subscription renewals: one test-clock advance of 31 days';
export const RENEWAL_TARGET_SECONDS = 60;
const DAY = 86_400;

const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench:renewals: ${line}\n`);

/** Bench settings from the environment (default minimum 1). */
const num = (name: string, fallback: number, min = 1) => envNumber(name, fallback, min);

export interface RenewalFigures {
  subscriptions: number;
  concurrency: number;
  /** Seeding: creates + mandate checkouts, wall time. */
  seedSeconds: number;
  /** The advance: HTTP status, wall time, and the answer's text when not 200. */
  advanceStatus: number;
  advanceSeconds: number;
  advanceError: string | null;
  /**
   * CPU seconds during the advance: the service, the sandbox, the PostgreSQL backends of the bench database (its
   * connections at the start and the end), and the rest of the machine.
   */
  serviceCpuS: number | null;
  sandboxCpuS: number | null;
  postgresCpuS: number | null;
  otherCpuS: number | null;
  /** [seconds since the advance started, renewal invoices written by then], every 5 s. */
  progress: [number, number][];
  /**
   * What the bench database's backends were doing, sampled every 0.5 s during the advance (pg_stat_activity): per
   * state, the share of the samples of backends inside a statement or a transaction. E.g. `Lock:transactionid` (a row
   * lock held by another transaction), `Client:ClientRead` (in a transaction, waiting for the client's next statement),
   * `running` (on the CPU, or waiting for it).
   */
  backendStates: Record<string, number>;
  servicePeakRssMb: number | null;
  /** Verification, from the database. */
  renewed: number;
  invoices: number;
  cycleInvoices: number;
  outboxDelta: Record<string, number>;
  /** First and last renewal invoice written, seconds after the advance started. */
  firstInvoiceAt: number | null;
  lastInvoiceAt: number | null;
  /** pg_stat_database deltas over the advance (whole bench database: the service and the sandbox). */
  transactions: number | null;
  rowsInserted: number | null;
  rowsUpdated: number | null;
  /**
   * WAL written over the advance, bytes (the server's insert position moved: every database on it, so read it on a
   * quiet server): table rows and every index entry they add, a steadier measure of write work than CPU time.
   */
  walBytes: number;
  /** Statements per renewal, when pg_stat_statements is installed on the server. */
  statements: number | null;
  /** With pg_stat_statements: the statements that took the most execution time during the advance. */
  topStatements: StatementCost[];
  complete: boolean;
  problems: string[];
}

/** POST with a JSON body over node:http (fetch's own 300 s header timeout would cut a long advance short). */
export function postJson(
  url: string,
  key: string,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(data);
  });
}

interface DbStats {
  xact: number;
  inserted: number;
  updated: number;
  /** pg_current_wal_insert_lsn() as a byte position. */
  wal: number;
}

async function dbStats(db: Client): Promise<DbStats> {
  // Statistics are flushed by each backend at most once a second.
  await new Promise((r) => setTimeout(r, 1500));
  const { rows } = await db.query(
    `select (xact_commit + xact_rollback)::float8 as xact, tup_inserted::float8 as inserted, tup_updated::float8 as updated,
            pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::float8 as wal
     from pg_stat_database where datname = current_database()`,
  );
  return rows[0];
}

export interface StatementCost {
  query: string;
  calls: number;
  /** Execution time summed over the calls (the server's, not the client's; waits for locks included), ms. */
  totalMs: number;
  /** Planning time summed over the calls, ms (0 unless pg_stat_statements.track_planning is on). */
  planMs: number;
}

/** pg_stat_statements of the bench database by query id (empty when it is not installed). */
async function statementSnapshot(db: Client): Promise<Map<string, StatementCost>> {
  try {
    const { rows } = await db.query<{ id: string; query: string; calls: number; ms: number; plan_ms: number }>(
      `select s.queryid::text || '/' || s.userid::text as id, s.query, s.calls::float8 as calls, s.total_exec_time as ms,
         s.total_plan_time as plan_ms
       from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = current_database()`,
    );
    return new Map(rows.map((r) => [r.id, { query: r.query, calls: r.calls, totalMs: r.ms, planMs: r.plan_ms }]));
  } catch {
    return new Map();
  }
}

/** The `limit` statements with the most server time (executing, and planning when tracked) between two snapshots. */
function topStatementsBetween(
  a: Map<string, StatementCost>,
  b: Map<string, StatementCost>,
  limit: number,
): StatementCost[] {
  const out: StatementCost[] = [];
  for (const [id, s] of b) {
    const calls = s.calls - (a.get(id)?.calls ?? 0);
    if (calls > 0)
      out.push({
        query: s.query,
        calls,
        totalMs: s.totalMs - (a.get(id)?.totalMs ?? 0),
        planMs: s.planMs - (a.get(id)?.planMs ?? 0),
      });
  }
  return out.sort((x, y) => y.totalMs + y.planMs - (x.totalMs + x.planMs)).slice(0, limit);
}

async function statementCalls(db: Client): Promise<number | null> {
  try {
    const { rows } = await db.query(
      `select sum(calls)::float8 as n from pg_stat_statements s join pg_database d on d.oid = s.dbid where d.datname = current_database()`,
    );
    return rows[0]?.n ?? null;
  } catch {
    return null; // not installed (the usual case)
  }
}

/** CPU ms so far of each PostgreSQL backend connected to the bench database (the server's own processes, by pid). */
async function backendCpu(db: Client): Promise<Map<number, number>> {
  const { rows } = await db.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database()',
  );
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = cpuMs(pid);
    if (ms !== null) out.set(pid, ms);
  }
  return out;
}

/**
 * Samples pg_stat_activity of the bench database every 0.5 s until stopped: the backends inside a statement or a
 * transaction, by wait event (`running` when none). Answers each state's share of all such backend samples.
 */
function sampleBackendStates(databaseUrl: string): { stop(): Promise<Record<string, number>> } {
  const counts = new Map<string, number>();
  let total = 0;
  let on = true;
  const client = new Client({ connectionString: databaseUrl });
  const done = (async () => {
    await client.connect();
    while (on) {
      const { rows } = await client.query<{ state: string; n: number }>(
        `select coalesce(wait_event_type || ':' || wait_event, 'running') as state, count(*)::int as n from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid() and state in ('active', 'idle in transaction')
           and backend_type = 'client backend'
         group by 1`,
      );
      for (const r of rows) {
        counts.set(r.state, (counts.get(r.state) ?? 0) + r.n);
        total += r.n;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })().catch(() => undefined);
  return {
    async stop() {
      on = false;
      await done;
      await client.end().catch(() => undefined);
      const out: Record<string, number> = {};
      for (const [k, v] of [...counts].sort((a, b) => b[1] - a[1])) out[k] = total ? v / total : 0;
      return out;
    },
  };
}

async function outboxByType(db: Client, merchantId: string): Promise<Map<string, number>> {
  const { rows } = await db.query(
    `select type, count(*)::int as n from outbox_events where merchant_id = $1 group by type`,
    [merchantId],
  );
  return new Map(rows.map((r) => [r.type as string, r.n as number]));
}

/**
 * Seeds `BENCH_RENEWALS` active subscriptions for a fresh merchant of `stack`, advances its test clock by 31 days
 * once, and verifies the renewals in the database.
 */
export async function measureRenewals(stack: Stack, log: (line: string) => void = note): Promise<RenewalFigures> {
  const n = num('BENCH_RENEWALS', 10_000);
  const concurrency = num('BENCH_RENEWAL_CONCURRENCY', 50);
  const timeoutMs = num('BENCH_ADVANCE_TIMEOUT_SECONDS', 900) * 1000;
  const { serviceUrl } = stack;

  // A merchant of its own: its clock and its 10,000 subscriptions touch nothing else the bench measures.
  const { merchant, key, planId } = await subscriptionMerchant(serviceUrl, stack.adminToken, 'Bench renewals');

  log(`renewals: seeding ${n} active subscriptions, ${concurrency} in flight`);
  const seed0 = Date.now();
  await seedActiveSubscriptions(serviceUrl, key, planId, n, concurrency, (done) =>
    log(`renewals: ${done} of ${n} seeded (${((Date.now() - seed0) / 1000).toFixed(1)} s)`),
  );
  const seedSeconds = (Date.now() - seed0) / 1000;
  log(
    `renewals: seeded ${n} subscriptions (created + authorised) in ${seedSeconds.toFixed(1)} s = ${(n / seedSeconds).toFixed(0)}/s`,
  );

  const {
    clients: [db],
    close,
  } = await benchClients(stack.databaseUrl, 1, 'close the renewal verification client');
  const problems: string[] = [];
  try {
    // The state before: each active subscription's period end (the next period must start there).
    const before = await db.query<{ id: string; end: Date }>(
      `select id, current_period_end as end from subscriptions where merchant_id = $1 and mode = 'test' and status = 'active' and cycles_completed = 1`,
      [merchant.id],
    );
    if (before.rowCount !== n)
      problems.push(`before the advance ${before.rowCount} of ${n} subscriptions were active with 1 cycle`);
    // As autovacuum would have long before a real merchant had this many subscriptions: the planner knows the
    // tables. A bench database this fresh was never analysed, and without statistics PostgreSQL may serve a lookup by
    // id through the tenant's (merchant_id, mode) index, i.e. read every subscription of the merchant per renewal.
    await db.query('analyze');
    const outbox0 = await outboxByType(db, merchant.id);
    const stats0 = await dbStats(db);
    const calls0 = await statementCalls(db);
    const statements0 = await statementSnapshot(db);

    // The advance, timed, with the CPU of each process and the service's RSS sampled meanwhile.
    log(`renewals: POST /v1/test-clock/advance {"seconds": ${31 * DAY}} (31 days)`);
    // Progress while the advance runs: renewal invoices written so far (a rate that falls as it goes is per-step
    // work growing with the number of subscriptions).
    const progress: [number, number][] = [];
    const watcher = new Client({ connectionString: stack.databaseUrl });
    await watcher.connect();
    let watching = true;
    let wake = () => {};
    const pg0 = await backendCpu(db);
    const sampler = new RssSampler([stack.service]);
    const cpu0 = {
      service: cpuMsOf(stack.service),
      sandbox: cpuMsOf(stack.sandbox),
      busy: machineBusyMs(),
      self: process.cpuUsage(),
    };
    const t0 = Date.now();
    const states = sampleBackendStates(stack.databaseUrl);
    const watch = (async () => {
      for (;;) {
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 5000);
        });
        if (!watching) break;
        const { rows } = await watcher.query(
          `select count(*)::int as n from invoices where merchant_id = $1 and mode = 'test' and billing_reason = 'subscription_cycle'`,
          [merchant.id],
        );
        progress.push([(Date.now() - t0) / 1000, rows[0].n]);
        log(`renewals: +${((Date.now() - t0) / 1000).toFixed(0)} s: ${rows[0].n} renewed`);
      }
    })();
    let advanceStatus = 0;
    let advanceError: string | null = null;
    try {
      const r = await postJson(`${serviceUrl}/v1/test-clock/advance`, key, { seconds: 31 * DAY }, timeoutMs);
      advanceStatus = r.status;
      if (r.status !== 200) advanceError = r.text.slice(0, 500);
    } catch (err) {
      advanceError = err instanceof Error ? err.message : String(err);
    }
    const t1 = Date.now();
    watching = false;
    wake();
    await watch.catch(() => undefined);
    await watcher.end().catch(() => undefined);
    const backendStates = await states.stop();
    const pg1 = await backendCpu(db);
    let postgresCpuS: number | null = 0;
    for (const [pid, ms] of pg1) postgresCpuS += (ms - (pg0.get(pid) ?? 0)) / 1000;
    if (!pg1.size) postgresCpuS = null;
    const cpu1 = {
      service: cpuMsOf(stack.service),
      sandbox: cpuMsOf(stack.sandbox),
      busy: machineBusyMs(),
      self: process.cpuUsage(cpu0.self),
    };
    const servicePeakRssMb = sampler.peak(stack.service);
    sampler.stop();
    const advanceSeconds = (t1 - t0) / 1000;
    log(
      `renewals: the advance answered ${advanceStatus || 'nothing'} after ${advanceSeconds.toFixed(1)} s${advanceError ? `: ${advanceError}` : ''}`,
    );
    if (advanceError) problems.push(`advance: ${advanceStatus || 'no answer'} ${advanceError}`);

    const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : (b - a) / 1000);
    const serviceCpuS = diff(cpu0.service, cpu1.service);
    const sandboxCpuS = diff(cpu0.sandbox, cpu1.sandbox);
    const busyS = diff(cpu0.busy, cpu1.busy);
    const selfS = (cpu1.self.user + cpu1.self.system) / 1e6;
    const otherCpuS =
      busyS === null
        ? null
        : Math.max(0, busyS - (serviceCpuS ?? 0) - (sandboxCpuS ?? 0) - (postgresCpuS ?? 0) - selfS);

    // Verification.
    const after = await db.query<{ id: string; cycles: number; status: string; start: Date }>(
      `select id, cycles_completed as cycles, status, current_period_start as start from subscriptions where merchant_id = $1 and mode = 'test' and id = any($2::uuid[])`,
      [merchant.id, before.rows.map((r) => r.id)],
    );
    const ends = new Map(before.rows.map((r) => [r.id, r.end.getTime()]));
    const renewed = after.rows.filter(
      (r) => r.status === 'active' && r.cycles === 2 && r.start.getTime() === ends.get(r.id),
    ).length;
    if (renewed !== n) {
      const sample = after.rows.find(
        (r) => !(r.status === 'active' && r.cycles === 2 && r.start.getTime() === ends.get(r.id)),
      );
      problems.push(
        `${renewed} of ${n} renewed (cycles_completed 2, the next period, active)${sample ? `; e.g. ${sample.id}: ${sample.status}, ${sample.cycles} cycles` : ''}`,
      );
    }
    const inv = await db.query<{ total: number; cycle: number; first: Date | null; last: Date | null }>(
      `select count(*)::int as total, count(*) filter (where billing_reason = 'subscription_cycle')::int as cycle,
              min(created_at) filter (where billing_reason = 'subscription_cycle') as first,
              max(created_at) filter (where billing_reason = 'subscription_cycle') as last
       from invoices i where merchant_id = $1 and mode = 'test' and subscription_id = any($2::uuid[])`,
      [merchant.id, before.rows.map((r) => r.id)],
    );
    const { total: invoices, cycle: cycleInvoices, first, last } = inv.rows[0];
    if (invoices !== 2 * n) problems.push(`${invoices} invoices, expected ${2 * n}`);
    if (cycleInvoices !== n) problems.push(`${cycleInvoices} renewal invoices, expected ${n}`);
    const outbox1 = await outboxByType(db, merchant.id);
    const outboxDelta: Record<string, number> = {};
    for (const [type, count] of outbox1)
      if (count - (outbox0.get(type) ?? 0)) outboxDelta[type] = count - (outbox0.get(type) ?? 0);
    const renewalEvents = Object.entries(outboxDelta).filter(([, c]) => c >= n);
    if (!renewalEvents.length) problems.push(`no event type written once per renewal: ${JSON.stringify(outboxDelta)}`);
    const stats1 = await dbStats(db);
    const calls1 = await statementCalls(db);
    const topStatements = topStatementsBetween(
      statements0,
      await statementSnapshot(db),
      num('BENCH_RENEWAL_TOP_STATEMENTS', 15, 0),
    );

    return {
      subscriptions: n,
      concurrency,
      seedSeconds,
      advanceStatus,
      advanceSeconds,
      advanceError,
      serviceCpuS,
      sandboxCpuS,
      postgresCpuS,
      otherCpuS,
      servicePeakRssMb,
      progress,
      backendStates,
      renewed,
      invoices,
      cycleInvoices,
      outboxDelta,
      firstInvoiceAt: first ? (first.getTime() - t0) / 1000 : null,
      lastInvoiceAt: last ? (last.getTime() - t0) / 1000 : null,
      transactions: stats1.xact - stats0.xact,
      rowsInserted: stats1.inserted - stats0.inserted,
      rowsUpdated: stats1.updated - stats0.updated,
      walBytes: stats1.wal - stats0.wal,
      statements: calls0 === null || calls1 === null ? null : calls1 - calls0,
      topStatements,
      complete: problems.length === 0,
      problems,
    };
  } finally {
    await close();
  }
}

const f1 = (x: number | null, unit = '') => (x === null ? 'n/a' : `${x.toFixed(1)}${unit}`);

/** The figures as lines (for either bench's output). */
export function describeRenewals(r: RenewalFigures): string[] {
  const per = (x: number | null) => (x === null ? 'n/a' : (x / r.subscriptions).toFixed(1));
  const msPer = (s: number | null) =>
    s === null ? 'n/a' : `${((s * 1000) / r.subscriptions).toFixed(1)} (${s.toFixed(1)} s)`;
  // pg_stat_statements.track_planning on: planning times are listed too.
  const planned = r.topStatements.some((s) => s.planMs > 0);
  const rate =
    r.firstInvoiceAt !== null && r.lastInvoiceAt !== null && r.lastInvoiceAt > r.firstInvoiceAt
      ? `${(r.cycleInvoices / (r.lastInvoiceAt - r.firstInvoiceAt)).toFixed(0)} renewals/s between the first and the last`
      : 'n/a';
  return [
    `${r.subscriptions} active monthly subscriptions seeded (create + mandate checkout, ${r.concurrency} in flight) in ${r.seedSeconds.toFixed(1)} s = ${(r.subscriptions / r.seedSeconds).toFixed(0)}/s`,
    `one POST /v1/test-clock/advance of 31 days: ${r.advanceStatus || 'no answer'} after ${r.advanceSeconds.toFixed(1)} s` +
      ` (${((r.advanceSeconds * 1000) / r.subscriptions).toFixed(2)} ms per renewal)${r.advanceError ? `: ${r.advanceError}` : ''}`,
    `  renewed ${r.renewed}/${r.subscriptions} (cycles_completed 2, next period), invoices ${r.invoices} (${r.cycleInvoices} renewals), outbox +${JSON.stringify(r.outboxDelta)}`,
    `  first renewal invoice at +${f1(r.firstInvoiceAt, ' s')}, last at +${f1(r.lastInvoiceAt, ' s')}: ${rate}`,
    `  CPU during the advance (ms per renewal): service ${msPer(r.serviceCpuS)}, sandbox ${msPer(r.sandboxCpuS)},` +
      ` PostgreSQL backends of the bench database ${msPer(r.postgresCpuS)}, rest of the machine ${msPer(r.otherCpuS)}; service peak RSS ${r.servicePeakRssMb === null ? 'n/a' : `${r.servicePeakRssMb.toFixed(0)} MB`}`,
    ...(Object.keys(r.backendStates).length
      ? [
          `  bench database backends busy, sampled every 0.5 s: ${Object.entries(r.backendStates)
            .map(([k, v]) => `${k} ${(100 * v).toFixed(0)}%`)
            .join(', ')}`,
        ]
      : []),
    ...(r.progress.length
      ? [`  renewed by then: ${r.progress.map(([t, k]) => `${t.toFixed(0)} s ${k}`).join(', ')}`]
      : []),
    `  database (service + sandbox): ${per(r.transactions)} transactions, ${per(r.rowsInserted)} rows inserted, ${per(r.rowsUpdated)} rows updated, ${(r.walBytes / r.subscriptions / 1024).toFixed(1)} KB of WAL (whole server) per renewal` +
      (r.statements === null
        ? ' (pg_stat_statements not installed: no statement count)'
        : `, ${per(r.statements)} statements per renewal`),
    ...(r.topStatements.length
      ? [`  statements with the most server time (per renewal: calls, ms executing${planned ? ' + ms planning' : ''}):`]
      : []),
    ...r.topStatements.map(
      (s) =>
        `    ${(s.calls / r.subscriptions).toFixed(2)} x, ${(s.totalMs / r.subscriptions).toFixed(3)} ms` +
        `${planned ? ` + ${(s.planMs / r.subscriptions).toFixed(3)} ms` : ''}: ${s.query.replace(/\s+/g, ' ').slice(0, 160)}`,
    ),
    ...r.problems.map((p) => `  PROBLEM: ${p}`),
  ];
}

async function main(): Promise<number> {
  const ROOT = path.resolve(__dirname, '..', '..');
  const serviceNodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const sandboxNodeArgs = (process.env.BENCH_SANDBOX_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const stack = await startStack({ root: ROOT, bare: false, serviceNodeArgs, sandboxNodeArgs, note });
  const r = await measureRenewals(stack);
  say('');
  say('Cadence subscription renewal benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}); database: ${stack.dbLabel}`,
  );
  say(`  service: ${stack.serviceLabel}`);
  for (const line of describeRenewals(r)) say(`  ${line}`);
  const pass = r.advanceStatus === 200 && r.advanceSeconds < RENEWAL_TARGET_SECONDS;
  say(
    `  [target: the advance < ${RENEWAL_TARGET_SECONDS} s: ${pass ? 'PASS' : 'MISS'}; all renewed, invoiced and evented: ${r.complete ? 'PASS' : 'MISS'}]`,
  );
  say('');
  return 0;
}

if (require.main === module) runBench(main, note);

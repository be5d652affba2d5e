import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { cpuMsOf, machineBusyMs, runBench } from './lib/processes';
import { benchClients } from './lib/database';
import { envNumber } from './lib/env';
import { requestJson } from './lib/http';
import { startStack, Stack } from './lib/stack';
import { completeCheckout, createSubscription, subscriptionMerchant } from './lib/subscriptions';
import { postJson } from './renewals';
import { standInForAutovacuum } from './lib/autovacuum';

/**
 * Month-start at scale (bench/README.md, `npm run bench:month-start`): N active monthly subscriptions of one merchant
 * (default 100,000) whose periods all end at the same instant, renewed by one test-clock advance, once per count of
 * renewal workers (default 1, 2 and 4), each on a fresh stack (database, sandbox, service).
 *
 * Who renews: the advance moves the gateway sandbox's clock; the sandbox charges every due subscription and posts
 * each renewal's webhooks to the service, 16 in flight over keep-alive connections. The service bills a renewal in
 * the process that receives its webhook. With W workers the service runs API_PROCESSES=W: the supervisor hands each
 * of the sandbox's connections to the next API process, so the W processes share the renewals. The pre-debit notices
 * that come due 48 hours before the renewals are sent by the process running the advance (the test clock's due work),
 * before the first renewal: timed apart.
 *
 * Seeding: one subscription is created and authorised through the API (the template). Its rows, in every table
 * that got one (the service's and the sandbox's: customer, subscription, events, invoice, payment, mandate attempt,
 * MRR movement, outbox, gateway events, idempotency records, sandbox objects and events), are copied N - 1 times by
 * set-based INSERTs in PostgreSQL, every id, e-mail and invoice number of the template replaced by one of the copy's
 * own; the invoice number series and the day's MRR totals are raised to match. The bench then checks the copies:
 * every table holds N times the template's rows, and the API answers a sample of copies exactly as it answers the
 * template, ids aside.
 *
 * Then, per run: a webhook endpoint of the merchant pointing at a receiver in this process, one POST
 * /v1/test-clock/advance of 31 days (timed), and meanwhile GET /v1/subscriptions/{id} paced at a modest rate
 * (p50, p99, errors). Afterwards, from the database: every subscription active with cycles_completed 2 and one
 * renewal invoice, invoice numbers gap-free in each series, every outbox event of the merchant written during the
 * advance received by the receiver. Target: N renewed within 5 minutes of the advance's start.
 *
 * Environment: BENCH_MONTH_START_SUBSCRIPTIONS (100000), BENCH_MONTH_START_WORKERS (1,2,4),
 * BENCH_MONTH_START_READ_RATE (reads per second during the advance, 20), BENCH_ADVANCE_TIMEOUT_SECONDS (3600),
 * DATABASE_URL.
 */

const TARGET_SECONDS = 300;
const DAY = 86_400;
const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench:month-start: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ids of the template, each replaced in its copies: UUIDs, gateway ids (`sub_...`, `cs_test_...`), e-mails. */
const TOKEN =
  /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[a-z]+(?:_test)?_(?=[a-z]*[A-Z0-9])[A-Za-z0-9]{10,}\b|\bbench-[0-9a-f]+@example\.com\b/g;

/** Tables without an `id` of their own that one subscription changes: totals, raised for the copies. */
const TOTALS: Record<string, string[]> = {
  invoice_sequences: [],
  mrr_movement_days: [
    'net',
    'subscriptions',
    'customers',
    'new_mrr',
    'expansion_mrr',
    'reactivation_mrr',
    'contraction_mrr',
    'churn_mrr',
    'churned',
  ],
};

/** The shared limits' counters and WebSocket leases: they count requests, not billing, and are never copied. */
const NOT_COPIED = ['rate_limits', 'websocket_leases'];

interface Snapshot {
  /** Per table with an `id` column: the ids; else the rows as JSON text. */
  ids: Map<string, Set<string>>;
  rows: Map<string, Set<string>>;
  counts: Map<string, number>;
}

async function snapshot(db: Client, countsOnly = false): Promise<Snapshot> {
  const { rows: tables } = await db.query<{ t: string; has_id: boolean }>(
    `select t.table_name as t, exists (select 1 from information_schema.columns c
       where c.table_schema = 'public' and c.table_name = t.table_name and c.column_name = 'id') as has_id
     from information_schema.tables t where t.table_schema = 'public' and t.table_type = 'BASE TABLE'
       and t.table_name <> all($1) order by 1`,
    [NOT_COPIED],
  );
  const snap: Snapshot = { ids: new Map(), rows: new Map(), counts: new Map() };
  for (const { t, has_id } of tables) {
    if (countsOnly) {
      const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from "${t}"`);
      snap.counts.set(t, rows[0].n);
    } else if (has_id) {
      const { rows } = await db.query<{ id: string }>(`select id::text as id from "${t}"`);
      snap.ids.set(t, new Set(rows.map((r) => r.id)));
      snap.counts.set(t, rows.length);
    } else {
      const { rows } = await db.query<{ j: string }>(`select row_to_json(x)::text as j from "${t}" x`);
      snap.rows.set(t, new Set(rows.map((r) => r.j)));
      snap.counts.set(t, rows.length);
    }
  }
  return snap;
}

interface Seeded {
  subscriptionIds: string[];
  seconds: number;
  /** Rows per table of one subscription (the template's). */
  perSubscription: Record<string, number>;
  tokens: number;
}

/**
 * Copies the template subscription's rows (those new in `after` against `before`) `n - 1` times in PostgreSQL; see
 * the file's comment. Answers the ids of all n subscriptions (the template first).
 */
async function copyTemplate(
  db: Client,
  before: Snapshot,
  after: Snapshot,
  template: { id: string; merchantId: string },
  n: number,
  log: (line: string) => void,
): Promise<Seeded> {
  const t0 = Date.now();
  const newRows = new Map<string, string[]>();
  for (const [t, ids] of after.ids) {
    const added = [...ids].filter((id) => !before.ids.get(t)?.has(id));
    if (!added.length) continue;
    const { rows } = await db.query<{ j: string }>(
      `select row_to_json(x)::text as j from "${t}" x where id::text = any($1)`,
      [added],
    );
    newRows.set(
      t,
      rows.map((r) => r.j),
    );
  }
  for (const [t, rows] of after.rows) {
    const changed = [...rows].filter((r) => !before.rows.get(t)?.has(r));
    if (changed.length && !(t in TOTALS))
      throw new Error(`table ${t} (no id column) changed with one subscription: the seeding does not know it`);
  }
  // What to replace: the tokens of the new rows that no older row mentions (the merchant, its plan and price, the
  // gateway account and its price stay).
  const old = new Set<string>();
  for (const [t, ids] of before.ids) {
    const { rows } = await db.query<{ j: string }>(
      `select row_to_json(x)::text as j from "${t}" x where id::text = any($1)`,
      [[...ids]],
    );
    for (const { j } of rows) for (const m of j.matchAll(TOKEN)) old.add(m[0]);
  }
  for (const rows of before.rows.values()) for (const j of rows) for (const m of j.matchAll(TOKEN)) old.add(m[0]);
  const tokens = new Set<string>();
  for (const rows of newRows.values()) for (const j of rows) for (const m of j.matchAll(TOKEN)) tokens.add(m[0]);
  for (const t of old) tokens.delete(t);
  if (!tokens.has(template.id)) throw new Error('the template subscription id is not among the replaced ids');
  const list = [...tokens];
  // The template's invoice number: copy k takes the k-th after it, in the same series.
  const inv = (newRows.get('invoices') ?? []).map((j) => JSON.parse(j) as { number: string });
  if (inv.length !== 1) throw new Error(`the template has ${inv.length} invoices, expected 1`);
  const [, numberPrefix, digits] = /^(.*?)(\d+)$/.exec(inv[0].number) ?? [];
  if (digits === undefined || Number(digits) !== 1)
    throw new Error(`the template's invoice ${inv[0].number} is not the first of its series`);

  // Per copy k (1..n-1), each token's replacement: UUIDs keep their timestamp (ids stay time-ordered) with the rest
  // from md5(token, k); gateway ids keep their prefix and length; e-mails get k.
  await db.query(`create temp table ms_copies (k int primary key, v text[]) on commit preserve rows`);
  const parts = list.map((tok, i) => {
    const lit = `$${i + 2}::text`;
    if (/^[0-9a-f]{8}-/.test(tok))
      return `left(${lit}, 13) || '-7' || substr(md5(${lit} || k), 1, 3) || '-8' || substr(md5(${lit} || k), 4, 3) || '-' || substr(md5(${lit} || k), 7, 12)`;
    if (tok.includes('@')) return `'bench-ms-' || k || left(${lit}, 0) || '@example.com'`;
    const prefix = /^[a-z]+(?:_test)?_/.exec(tok)![0];
    const len = tok.length - prefix.length;
    return `'${prefix}' || left(repeat(md5(${lit} || k), ${Math.ceil(len / 32)}), ${len})`;
  });
  await db.query(`insert into ms_copies select k, array[${parts.join(', ')}] from generate_series(1, $1::int - 1) k`, [
    n,
    ...list,
  ]);
  // Nested replace() of the row's JSON text, tokens first (longest first: none is part of another), then the number.
  const order = list.map((tok, i) => ({ tok, i })).sort((a, b) => b.tok.length - a.tok.length);
  let expr = 'r.j';
  const values: unknown[] = [];
  for (const { tok, i } of order) {
    values.push(tok);
    expr = `replace(${expr}, $${values.length}::text, c.v[${i + 1}])`;
  }
  values.push(`"${inv[0].number}"`, numberPrefix, digits.length);
  expr = `replace(${expr}, $${values.length - 2}::text, '"' || $${values.length - 1}::text || lpad((c.k + 1)::text, $${values.length}::int, '0') || '"')`;
  await db.query(`create temp table ms_rows (t text, j text) on commit preserve rows`);
  for (const [t, rows] of newRows) for (const j of rows) await db.query(`insert into ms_rows values ($1, $2)`, [t, j]);
  const perSubscription: Record<string, number> = {};
  for (const [t, rows] of newRows) {
    perSubscription[t] = rows.length;
    const { rows: cols } = await db.query<{ c: string }>(
      `select column_name as c from information_schema.columns where table_schema = 'public' and table_name = $1
         and is_generated = 'NEVER' order by ordinal_position`,
      [t],
    );
    const list2 = cols.map(({ c }) => `"${c}"`).join(', ');
    const s0 = Date.now();
    await db.query(
      `insert into "${t}" (${list2}) select ${cols.map(({ c }) => `x."${c}"`).join(', ')}
       from ms_rows r cross join ms_copies c cross join lateral jsonb_populate_record(null::"${t}", (${expr})::jsonb) x
       where r.t = '${t}'`,
      values,
    );
    log(`seed: ${t}: ${rows.length * (n - 1)} rows copied in ${((Date.now() - s0) / 1000).toFixed(1)} s`);
  }
  // Totals: the series' last number, and the day's MRR as if each copy had been activated like the template.
  await db.query(
    `update invoice_sequences set last_number = last_number + $2 where merchant_id = $1 and mode = 'test' and type = 'invoice'`,
    [template.merchantId, n - 1],
  );
  const mrr = TOTALS.mrr_movement_days;
  for (const j of after.rows.get('mrr_movement_days') ?? []) {
    if (before.rows.get('mrr_movement_days')?.has(j)) continue;
    const row = JSON.parse(j) as Record<string, unknown>;
    await db.query(
      `update mrr_movement_days set ${mrr.map((c) => `"${c}" = "${c}" * $6`).join(', ')}
       where merchant_id = $1 and mode = $2 and currency = $3 and day = $4 and shard = $5`,
      [row.merchant_id, row.mode, row.currency, row.day, row.shard, n],
    );
  }
  const { rows: ids } = await db.query<{ id: string }>(
    `select id::text from subscriptions where merchant_id = $1 and status = 'active' order by id`,
    [template.merchantId],
  );
  await db.query('drop table ms_rows; drop table ms_copies');
  // As autovacuum would have long before on a server whose rows came month by month: cleaned, visibility map set,
  // statistics taken.
  await db.query('vacuum (analyze)');
  return {
    subscriptionIds: [template.id, ...ids.map((r) => r.id).filter((id) => id !== template.id)],
    seconds: (Date.now() - t0) / 1000,
    perSubscription,
    tokens: list.length,
  };
}

/** The API's answer for a subscription with its ids and e-mail written as placeholders: the copies' must match. */
async function shapeOf(serviceUrl: string, key: string, id: string): Promise<string> {
  const r = await requestJson(`${serviceUrl}/v1/subscriptions/${id}`, { headers: { authorization: `Bearer ${key}` } });
  if (r.status !== 200) throw new Error(`GET /v1/subscriptions/${id} answered ${r.status}: ${r.text.slice(0, 300)}`);
  const seen = new Map<string, string>();
  return JSON.stringify(r.body).replace(TOKEN, (tok) => {
    if (!seen.has(tok)) seen.set(tok, `<id${seen.size}>`);
    return seen.get(tok)!;
  });
}

/** GET /v1/subscriptions/{id} at `rate` per second over `ids` until stopped; latency counts from each due instant. */
function pacedReads(serviceUrl: string, key: string, ids: string[], rate: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const u = new URL(serviceUrl);
  const latencies: number[] = [];
  let errors = 0;
  /** Why reads failed: the status, or the client's error. */
  const failures: Record<string, number> = {};
  const fail = (why: string) => {
    errors++;
    failures[why] = (failures[why] ?? 0) + 1;
  };
  let on = true;
  const inflight = new Set<Promise<void>>();
  const one = (path: string, due: number) =>
    new Promise<void>((resolve) => {
      const req = http.request(
        { host: u.hostname, port: u.port, path, agent, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) latencies.push(performance.now() - due);
            else fail(`HTTP ${res.statusCode}`);
            resolve();
          });
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
      req.on('error', (err) => {
        fail(err.message);
        resolve();
      });
      req.end();
    });
  const done = (async () => {
    const start = performance.now();
    for (let i = 0; on; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const p = one(`/v1/subscriptions/${ids[i % ids.length]}`, due);
      inflight.add(p);
      void p.then(() => inflight.delete(p));
    }
  })();
  return {
    async stop() {
      on = false;
      await done;
      await Promise.all(inflight);
      agent.destroy();
      const sorted = latencies.sort((a, b) => a - b);
      const pct = (p: number) =>
        sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] : NaN;
      return {
        reads: sorted.length,
        errors,
        failures,
        p50: pct(0.5),
        p99: pct(0.99),
        max: sorted[sorted.length - 1] ?? NaN,
      };
    },
  };
}

/** A webhook receiver answering 200 at once; counts distinct event ids (webhook-id) by type. */
async function startReceiver() {
  const ids = new Set<string>();
  let posts = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') ids.add(id);
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    ids,
    posts: () => posts,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface RunFigures {
  workers: number;
  n: number;
  seed: Seeded;
  advanceStatus: number;
  advanceError: string | null;
  advanceSeconds: number;
  /** Renewal invoices' first and last commit, seconds after the advance started. */
  firstRenewal: number | null;
  lastRenewal: number | null;
  reads: { reads: number; errors: number; failures: Record<string, number>; p50: number; p99: number; max: number };
  cpu: { service: number | null; sandbox: number | null; machine: number | null };
  webhooks: { events: number; received: number; seconds: number };
  problems: string[];
}

async function oneRun(root: string, workers: number, n: number): Promise<RunFigures> {
  const problems: string[] = [];
  const stack: Stack = await startStack({
    root,
    bare: false,
    apiProcesses: workers,
    // The receiver is on loopback; the advance's sandbox call is bounded at 5 x GATEWAY_TIMEOUT_MS.
    env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'on', GATEWAY_TIMEOUT_MS: process.env.GATEWAY_TIMEOUT_MS ?? '720000' },
    note,
  });
  const { serviceUrl } = stack;
  const { merchant, key, planId } = await subscriptionMerchant(serviceUrl, stack.adminToken, 'Bench month-start');
  const {
    clients: [db, vacuumer],
    close,
  } = await benchClients(stack.databaseUrl, 2, 'close the month-start clients');
  try {
    await sleep(1500); // the create's outbox event dispatched
    const before = await snapshot(db);
    const sub = await createSubscription(serviceUrl, key, planId);
    await completeCheckout(sub.checkout_url);
    for (let i = 0; i < 50; i++) {
      const { rows } = await db.query(`select count(*)::int as n from outbox_events where dispatched_at is null`);
      if (!rows[0].n) break;
      await sleep(100);
    }
    const after = await snapshot(db);
    note(`${workers} worker(s): seeding ${n} subscriptions from the API-made ${sub.id}`);
    const seed = await copyTemplate(db, before, after, { id: sub.id, merchantId: merchant.id }, n, note);
    note(`${workers} worker(s): seeded in ${seed.seconds.toFixed(1)} s`);
    // The copies as the API made the template: n times its rows per table, and the same answers.
    const counts = (await snapshot(db, true)).counts;
    for (const [t, per] of Object.entries(seed.perSubscription)) {
      const want = (before.counts.get(t) ?? 0) + per * n;
      if (counts.get(t) !== want) problems.push(`seeded ${t}: ${counts.get(t)} rows, expected ${want}`);
    }
    if (seed.subscriptionIds.length !== n)
      problems.push(`seeded ${seed.subscriptionIds.length} active subscriptions, expected ${n}`);
    const shape = await shapeOf(serviceUrl, key, sub.id);
    for (let i = 1; i <= 5 && n > 1; i++) {
      const id = seed.subscriptionIds[Math.floor((i * (n - 1)) / 5)];
      if ((await shapeOf(serviceUrl, key, id)) !== shape) problems.push(`copy ${id} answers unlike the template`);
    }

    const receiver = await startReceiver();
    const hook = await requestJson(`${serviceUrl}/v1/webhooks/endpoints`, {
      headers: { authorization: `Bearer ${key}` },
      body: { url: receiver.url, mode: 'test' },
    });
    if (hook.status !== 201) throw new Error(`POST /v1/webhooks/endpoints answered ${hook.status}: ${hook.text}`);
    const { rows: pe } = await db.query<{ end: Date }>(
      `select min(current_period_end) as end from subscriptions where merchant_id = $1 and status = 'active'`,
      [merchant.id],
    );
    const periodEnd = pe[0].end;

    const reader = pacedReads(serviceUrl, key, seed.subscriptionIds, envNumber('BENCH_MONTH_START_READ_RATE', 20, 1));
    const cpu0 = { service: cpuMsOf(stack.service), sandbox: cpuMsOf(stack.sandbox), machine: machineBusyMs() };
    const startedAt = new Date();
    const t0 = Date.now();
    note(`${workers} worker(s): POST /v1/test-clock/advance {"seconds": ${31 * DAY}}`);
    let advanceStatus = 0;
    let advanceError: string | null = null;
    const progress = setInterval(() => {
      void db
        .query(
          `select count(*)::int as n from invoices where merchant_id = $1 and billing_reason = 'subscription_cycle'`,
          [merchant.id],
        )
        .then(({ rows }) => note(`  +${((Date.now() - t0) / 1000).toFixed(0)} s: ${rows[0].n} renewed`))
        .catch(() => undefined);
    }, 10_000);
    // Tables grow from empty during the advance (notices, deliveries, invoices) and every renewal updates rows. Where
    // the server runs without autovacuum (this machine's CI configuration), the bench does autovacuum's work itself.
    const autovacuum = await standInForAutovacuum(vacuumer);
    if (autovacuum)
      note(`${workers} worker(s): autovacuum is off on this server: the bench vacuums and analyses as it would`);
    try {
      const r = await postJson(
        `${serviceUrl}/v1/test-clock/advance`,
        key,
        { seconds: 31 * DAY },
        envNumber('BENCH_ADVANCE_TIMEOUT_SECONDS', 3600, 1) * 1000,
      );
      advanceStatus = r.status;
      if (r.status !== 200) advanceError = r.text.slice(0, 500);
    } catch (err) {
      advanceError = err instanceof Error ? err.message : String(err);
    } finally {
      clearInterval(progress);
      await autovacuum?.stop();
      if (autovacuum)
        note(`  autovacuum stand-in: ${autovacuum.counts.vacuumed} vacuums, ${autovacuum.counts.analysed} analyses`);
    }
    const advanceSeconds = (Date.now() - t0) / 1000;
    const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : (b - a) / 1000);
    const cpu = {
      service: delta(cpu0.service, cpuMsOf(stack.service)),
      sandbox: delta(cpu0.sandbox, cpuMsOf(stack.sandbox)),
      machine: delta(cpu0.machine, machineBusyMs()),
    };
    const reads = await reader.stop();

    // Verification.
    const { rows: v } = await db.query(
      `select count(*)::int as subs,
         count(*) filter (where s.status = 'active' and s.cycles_completed = 2 and s.current_period_start = $2)::int as renewed,
         count(*) filter (where r.n = 1)::int as once, count(*) filter (where r.n > 1)::int as twice
       from subscriptions s left join (select subscription_id, count(*)::int as n from invoices
         where merchant_id = $1 and billing_reason = 'subscription_cycle' group by 1) r on r.subscription_id = s.id
       where s.merchant_id = $1 and s.cycles_completed >= 1`,
      [merchant.id, periodEnd],
    );
    if (v[0].subs !== n) problems.push(`${v[0].subs} subscriptions, expected ${n}`);
    if (v[0].renewed !== n) problems.push(`${v[0].renewed} of ${n} renewed (active, cycles_completed 2, next period)`);
    if (v[0].once !== n || v[0].twice)
      problems.push(`renewal invoices: ${v[0].once} billed once, ${v[0].twice} more than once`);
    const { rows: series } = await db.query(
      `select type, prefix, count(*)::int as n, count(distinct seq)::int as distinct_n, min(seq)::int as lo, max(seq)::int as hi
       from (select type, regexp_replace(number, '\\d+$', '') as prefix, substring(number from '\\d+$')::int as seq
             from invoices where merchant_id = $1 and mode = 'test') x group by 1, 2`,
      [merchant.id],
    );
    for (const s of series)
      if (s.lo !== 1 || s.hi !== s.n || s.distinct_n !== s.n)
        problems.push(
          `invoice series ${s.type} ${s.prefix}: ${s.n} numbers, ${s.distinct_n} distinct, ${s.lo}..${s.hi}`,
        );
    const { rows: q } = await db.query(
      `select count(*)::int as n from invoices where merchant_id = $1 and mode = 'test' and number is null`,
      [merchant.id],
    );
    if (q[0].n) problems.push(`${q[0].n} invoices without a number`);
    // The renewal invoices' commit times, wall clock: their invoice.paid events' (issued_at is merchant time).
    const { rows: wall } = await db.query(
      `select extract(epoch from min(e.created_at))::float8 as first, extract(epoch from max(e.created_at))::float8 as last
       from outbox_events e where e.merchant_id = $1 and e.type = 'invoice.paid' and e.created_at >= $2`,
      [merchant.id, startedAt],
    );
    const at = (s: number | null) => (s === null ? null : s - startedAt.getTime() / 1000);
    // Webhooks: every event the merchant's outbox got since the advance started, at the receiver.
    const { rows: ev } = await db.query<{ n: number }>(
      `select count(*)::int as n from outbox_events where merchant_id = $1 and created_at >= $2`,
      [merchant.id, startedAt],
    );
    // Delivery goes on after the advance: wait while events keep arriving (none for a minute: give up).
    let last = { n: receiver.ids.size, at: Date.now() };
    while (receiver.ids.size < ev[0].n && Date.now() - last.at < 60_000) {
      await sleep(500);
      if (receiver.ids.size > last.n) last = { n: receiver.ids.size, at: Date.now() };
    }
    const webhooks = { events: ev[0].n, received: receiver.ids.size, seconds: (Date.now() - t0) / 1000 };
    if (webhooks.received < webhooks.events)
      problems.push(`webhooks: ${webhooks.received} of ${webhooks.events} events received`);
    await receiver.close();
    return {
      workers,
      n,
      seed,
      advanceStatus,
      advanceError,
      advanceSeconds,
      firstRenewal: at(wall[0].first),
      lastRenewal: at(wall[0].last),
      reads,
      cpu,
      webhooks,
      problems,
    };
  } finally {
    await close();
    await stack.service.stop();
    await stack.sandbox.stop();
  }
}

function describe(r: RunFigures): string[] {
  const f1 = (x: number | null) => (x === null ? 'n/a' : x.toFixed(1));
  const renewSeconds = r.firstRenewal !== null && r.lastRenewal !== null ? r.lastRenewal - r.firstRenewal : null;
  const rate = renewSeconds ? r.n / renewSeconds : null;
  const ms = (s: number | null) => (s === null ? 'n/a' : ((s * 1000) / r.n).toFixed(2));
  const pass = r.advanceStatus === 200 && r.advanceSeconds <= TARGET_SECONDS && !r.problems.length;
  return [
    `${r.workers} worker(s) (API_PROCESSES=${r.workers}): seeded ${r.n} in ${r.seed.seconds.toFixed(1)} s (${r.seed.tokens} ids replaced per copy)`,
    `  advance: ${r.advanceStatus || 'no answer'} after ${r.advanceSeconds.toFixed(1)} s${r.advanceError ? `: ${r.advanceError}` : ''}`,
    `  notices until the first renewal: ${f1(r.firstRenewal)} s; renewals first to last: ${f1(renewSeconds)} s = ` +
      `${rate === null ? 'n/a' : rate.toFixed(0)} renewals/s, ${rate === null ? 'n/a' : (rate / r.workers).toFixed(0)} per worker; ` +
      `overall ${(r.n / r.advanceSeconds).toFixed(0)}/s`,
    `  CPU ms per renewal: service ${ms(r.cpu.service)}, sandbox ${ms(r.cpu.sandbox)}, whole machine ${ms(r.cpu.machine)}`,
    `  reads during the advance: ${r.reads.reads} answered, p50 ${r.reads.p50.toFixed(1)} ms, p99 ${r.reads.p99.toFixed(1)} ms, max ${r.reads.max.toFixed(0)} ms, ${r.reads.errors} errors${r.reads.errors ? ` ${JSON.stringify(r.reads.failures)}` : ''}`,
    `  webhooks: ${r.webhooks.received} of ${r.webhooks.events} events received, all by +${r.webhooks.seconds.toFixed(0)} s`,
    ...r.problems.map((p) => `  PROBLEM: ${p}`),
    `  [target: ${r.n} renewed within ${TARGET_SECONDS} s, each once, numbers gap-free, webhooks delivered: ${pass ? 'PASS' : 'MISS'}]`,
  ];
}

async function main(): Promise<number> {
  const root = path.resolve(__dirname, '..', '..');
  const n = Math.floor(envNumber('BENCH_MONTH_START_SUBSCRIPTIONS', 100_000, 2));
  const workers = (process.env.BENCH_MONTH_START_WORKERS || '1,2,4').split(',').map((w) => {
    const k = Number(w.trim());
    if (!Number.isInteger(k) || k < 1 || k > 64) throw new Error(`BENCH_MONTH_START_WORKERS: bad count "${w}"`);
    return k;
  });
  const runs: RunFigures[] = [];
  for (const w of workers) {
    const r = await oneRun(root, w, n);
    runs.push(r);
    for (const line of describe(r)) note(line);
  }
  say('');
  say('Cadence month-start benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}); load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  for (const r of runs) for (const line of describe(r)) say(`  ${line}`);
  const base = runs[0];
  const rateOf = (r: RunFigures) =>
    r.firstRenewal !== null && r.lastRenewal !== null && r.lastRenewal > r.firstRenewal
      ? r.n / (r.lastRenewal - r.firstRenewal)
      : null;
  if (runs.length > 1 && rateOf(base))
    say(
      `  scaling of the renewal rate against ${base.workers} worker(s): ${runs.map((r) => `${r.workers}: ${rateOf(r) ? (rateOf(r)! / rateOf(base)!).toFixed(2) : 'n/a'}x`).join(', ')}`,
    );
  say('');
  return runs.some((r) => r.problems.length) ? 1 : 0;
}

if (require.main === module) runBench(main, note);

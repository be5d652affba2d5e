import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { graphqlEquivalentOf, serviceSchema } from './lib/graphql-query';
import { requestJson } from './lib/http';
import { runLoad } from './lib/load';
import { Child, cpuMsOf, machineBusyMs, onCleanup, RssSampler, rssMbOf, runBench } from './lib/processes';
import { createMerchant, seedCatalog, seedPayments } from './lib/seed';
import { startStack } from './lib/stack';
import { seedActiveSubscriptions, subscriptionMerchant } from './lib/subscriptions';
import { seedEntitlementBench } from './lib/entitlements';
import { seedResolveBench } from './lib/offerings';
import { describeRenewals, measureRenewals, RenewalFigures, RENEWALS } from './renewals';
import { BenchContext, checks, MeasuredScenario, Scenario, scenarios } from './scenarios';
import { describeUsage, measureUsage, USAGE_BENCH, usageChecks, UsageFigures } from './usage';
import { envNumber } from './lib/env';
import { describeSubscriptionFlow, FlowFigures, measureSubscriptionFlow, SUBSCRIPTION_FLOW } from './subscription-flow';

/**
 * `npm run bench`: throughput and latency of a bare express hello world, the REST shim and GraphQL, measured in one
 * run against the real service started as a child process, plus the service's peak RSS. Figures are informational:
 * a missed target prints MISS and the exit code stays 0; the exit code is 1 only when the bench itself cannot run
 * (a process does not start, a scenario does not answer as expected).
 *
 * Environment:
 *   BENCH_SECONDS            measured seconds per scenario (default 10)
 *   BENCH_WARMUP_SECONDS     warm-up seconds per scenario before measuring (default 3)
 *   BENCH_CONNECTIONS        concurrent connections (default 50)
 *   BENCH_ONLY               comma-separated parts of scenario names to run (default: all)
 *   BENCH_SERVICE_NODE_ARGS  extra node flags for the service, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
 *   BENCH_SANDBOX_NODE_ARGS  the same for the gateway sandbox
 *   BENCH_API_PROCESSES      the service's API_PROCESSES (default 1); over 1, its CPU and RSS are its process group's
 *   BENCH_JSON               write the figures to this file as JSON
 *   BENCH_SUBSCRIPTION_SEEDS active subscriptions the subscription read scenarios go through (default 300)
 *   BENCH_RENEWALS, BENCH_RENEWAL_CONCURRENCY, BENCH_ADVANCE_TIMEOUT_SECONDS: the renewal run (renewals.ts), which
 *                            runs after the scenarios when BENCH_ONLY selects "subscription renewals"
 *   BENCH_ANALYTICS_*, BENCH_USAGE_*: the usage and analytics bench (usage.ts), which runs after them when BENCH_ONLY
 *                            selects "usage" or "analytics"
 *   DATABASE_URL             a PostgreSQL server: the bench creates cadence_bench_<random> on it and drops it after;
 *                            unset: the service starts its embedded PostgreSQL in a temporary DATA_DIR
 */

const ROOT = path.resolve(__dirname, '..', '..');
const CATALOG = { products: 20, plansPerProduct: 3, currencies: ['INR', 'USD'] };
/** Entitlement evaluation (bench/README.md) with 10,000 customers and 20,000 subscriptions stored. */
const ENTITLEMENT_DATA = { customers: 10_000, subscriptions: 20_000 };

/** Bench settings from the environment (default minimum 0). */
const num = (name: string, fallback: number, min = 0) => envNumber(name, fallback, min);

const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench: ${line}\n`);

function table(head: string[], rows: string[][], alignRight: boolean[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (alignRight[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<number> {
  const seconds = num('BENCH_SECONDS', 10, 1);
  const warmupSeconds = num('BENCH_WARMUP_SECONDS', 3, 0);
  const connections = num('BENCH_CONNECTIONS', 50, 1);
  const only = (process.env.BENCH_ONLY ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const serviceNodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const sandboxNodeArgs = (process.env.BENCH_SANDBOX_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const serverUrl = process.env.DATABASE_URL || undefined;
  const subscriptionSeeds = num('BENCH_SUBSCRIPTION_SEEDS', 300, 1);

  const stack = await startStack({ root: ROOT, bare: true, serviceNodeArgs, sandboxNodeArgs, note });
  const { service, sandbox, serviceUrl, dbLabel } = stack;
  const bare = stack.bare!;
  const bareUrl = stack.bareUrl!;
  const adminToken = stack.adminToken;

  // The merchant (no rate limit in the way) and its catalog, through the REST API.
  const merchant = await createMerchant(serviceUrl, adminToken, {
    name: 'Bench merchant',
    reporting_currency: CATALOG.currencies[0],
    rate_limit_per_second: 1_000_000,
  });
  const seedStart = Date.now();
  await seedCatalog(serviceUrl, merchant.keys.test, CATALOG);
  note(
    `seeded ${CATALOG.products} products x ${CATALOG.plansPerProduct} plans x ${CATALOG.currencies.length} prices in ${Date.now() - seedStart} ms`,
  );

  const { schema, source } = await serviceSchema(serviceUrl, merchant.keys.test, ROOT);
  const productsQuery = graphqlEquivalentOf(schema, 'get', '/products', `first: ${CATALOG.products}`, 'BenchProducts');
  const paymentId = await seedPayments(serviceUrl, merchant.keys.test);
  // Subscriptions: a merchant of their own (the catalog scenarios count the bench merchant's products), a monthly
  // plan whose price one create registers at the sandbox, and active subscriptions to read.
  const { key: subscriptionKey, planId: subscriptionPlanId } = await subscriptionMerchant(
    serviceUrl,
    adminToken,
    'Bench subscriptions',
  );
  const subSeed = Date.now();
  const subscriptionIds = await seedActiveSubscriptions(
    serviceUrl,
    subscriptionKey,
    subscriptionPlanId,
    subscriptionSeeds,
    50,
  );
  note(`seeded ${subscriptionSeeds} active subscriptions (create + mandate checkout) in ${Date.now() - subSeed} ms`);
  const entSeed = Date.now();
  const entitlements = await seedEntitlementBench(serviceUrl, stack.databaseUrl, adminToken, ENTITLEMENT_DATA);
  note(
    `seeded ${ENTITLEMENT_DATA.customers} customers and ${ENTITLEMENT_DATA.subscriptions} subscriptions (SQL) for the entitlement evaluation in ${Date.now() - entSeed} ms`,
  );
  const ctx: BenchContext = {
    bareUrl,
    serviceUrl,
    key: merchant.keys.test,
    paymentId,
    productsQuery,
    catalog: {
      products: CATALOG.products,
      plansPerProduct: CATALOG.plansPerProduct,
      reportingCurrency: CATALOG.currencies[0],
    },
    subscriptionKey,
    subscriptionPlanId,
    subscriptionIds,
    entitlements,
    resolve: await seedResolveBench(serviceUrl, entitlements.key, entitlements.customerIds),
  };
  const all = scenarios(ctx);
  const picks = (name: string) => !only.length || only.some((o) => name.toLowerCase().includes(o));
  const selected = all.filter((s) => picks(s.name));
  // The renewal run (renewals.ts) is no load scenario: it runs after them, for a merchant of its own.
  const runRenewals = picks(RENEWALS);
  // So is the usage and analytics bench (usage.ts): its own merchant and data set, after the renewals.
  const runUsage = picks(USAGE_BENCH);
  // The subscription flow (subscription-flow.ts) takes three requests and two processes per flow: a loop of its own.
  const runFlow = picks(SUBSCRIPTION_FLOW);
  if (!selected.length && !runRenewals && !runUsage && !runFlow)
    throw new Error(`BENCH_ONLY=${process.env.BENCH_ONLY} selects no scenario`);

  // Every scenario (measured or not: checks may compare answers) answers as expected once before measuring.
  const earlier = new Map<string, unknown>();
  for (const s of all) {
    const r = await requestJson(s.url, { method: s.method, headers: s.headers, body: s.body });
    const want = s.expectStatus ?? 200;
    if (r.status !== want)
      throw new Error(`${s.name}: answered ${r.status}, expected ${want}: ${r.text.slice(0, 500)}`);
    try {
      s.verify?.(r.body, earlier);
    } catch (err) {
      throw new Error(`${s.name}: unexpected answer: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    earlier.set(s.name, r.body);
  }

  say('');
  say('Cadence benchmark');
  say(
    `  node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}), load generator: autocannon in this process`,
  );
  say(`  ${connections} connections, ${warmupSeconds}s warm-up + ${seconds}s measured per scenario`);
  say(`  database: ${dbLabel}`);
  say(
    `  catalog: ${CATALOG.products} products x ${CATALOG.plansPerProduct} plans x ${CATALOG.currencies.length} prices (${CATALOG.currencies.join(', ')})`,
  );
  say(`  GraphQL query (fields of the REST route's document, schema from ${source}):`);
  say(`    ${productsQuery}`);
  say(`  service: ${stack.serviceLabel}`);
  const idleRss = rssMbOf(service);
  say(`  service RSS after start-up and seeding: ${idleRss === null ? 'n/a' : `${idleRss.toFixed(0)} MB`}`);
  say('');

  // Measure, one scenario after the other, sampling the RSS of both processes all along.
  const pids: Record<Scenario['process'], Child> = { bare, service };
  const sampler = new RssSampler([bare, service]);
  onCleanup('stop RSS sampler', () => sampler.stop());
  const measured: MeasuredScenario[] = [];
  for (const s of selected) {
    const req = {
      url: s.url,
      method: s.method,
      headers: s.headers ?? {},
      body: s.body === undefined ? undefined : typeof s.body === 'string' ? s.body : JSON.stringify(s.body),
      setupRequest: s.setupRequest,
      rate: s.rate,
    };
    const child = pids[s.process];
    sampler.mark();
    if (warmupSeconds > 0) {
      note(`${s.name}: warm-up ${warmupSeconds}s`);
      await runLoad(req, connections, warmupSeconds);
    }
    note(`${s.name}: measuring ${seconds}s`);
    const cpu0 = cpuMsOf(child);
    const sb0 = cpuMsOf(sandbox);
    const busy0 = machineBusyMs();
    const gen0 = process.cpuUsage();
    const result = await runLoad(req, connections, seconds);
    const cpu1 = cpuMsOf(child);
    const sb1 = cpuMsOf(sandbox);
    const busy1 = machineBusyMs();
    const gen = process.cpuUsage(gen0);
    if (child.hasExited())
      throw new Error(`${child.name} exited during "${s.name}" (${await child.exited}).\n${child.tail()}`);
    const serverCpu = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
    const sandboxCpu = sb0 === null || sb1 === null ? 0 : sb1 - sb0;
    const genCpu = (gen.user + gen.system) / 1000;
    const windowMs = result.seconds * 1000;
    measured.push({
      scenario: s,
      result,
      peakRssMb: sampler.peakSinceMark(child),
      serverCpuPct: serverCpu === null ? null : (serverCpu / (result.seconds * 1000)) * 100,
      serverCpuMsPerRequest: serverCpu === null || !result.requests ? null : serverCpu / result.requests,
      loadgenCpuPct: (genCpu / windowMs) * 100,
      sandboxCpuMsPerRequest: result.requests ? sandboxCpu / result.requests : null,
      otherCpuPct:
        busy0 === null || busy1 === null || serverCpu === null
          ? null
          : Math.max(0, ((busy1 - busy0 - serverCpu - sandboxCpu - genCpu) / windowMs) * 100),
    });
  }
  let servicePeakRssMb = sampler.peak(service);
  sampler.stop();

  let flow: FlowFigures | null = null;
  if (runFlow) {
    flow = await measureSubscriptionFlow(stack, { key: subscriptionKey, planId: subscriptionPlanId }, note);
    if (service.hasExited())
      throw new Error(`service exited during "${SUBSCRIPTION_FLOW}" (${await service.exited}).\n${service.tail()}`);
  }

  let renewals: RenewalFigures | null = null;
  if (runRenewals) {
    note(`${RENEWALS}: seeding, then the advance`);
    renewals = await measureRenewals(stack, note);
    if (service.hasExited())
      throw new Error(`service exited during "${RENEWALS}" (${await service.exited}).\n${service.tail()}`);
    if (renewals.servicePeakRssMb !== null)
      servicePeakRssMb = Math.max(servicePeakRssMb ?? 0, renewals.servicePeakRssMb);
  }

  let usage: UsageFigures | null = null;
  if (runUsage) {
    note(`${USAGE_BENCH}: seeding, then measuring`);
    usage = await measureUsage(stack, note);
    if (service.hasExited())
      throw new Error(`service exited during "${USAGE_BENCH}" (${await service.exited}).\n${service.tail()}`);
  }

  const fmtMs = (x: number) => (Number.isInteger(x) ? `${x}` : x.toFixed(2));
  if (measured.length)
    say(
      table(
        [
          'scenario',
          'req/s (2xx)',
          'p50 ms',
          'p99 ms',
          'mean ms',
          'max ms',
          'errors',
          'non-2xx',
          'peak RSS MB',
          'server CPU',
          'CPU ms/req',
          'sandbox ms/req',
          'loadgen CPU',
          'other CPU',
        ],
        measured.map(
          ({
            scenario,
            result: r,
            peakRssMb,
            serverCpuPct,
            serverCpuMsPerRequest,
            sandboxCpuMsPerRequest,
            loadgenCpuPct,
            otherCpuPct,
          }) => [
            scenario.name,
            r.rps.toFixed(0),
            fmtMs(r.p50),
            fmtMs(r.p99),
            r.mean.toFixed(2),
            fmtMs(r.max),
            String(r.errors + r.timeouts),
            r.non2xx
              ? `${r.non2xx} ${JSON.stringify(Object.fromEntries(Object.entries(r.statusCodes).filter(([c]) => !c.startsWith('2'))))}`
              : '0',
            peakRssMb === null ? 'n/a' : peakRssMb.toFixed(0),
            serverCpuPct === null ? 'n/a' : `${serverCpuPct.toFixed(0)}%`,
            serverCpuMsPerRequest === null ? 'n/a' : serverCpuMsPerRequest.toFixed(2),
            sandboxCpuMsPerRequest === null ? 'n/a' : sandboxCpuMsPerRequest.toFixed(2),
            `${loadgenCpuPct.toFixed(0)}%`,
            otherCpuPct === null ? 'n/a' : `${otherCpuPct.toFixed(0)}%`,
          ],
        ),
        [false, true, true, true, true, true, true, true, true, true, true, true, true, true],
      ),
    );
  const server = `the answering process${stack.apiProcesses > 1 ? ` (the service: its process group, supervisor + ${stack.apiProcesses} API processes, summed; so is its peak RSS)` : ''}`;
  say(
    `  CPU columns are % of one core over the measured window (the machine has ${os.cpus().length}): server = ${server},` +
      '\n  loadgen = autocannon (this process), other = everything else (PostgreSQL, other programs); CPU ms/req = server CPU / requests;' +
      '\n  sandbox ms/req = CPU of the gateway sandbox process (standing in for Stripe) / requests.',
  );
  for (const { scenario, result: r } of measured) {
    if (r.slowest?.length) say(`  ${scenario.name}, slowest 100 ms of due time: ${r.slowest.join('; ')}`);
  }
  say('');
  if (flow) {
    say(`${SUBSCRIPTION_FLOW}:`);
    for (const line of describeSubscriptionFlow(flow)) say(`  ${line}`);
    say('');
  }
  if (renewals) {
    say(`${RENEWALS}:`);
    for (const line of describeRenewals(renewals)) say(`  ${line}`);
    say('');
  }
  if (usage) {
    say(`${USAGE_BENCH}:`);
    for (const line of describeUsage(usage)) say(`  ${line}`);
    for (const c of usageChecks(usage))
      say(`  [${c.pass ? 'PASS' : 'MISS'}] ${c.name}: ${c.value} (target ${c.target})`);
    say('');
  }

  const byName = new Map(measured.map((m) => [m.scenario.name, m]));
  const outcomes = checks.map((c) => ({
    check: c,
    outcome: c.evaluate({ byName, servicePeakRssMb, renewals, subscriptionFlow: flow }),
  }));
  say(
    table(
      ['target', 'value', 'goal', 'result'],
      outcomes.map(({ check, outcome }) => [
        check.name,
        outcome?.value ?? '-',
        check.target,
        outcome ? (outcome.pass ? 'PASS' : 'MISS') : 'skipped',
      ]),
      [false, true, false, false],
    ),
  );
  const misses = outcomes.filter((o) => o.outcome && !o.outcome.pass).length;
  say('');
  say(misses ? `${misses} target(s) missed (informational: the exit code stays 0).` : 'All targets met.');

  if (process.env.BENCH_JSON) {
    const out = {
      at: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      connections,
      seconds,
      warmupSeconds,
      database: serverUrl ? 'DATABASE_URL' : 'embedded',
      apiProcesses: stack.apiProcesses,
      serviceIdleRssMb: idleRss,
      servicePeakRssMb,
      scenarios: measured.map((m) => ({
        name: m.scenario.name,
        method: m.scenario.method,
        url: m.scenario.url,
        peakRssMb: m.peakRssMb,
        serverCpuPct: m.serverCpuPct,
        serverCpuMsPerRequest: m.serverCpuMsPerRequest,
        sandboxCpuMsPerRequest: m.sandboxCpuMsPerRequest,
        loadgenCpuPct: m.loadgenCpuPct,
        otherCpuPct: m.otherCpuPct,
        ...m.result,
      })),
      subscriptionFlow: flow,
      renewals,
      usage: usage && { ...usage, checks: usageChecks(usage) },
      checks: outcomes.map(({ check, outcome }) => ({
        name: check.name,
        target: check.target,
        ...(outcome ?? { skipped: true }),
      })),
    };
    fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(out, null, 2));
    note(`figures written to ${process.env.BENCH_JSON}`);
  }
  // A wrong analytics or usage answer is a failure, not a figure.
  return usage?.problems.length ? 1 : 0;
}

runBench(main, note);

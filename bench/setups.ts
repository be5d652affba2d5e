import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BARE, BARE_BESIDE_ENTITLEMENTS, ENTITLEMENTS } from './scenarios';

/**
 * `npm run bench`: the whole bench (run.ts) once per database setup, then the figures side by side. The setups: the
 * embedded PostgreSQL a new user gets from `npm start` (always), and, when DATABASE_URL is set, that server (as
 * production runs). Each run prints its own tables as it goes; this adds the comparison, every throughput beside bare
 * express of the same run and every ingestion rate beside the raw INSERT rate of the same server.
 *
 * BENCH_SETUPS=embedded or BENCH_SETUPS=database_url runs one of them; the other variables are run.ts's.
 */

interface Scenario {
  name: string;
  rps: number;
  p99: number;
  serverCpuMsPerRequest: number | null;
}
interface Figures {
  database: string;
  scenarios: Scenario[];
  subscriptionFlow: { flowsPerSecond: number; p99: number; failures: number } | null;
  usage: {
    rawOne: { rowsPerSecond: number } | null;
    rawMulti: { rowsPerSecond: number } | null;
    single: { eventsPerSecond: number } | null;
    batch: { eventsPerSecond: number } | null;
    checks: { name: string; pass: boolean }[];
  } | null;
  checks: { name: string; value?: string; pass?: boolean; skipped?: boolean }[];
}

const say = (line = '') => process.stdout.write(`${line}\n`);

function runOnce(setup: string, jsonFile: string): Promise<number> {
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_JSON: jsonFile };
  if (setup === 'embedded') delete env.DATABASE_URL;
  say(`\n=== setup: ${label(setup)} ===`);
  const child = spawn(process.execPath, [path.join(__dirname, 'run.js')], { env, stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

const label = (setup: string) =>
  setup === 'embedded' ? 'embedded PostgreSQL (npm start, DATABASE_URL unset)' : 'DATABASE_URL';

function rows(f: Figures): [string, string][] {
  const bare = f.scenarios.find((s) => s.name === BARE);
  const out: [string, string][] = [];
  if (bare) out.push(['bare express (HTTP floor of this run)', `${bare.rps.toFixed(0)} req/s`]);
  // The evaluations are set beside both readings of bare express, the second taken right after them.
  const beside = f.scenarios.find((s) => s.name === BARE_BESIDE_ENTITLEMENTS);
  for (const s of f.scenarios) {
    if (s.name === BARE) continue;
    const base = bare && beside && s.name === ENTITLEMENTS ? (bare.rps + beside.rps) / 2 : bare?.rps;
    const ratio = base && !/ at \d+\/s$/.test(s.name) ? `, ${(s.rps / base).toFixed(2)}x bare express` : '';
    out.push([s.name, `${s.rps.toFixed(0)} req/s${ratio}, p99 ${s.p99} ms`]);
  }
  if (f.subscriptionFlow) {
    const ratio = bare ? `, ${(f.subscriptionFlow.flowsPerSecond / bare.rps).toFixed(3)}x bare express` : '';
    out.push([
      'subscription create + checkout + read',
      `${f.subscriptionFlow.flowsPerSecond.toFixed(1)} flows/s${ratio}, p99 ${f.subscriptionFlow.p99.toFixed(0)} ms`,
    ]);
  }
  const u = f.usage;
  if (u?.rawOne) out.push(['raw one-row INSERT (same server)', `${u.rawOne.rowsPerSecond.toFixed(0)} rows/s`]);
  if (u?.rawMulti) out.push(['raw 1,000-row INSERT (same server)', `${u.rawMulti.rowsPerSecond.toFixed(0)} rows/s`]);
  const toRaw = (eps: number) =>
    [
      u?.rawOne ? `${(eps / u.rawOne.rowsPerSecond).toFixed(2)}x raw one-row` : '',
      u?.rawMulti ? `${(eps / u.rawMulti.rowsPerSecond).toFixed(2)}x raw 1,000-row` : '',
    ]
      .filter(Boolean)
      .join(', ');
  if (u?.single)
    out.push([
      'single usage events',
      `${u.single.eventsPerSecond.toFixed(0)} events/s, ${toRaw(u.single.eventsPerSecond)}`,
    ]);
  if (u?.batch)
    out.push(['usage batches', `${u.batch.eventsPerSecond.toFixed(0)} events/s, ${toRaw(u.batch.eventsPerSecond)}`]);
  return out;
}

async function main(): Promise<number> {
  const wanted = (process.env.BENCH_SETUPS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const setups = wanted.length ? wanted : ['embedded', ...(process.env.DATABASE_URL ? ['database_url'] : [])];
  for (const s of setups) {
    if (s !== 'embedded' && s !== 'database_url') throw new Error(`BENCH_SETUPS: unknown setup "${s}"`);
    if (s === 'database_url' && !process.env.DATABASE_URL)
      throw new Error('BENCH_SETUPS=database_url needs DATABASE_URL');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-bench-setups-'));
  const results: { setup: string; figures: Figures | null; code: number }[] = [];
  try {
    for (const setup of setups) {
      const file = path.join(dir, `${setup}.json`);
      const code = await runOnce(setup, file);
      const figures = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Figures) : null;
      results.push({ setup, figures, code });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  say('\n=== both setups ===');
  if (!process.env.DATABASE_URL)
    say('(DATABASE_URL unset: only the embedded setup ran; set it to compare with a server of your own)');
  for (const { setup, figures, code } of results) {
    say(`\n${label(setup)}${code ? ` (exit code ${code})` : ''}:`);
    if (!figures) {
      say('  no figures');
      continue;
    }
    const r = rows(figures);
    const width = Math.max(...r.map(([k]) => k.length));
    for (const [k, v] of r) say(`  ${k.padEnd(width)}  ${v}`);
    const missed = [...figures.checks, ...(figures.usage?.checks ?? [])]
      .filter((c) => c.pass === false)
      .map((c) => c.name);
    say(`  targets missed: ${missed.length ? missed.join('; ') : 'none'}`);
  }
  return results.some((r) => r.code !== 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);

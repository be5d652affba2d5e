import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { envNumber } from './lib/env';
import { freePort, runBench, startChild, waitForHttp } from './lib/processes';

/**
 * `npm run bench:start`: how long `npm start` takes from the command to a ready service (`/readyz` answering 200), on
 * the embedded database with the sandbox, as a developer restarts it: the first start (new data folder: initdb,
 * migrations, the demo merchant), restarts with an up-to-date build, and a restart after one source file changed
 * (scripts/build-changed.js recompiles it). Target: a restart with an up-to-date build ready in under 5 s.
 *
 * Environment: BENCH_START_RUNS restarts measured (default 5).
 */
const ROOT = path.resolve(__dirname, '..', '..');
const say = (line = '') => process.stdout.write(`${line}\n`);
const note = (line: string) => process.stderr.write(`bench: ${line}\n`);
const TARGET_MS = 5_000;

async function timedStart(dataDir: string, log: string): Promise<number> {
  const npm = process.env.npm_execpath;
  if (!npm) throw new Error('run through npm (npm run bench:start): npm_execpath is unset');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    SANDBOX_PORT: String(await freePort()),
    DATA_DIR: dataDir,
  };
  delete env.DATABASE_URL;
  const started = Date.now();
  const child = startChild('npm start', [npm, 'start'], env, log, { group: true });
  try {
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, child, 120_000);
    return Date.now() - started;
  } finally {
    await child.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<number> {
  const runs = envNumber('BENCH_START_RUNS', 5, 1);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-start-'));
  fs.chmodSync(dir, 0o755); // as root, the embedded server runs as postgres, which must reach DATA_DIR
  const dataDir = path.join(dir, 'data');
  const log = path.join(dir, 'start.log');
  try {
    note(`${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}; logs in ${log}`);
    const first = await timedStart(dataDir, log);
    const warm: number[] = [];
    for (let i = 0; i < runs; i++) warm.push(await timedStart(dataDir, log));
    // One source file changed: its compiled file is rebuilt before the start.
    const changed = path.join(ROOT, 'src/main.ts');
    const later = new Date(Date.now() + 1_000);
    const before = fs.statSync(changed);
    fs.utimesSync(changed, before.atime, later);
    const afterChange = await timedStart(dataDir, log);
    fs.utimesSync(changed, before.atime, before.mtime);

    say('npm start to /readyz 200 (embedded PostgreSQL, sandbox, demo merchant)');
    say(`  ${'first start (new data folder)'.padEnd(38)}${seconds(first)}`);
    say(
      `  ${`restart, build up to date (x${runs})`.padEnd(38)}median ${seconds(median(warm))}, max ${seconds(Math.max(...warm))}` +
        `  target < ${seconds(TARGET_MS)}: ${Math.max(...warm) < TARGET_MS ? 'ok' : 'MISS'}`,
    );
    say(`  ${'restart, one source file changed'.padEnd(38)}${seconds(afterChange)}`);
    return 0;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, note);

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/core/embedded-postgres';
import { API_NODE_FLAGS, missingApiFlags } from '../../src/core/heap';
import { request, sleep } from '../harness';

const ROOT = path.join(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'main.js'); // built by `npm test`

/** The node flags `npm start` runs the service with (package.json's start script). */
function startFlags(): string[] {
  const script = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  const m = /\bnode ((?:--[\w-]+(?:=\S+)? )*)dist\/src\/main\.js$/.exec(script);
  if (!m) throw new Error(`unexpected start script: ${script}`);
  return m[1].split(' ').filter(Boolean);
}

it("npm start runs the service with the API processes' node flags", () => {
  expect(startFlags()).toEqual(expect.arrayContaining([...API_NODE_FLAGS]));
  expect(missingApiFlags(startFlags())).toEqual([]);
  expect(missingApiFlags([])).toEqual([...API_NODE_FLAGS]);
});

// `npm start` on a fresh machine: embedded PostgreSQL, demo merchant connected to the sandbox, and a clean stop.
it('starts on the embedded database, serves the demo merchant, and shuts down gracefully', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-start-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  delete env.NODE_ENV; // as users run it (libraries change their signal handling under NODE_ENV=test)
  const child = spawn(process.execPath, [...startFlags(), MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!/test key\s+sk_test_\w+/.test(out) && child.exitCode === null && Date.now() < deadline) await sleep(200);
    const url = /Cadence is running at (\S+)/.exec(out)?.[1];
    const key = /test key\s+(sk_test_\w+)/.exec(out)?.[1];
    if (!url || !key) throw new Error(`npm start printed no URL and demo key (exit code ${child.exitCode}):\n${out}`);
    expect((await request(`${url}/readyz`)).status).toBe(200);
    const conns = await request(`${url}/v1/providers/connections`, { key });
    expect(conns.status).toBe(200);
    expect(conns.body.data.map((c: { provider: string }) => c.provider).sort()).toEqual(['razorpay', 'stripe']);
    expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(true);
    expect(out).not.toMatch(/started without/); // the flags are in effect

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The embedded server was stopped with the service.
    expect(fs.existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);

// As root the embedded server runs as the `postgres` user: a DATA_DIR it cannot reach gets a clear message. A regular
// user's server runs as that user, so the case exists only as root (CI's machines run as root).
if (process.getuid?.() === 0)
  it('explains a DATA_DIR the postgres user cannot reach', async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-private-'));
    fs.chmodSync(parent, 0o700);
    try {
      await expect(startEmbeddedPostgres(path.join(parent, 'data'))).rejects.toThrow(/cannot enter .*Set DATA_DIR/);
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

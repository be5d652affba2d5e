#!/usr/bin/env node
'use strict';
/**
 * The build `npm start`, `npm run worker` and `npm run sandbox` run: compiles, file by file with swc (the compiler the
 * tests already run the code through, .swcrc), only the sources of the service whose compiled file in dist/ is missing
 * or older, and says so while it does. An up-to-date tree costs a directory walk. Types are not checked here: that is
 * `npm run typecheck` / `npm run build` (tsc), which CI runs. See docs/operations.md.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const OUT = path.join(ROOT, 'dist');
/** What the service's processes load (tests, benchmarks and their harnesses are built by `npm run build`). */
const SOURCES = ['src', 'rest-shim', 'mikro-orm.config.ts'];

function* tsFiles(entry) {
  const full = path.join(ROOT, entry);
  if (!fs.existsSync(full)) return;
  const stat = fs.statSync(full);
  if (stat.isFile()) {
    if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) yield entry;
    return;
  }
  for (const name of fs.readdirSync(full)) yield* tsFiles(path.join(entry, name));
}

function stale(rel) {
  const out = path.join(OUT, rel.replace(/\.ts$/, '.js'));
  try {
    return fs.statSync(out).mtimeMs < fs.statSync(path.join(ROOT, rel)).mtimeMs;
  } catch {
    return true; // never built
  }
}

/** Compiles what is stale, saying so on `out` (stdout for `npm start`; the CLI passes stderr to keep stdout its own). */
async function buildChanged(out = process.stdout) {
  const started = Date.now();
  const todo = SOURCES.flatMap((entry) => [...tsFiles(entry)]).filter(stale);
  if (todo.length === 0) return;
  out.write(`Building ${todo.length} changed file${todo.length === 1 ? '' : 's'} into dist/ ...`);
  const swc = require('@swc/core');
  const options = JSON.parse(fs.readFileSync(path.join(ROOT, '.swcrc'), 'utf8'));
  delete options.$schema;
  for (const rel of todo) {
    const out = path.join(OUT, rel.replace(/\.ts$/, '.js'));
    const { code } = await swc.transformFile(path.join(ROOT, rel), { ...options, swcrc: false, filename: rel });
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, code);
  }
  out.write(` done in ${Date.now() - started} ms (types: npm run typecheck)\n`);
}

/** Newest modification time of the files under `dir` (0 when there are none). */
function newest(dir) {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return latest;
}

/**
 * The dashboard and the portal (web/, docs/dashboard.md): rebuilt by Vite when a source under web/ is newer than
 * the last build's pages in dist/web. Like the service's build, it checks no types (`npm run build` does).
 */
async function buildWebChanged(out = process.stdout) {
  const page = path.join(OUT, 'web', 'dashboard', 'index.html');
  let built = 0;
  try {
    built = fs.statSync(page).mtimeMs;
  } catch {
    // never built
  }
  if (built >= newest(path.join(ROOT, 'web'))) return;
  const started = Date.now();
  out.write('Building the dashboard and the portal into dist/web ...');
  const { build } = await import('vite');
  await build({ configFile: path.join(ROOT, 'web', 'vite.config.mts'), logLevel: 'error' });
  out.write(` done in ${Date.now() - started} ms\n`);
}

module.exports = { buildChanged, buildWebChanged };

if (require.main === module) {
  // --web: also the dashboard and the portal (npm start; the worker and the sandbox serve no pages).
  buildChanged()
    .then(() => (process.argv.includes('--web') ? buildWebChanged() : undefined))
    .catch((err) => {
      process.stdout.write('\n');
      process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
      process.exit(1);
    });
}

import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

/**
 * What the dashboard and the portal ship (dist/web, built by Vite): every JavaScript file's gzipped size, and the
 * part the dashboard's first screen loads (its entry script and the modules it preloads). `npm run build` prints it
 * (node dist/bench/lib/web-size.js), `npm run bench:dashboard` with its timings. Target: all of it < 350 KB gzipped.
 */
export const WEB_JS_TARGET_KB = 350;

export interface WebSize {
  /** Every .js file under dist/web/assets, gzipped, in KB. */
  totalJsKb: number;
  /** The dashboard's first load (entry + modulepreload), gzipped, in KB. */
  dashboardFirstLoadKb: number;
  portalFirstLoadKb: number;
  files: number;
}

const gzipKb = (file: string) => zlib.gzipSync(fs.readFileSync(file), { level: 9 }).length / 1024;

/** Scripts a built page loads before it runs: `<script src>` and `<link rel="modulepreload" href>` under /web/. */
function firstLoad(dir: string, page: string): number {
  const html = fs.readFileSync(path.join(dir, page, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/(?:src|href)="\/web\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  return [...new Set(refs)].reduce((kb, rel) => kb + gzipKb(path.join(dir, rel)), 0);
}

export function webSize(root: string): WebSize {
  const dir = path.join(root, 'dist', 'web');
  const assets = path.join(dir, 'assets');
  if (!fs.existsSync(assets)) throw new Error(`${assets} missing: npm run build builds the dashboard`);
  const js = fs.readdirSync(assets).filter((f) => f.endsWith('.js'));
  return {
    totalJsKb: js.reduce((kb, f) => kb + gzipKb(path.join(assets, f)), 0),
    dashboardFirstLoadKb: firstLoad(dir, 'dashboard'),
    portalFirstLoadKb: firstLoad(dir, 'portal'),
    files: js.length,
  };
}

export const describeWebSize = (s: WebSize) =>
  `web: ${s.totalJsKb.toFixed(1)} KB of JavaScript gzipped in ${s.files} files (target < ${WEB_JS_TARGET_KB} KB: ` +
  `${s.totalJsKb < WEB_JS_TARGET_KB ? 'ok' : 'MISS'}); first load: dashboard ${s.dashboardFirstLoadKb.toFixed(1)} KB, ` +
  `portal ${s.portalFirstLoadKb.toFixed(1)} KB`;

if (require.main === module) {
  process.stdout.write(`${describeWebSize(webSize(path.resolve(__dirname, '..', '..', '..')))}\n`);
}

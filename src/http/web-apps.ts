import fs from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';
import { routeLabel } from './route-label';

/**
 * The merchant dashboard (/dashboard) and the customer portal (/portal): static pages built by Vite from web/ into
 * dist/web (`npm run build`, or `npm start`'s build of what changed; docs/dashboard.md). Their assets are served
 * under /web/ with long caching (file names carry a content hash); the pages themselves are not cached, because the
 * dashboard's carries the demo merchant's test key in the demo setting. Both talk to the service only through
 * /graphql, with the merchant's key or the portal session's token.
 */

/** dist/web at the repository root, found from the sources (tests) and from dist/ alike. */
export function webBuildDir(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'web');
    if (path.dirname(dir) === dir) throw new Error(`web apps: package.json not found above ${__dirname}`);
  }
}

const DEMO_META = '<meta name="cadence-demo-key" content="" />';
const escapeAttr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** `demoKey`: read per request (the demo merchant is made after the server starts listening). */
export function webApps(demoKey: () => string | null): Router {
  const dir = webBuildDir();
  const router = Router();
  router.use(
    '/web',
    routeLabel('/web/*'),
    express.static(dir, { index: false, immutable: true, maxAge: '365d', fallthrough: false }),
  );

  const pages = new Map<string, string>();
  const page = (name: 'dashboard' | 'portal'): string | null => {
    let html = pages.get(name);
    if (html === undefined) {
      try {
        html = fs.readFileSync(path.join(dir, name, 'index.html'), 'utf8');
      } catch {
        return null; // not built: answered below, and read again on the next request
      }
      pages.set(name, html);
    }
    return html;
  };
  const send = (name: 'dashboard' | 'portal', key: string | null) => (_req: express.Request, res: express.Response) => {
    const html = page(name);
    res.set('Cache-Control', 'no-store');
    if (!html) {
      res.status(503).type('text').send(`The ${name} is not built: run npm run build (npm start builds it too).`);
      return;
    }
    res
      .type('html')
      .send(key ? html.replace(DEMO_META, `<meta name="cadence-demo-key" content="${escapeAttr(key)}" />`) : html);
  };
  // Client-side routes of the dashboard (/dashboard/subscriptions/...) all answer the same page.
  router.get(['/dashboard', '/dashboard/{*rest}'], routeLabel('/dashboard/*'), (req, res) =>
    send('dashboard', demoKey())(req, res),
  );
  router.get('/portal', send('portal', null));
  return router;
}

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The merchant dashboard and the customer portal (docs/dashboard.md): two pages of one Vite build, served by the
 * service from dist/web (src/http/web-apps.ts) under /web/, with /dashboard and /portal answering their pages.
 * Everything is bundled: no CDN, so both work offline.
 */
const here = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: here,
  base: '/web/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: path.resolve(here, '../dist/web'),
    emptyOutDir: true,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // Mantine marks its modules "use client" for React server components; a client bundle has no use for it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      input: {
        dashboard: path.resolve(here, 'dashboard/index.html'),
        portal: path.resolve(here, 'portal/index.html'),
      },
    },
  },
  logLevel: 'warn',
});

import path from 'node:path';
import { defineConfig } from 'vite';

/**
 * The merchant dashboard and the customer portal (docs/dashboard.md): two pages of one Vite build, served by the
 * service from dist/web (src/http/web-apps.ts) under /web/, with /dashboard and /portal answering their pages.
 * Everything is bundled: no CDN, so both work offline.
 */
export default defineConfig({
  root: __dirname,
  base: '/web/',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: path.resolve(__dirname, '../dist/web'),
    emptyOutDir: true,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1500,
    rollupOptions: {
      // Mantine marks its modules "use client" for React server components; a client bundle has no use for it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
      input: {
        dashboard: path.resolve(__dirname, 'dashboard/index.html'),
        portal: path.resolve(__dirname, 'portal/index.html'),
      },
    },
  },
  logLevel: 'warn',
});

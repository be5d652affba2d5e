import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/core/embedded-postgres';

/**
 * Tests run on real PostgreSQL: the server named by DATABASE_URL (CI: the machine's), or, without it, an embedded
 * PostgreSQL started here for the run. Each test file then creates its own fresh database on that server.
 */
export default async function globalSetup() {
  process.env.NODE_ENV = 'test';
  if (process.env.DATABASE_URL) {
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = '/postgres';
    process.env.TEST_PG_ADMIN_URL = u.toString();
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cadence-test-pg-'));
  const db = await startEmbeddedPostgres(dir, 'postgres', { durable: false });
  process.env.TEST_PG_ADMIN_URL = db.url;
  (globalThis as { __cadenceEmbedded?: { stop(): Promise<void>; dir: string } }).__cadenceEmbedded = {
    stop: db.stop,
    dir,
  };
}

import crypto from 'node:crypto';
import { Client } from 'pg';
import { ensureDatabase } from '../../src/core/db';

export interface FreshDatabase {
  url: string;
  name: string;
  /** Drops it, ending any connection still open. */
  drop(): Promise<void>;
}

/**
 * An empty database of its own on the test PostgreSQL (global setup names the server), or on the server of `adminUrl`;
 * the caller migrates it.
 */
export async function freshDatabase(
  prefix = 'cadence_test',
  adminUrl = process.env.TEST_PG_ADMIN_URL,
): Promise<FreshDatabase> {
  if (!adminUrl) throw new Error('TEST_PG_ADMIN_URL missing: run the tests through jest (global setup)');
  const name = `${prefix}_${crypto.randomBytes(6).toString('hex')}`;
  await ensureDatabase(adminUrl, name);
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    async drop() {
      const c = new Client({ connectionString: adminUrl });
      await c.connect();
      try {
        await c.query(`drop database if exists "${name}" with (force)`);
      } finally {
        await c.end();
      }
    },
  };
}

import { loadConfig } from '../../src/config';
import { connectionBudget, replicaServer, sessionServer } from '../../src/core/pool';

/** The start-up connection budget, per server (docs/production.md, "Connections and pool sizing"). */

it('reads as before on one server', () => {
  const b = connectionBudget([
    { what: 'pool', n: 10 },
    { what: 'LISTEN', n: 1 },
    { what: 'sandbox', n: 0 },
  ]);
  expect(b).toEqual({ total: 11, byServer: { DATABASE_URL: 11 }, text: 'at most 11 connections (pool 10, LISTEN 1)' });
});

it("counts the replica's pool and the session connections on their own servers", () => {
  const config = loadConfig({
    DATABASE_URL: 'postgresql://u@pooler:6432/cadence',
    DATABASE_POOL_MODE: 'transaction',
    DATABASE_SESSION_URL: 'postgresql://u@db:5432/cadence',
    DATABASE_READ_URL: 'postgresql://u@replica:5432/cadence',
  });
  const b = connectionBudget([
    { what: 'pool', n: 10 },
    { what: 'LISTEN', n: 1, on: sessionServer(config) },
    { what: 'test-clock locks', n: 2, on: sessionServer(config) },
    { what: 'reports', n: 4, on: replicaServer(config) },
  ]);
  expect(b.byServer).toEqual({ DATABASE_URL: 10, DATABASE_SESSION_URL: 3, DATABASE_READ_URL: 4 });
  expect(b.total).toBe(10);
  expect(b.text).toBe(
    'at most 10 connections (pool 10); DATABASE_SESSION_URL: at most 3 (LISTEN 1, test-clock locks 2); ' +
      'DATABASE_READ_URL: at most 4 (reports 4)',
  );
});

it('counts a URL that is DATABASE_URL itself as DATABASE_URL', () => {
  const url = 'postgresql://u@db:5432/cadence';
  const config = loadConfig({ DATABASE_URL: url, DATABASE_SESSION_URL: url, DATABASE_READ_URL: url });
  expect(sessionServer(config)).toBe('DATABASE_URL');
  expect(replicaServer(config)).toBe('DATABASE_URL');
  expect(sessionServer(loadConfig({ DATABASE_URL: url }))).toBe('DATABASE_URL');
  expect(replicaServer(loadConfig({ DATABASE_URL: url }))).toBe('DATABASE_URL');
});

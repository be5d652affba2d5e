import { systemQuery } from '../sql';
import { withClient } from '../pool';
import type { ServicePool } from '../orm-pool';

/**
 * The shared limits' statements on PostgreSQL (docs/operations.md, "Shared limits"). The rate counters' own
 * statements are rate-limiter-flexible's (RateLimiterPostgres, on the same `rate_limits` table); these are the
 * WebSocket leases and the pruning of both tables. Both tables are unlogged (their migration says why).
 */

/** Advisory lock space of one key's leases: a count and an insert are one step across processes. */
const LEASE_LOCK = 727021;

/** Takes a lease `id` for a new socket of `apiKeyId` unless it already holds `max` live ones; whether it did. */
export async function acquireLease(
  pool: ServicePool,
  lease: { id: string; apiKeyId: string; max: number; seconds: number },
): Promise<boolean> {
  return withClient(pool, async (c) => {
    await systemQuery(c, 'begin');
    try {
      await systemQuery(c, 'select pg_advisory_xact_lock($1, hashtext($2))', [LEASE_LOCK, lease.apiKeyId]);
      // Read committed: this statement's snapshot is taken after the lock, so it counts every lease committed before.
      const taken = await systemQuery(
        c,
        `insert into websocket_leases (id, api_key_id, expires_at)
         select $1, $2, now() + make_interval(secs => $4)
         where (select count(*) from websocket_leases where api_key_id = $2 and expires_at > now()) < $3
         returning id`,
        [lease.id, lease.apiKeyId, lease.max, lease.seconds],
      );
      await systemQuery(c, 'commit');
      return taken.length === 1;
    } catch (err) {
      await systemQuery(c, 'rollback').catch(() => undefined);
      throw err;
    }
  });
}

/** Extends the process's leases (and writes back any the table lost: its sockets are still open). */
export async function renewLeases(
  pool: ServicePool,
  leases: { id: string; apiKeyId: string }[],
  seconds: number,
): Promise<void> {
  if (!leases.length) return;
  await systemQuery(
    pool,
    `insert into websocket_leases (id, api_key_id, expires_at)
     select id, api_key_id, now() + make_interval(secs => $3) from unnest($1::uuid[], $2::uuid[]) as l(id, api_key_id)
     on conflict (id) do update set expires_at = excluded.expires_at`,
    [leases.map((l) => l.id), leases.map((l) => l.apiKeyId), seconds],
  );
}

export async function releaseLeases(pool: ServicePool, ids: string[]): Promise<void> {
  if (ids.length) await systemQuery(pool, 'delete from websocket_leases where id = any($1::uuid[])', [ids]);
}

/** Drops counters whose window ended over an hour ago (`expire` is in ms) and leases expired for a minute. */
export async function pruneLimits(pool: ServicePool): Promise<void> {
  await systemQuery(pool, 'delete from rate_limits where expire < $1', [Date.now() - 3_600_000]);
  await systemQuery(pool, `delete from websocket_leases where expires_at < now() - interval '1 minute'`);
}

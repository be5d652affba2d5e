import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { Mode } from '../../core/entity';
import type { ServicePool } from '../../core/orm-pool';
import { Db, systemQuery, tenantQueryAs, tenantRows } from '../../core/sql';
import { GatewayCommand } from './gateway-command.entities';

/**
 * The statements of gateway commands the ORM does not write: the worker's claim across tenants (a system statement
 * by design, like webhook delivery's: one worker serves every merchant, and what it touches after a claim is named by
 * the primary key and the claim's token) and the wake-up.
 */

/** A channel for waking command workers early (they otherwise look every WORKER_POLL_MS). */
export const GATEWAY_COMMAND_CHANNEL = 'cadence_gateway_commands';

/** A claimed command, with what its run needs. */
export interface CommandJob {
  id: string;
  merchant_id: string;
  mode: Mode;
  action: string;
  /** null: a command of another outside service (GatewayCommands.registerService). */
  connection_id: string | null;
  subscription_id: string | null;
  payment_id: string | null;
  invoice_id: string | null;
  args: Record<string, unknown>;
  idempotency_key: string;
  /** Attempts including this one. */
  attempts: number;
  give_up_at: Date;
  lock_token: string;
}

/**
 * Claims up to `limit` pending commands due now, skipping rows another claim holds; with `ids`, those of them that no
 * run has claimed yet, due or not (the process that wrote them runs them at once). Each is leased by moving its
 * `next_attempt_at` `leaseMs` ahead, so a run that dies is claimed again then, and counts an attempt.
 */
export async function claimCommands(
  db: ServicePool,
  limit: number,
  leaseMs: number,
  ids?: string[],
): Promise<CommandJob[]> {
  if (limit <= 0 || (ids && !ids.length)) return [];
  const token = uuidv7();
  const which = ids
    ? 'c.id = any($4::uuid[]) and c.attempts = 0 and c.lock_token is null'
    : 'c.next_attempt_at <= now()';
  const rows = await systemQuery<Omit<CommandJob, 'lock_token'>>(
    db,
    `with due as (
       select c.id from gateway_commands c
       where c.status = 'pending' and ${which}
       order by c.next_attempt_at limit $1
       for update of c skip locked
     )
     update gateway_commands c set next_attempt_at = now() + $2 * interval '1 millisecond', lock_token = $3,
       attempts = c.attempts + 1
     from due where c.id = due.id
     returning c.id, c.merchant_id, c.mode, c.action, c.connection_id, c.subscription_id, c.payment_id, c.invoice_id,
       c.args, c.idempotency_key, c.attempts, c.give_up_at`,
    ids ? [limit, leaseMs, token, ids] : [limit, leaseMs, token],
  );
  return rows.map((row) => ({ ...row, lock_token: token }));
}

/** The earliest time a merchant's held test-mode command is held until, at or before `until` (test-clock advances). */
export async function nextHeldAt(db: ServicePool, merchantId: string, until: Date): Promise<Date | null> {
  const [row] = await tenantQueryAs<{ at: Date | null }>(
    db,
    { merchantId, mode: Mode.TEST },
    `select min(c.not_before) as at from gateway_commands c where {tenant:c} and c.status = 'pending'
       and c.not_before is not null and c.attempts = 0 and c.lock_token is null and c.not_before <= ?`,
    [until],
  );
  return row?.at ? new Date(row.at) : null;
}

/** A merchant's held test-mode commands not yet tried whose hold ends by `at`, earliest first. */
export async function heldDue(db: ServicePool, merchantId: string, at: Date, limit: number): Promise<string[]> {
  const rows = await tenantQueryAs<{ id: string }>(
    db,
    { merchantId, mode: Mode.TEST },
    `select c.id from gateway_commands c where {tenant:c} and c.status = 'pending' and c.not_before is not null
       and c.attempts = 0 and c.lock_token is null and c.not_before <= ? order by c.not_before, c.id limit ?`,
    [at, limit],
  );
  return rows.map((r) => r.id);
}

/** How many of a subscription's or payment's commands its `gatewayCommands` field shows. */
export const LATEST_COMMANDS = 20;

/** The latest LATEST_COMMANDS commands of each subscription (or payment) of `ids`, newest first, of the tenant. */
export function latestCommandsOf(
  em: EntityManager,
  column: 'subscription_id' | 'payment_id',
  ids: readonly string[],
): Promise<GatewayCommand[]> {
  return tenantRows(
    em,
    GatewayCommand,
    `id in (select id from (select id, row_number() over (partition by ${column} order by id desc) as n
       from gateway_commands where ${column} = any(?::uuid[])) latest where n <= ${LATEST_COMMANDS})`,
    [ids],
    { orderBy: 'id desc' },
  );
}

/**
 * Commands waiting for the worker and commands given up, across tenants, for GET /metrics (docs/production.md). Pending
 * reads the due index; failed the partial index gateway_commands_failed_index: both stay small however long history is.
 */
export async function commandQueueDepth(db: Db): Promise<{ pending: number; failed: number }> {
  const [row] = await systemQuery<{ pending: number; failed: number }>(
    db,
    `select (select count(*) from gateway_commands where status = 'pending')::int as pending,
            (select count(*) from gateway_commands where status = 'failed')::int as failed`,
  );
  return { pending: row?.pending ?? 0, failed: row?.failed ?? 0 };
}

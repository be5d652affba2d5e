import { LockMode } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { ServicePool } from '../../core/orm-pool';
import { v7 as uuidv7 } from 'uuid';
import { tenantEntityManager } from '../../core/context';
import { Mode } from '../../core/entity';
import { withClient } from '../../core/pool';
import { Db, notify, systemQuery, tenantQueryAs } from '../../core/sql';
import { PRUNE_GATEWAY_EVENTS } from '../payments';
import { testClockSql } from '../test-clock';
import { ATTEMPT_LOG_MAX, DeliveryStatus } from './delivery.policy';
import { WebhookEndpoint } from './webhook.entities';

/**
 * Every statement of outbound delivery: webhook_deliveries, the health columns of webhook_endpoints, the fan-out of
 * outbox_events, and history retention. The worker's statements (fan-out, claim, outcome, health) are system
 * statements (core/sql.ts `systemQuery`) by design: one worker serves every merchant, and the rows it touches after a
 * claim are named by the primary key or lease token the claim gave it. Statements for one merchant's test mode
 * (test-clock advances) are tenant statements (`tenantQueryAs`, `{tenant}`). Endpoint CRUD and the delivery log go
 * through the ORM and its tenant filter (webhook.service.ts).
 */

/** NOTIFYed when outbox events are written (a trigger on outbox_events) and when a delivery is due now. */
export const WEBHOOK_CHANNEL = 'cadence_webhooks';

/** A claimed attempt, with what is needed to send it. */
export interface DeliveryJob {
  id: string;
  merchant_id: string;
  mode: Mode;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  url: string;
  enabled: boolean;
  deleted_at: Date | null;
  failing_since: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  payload: Record<string, unknown>;
  clock_now: Date;
  lock_token: string;
}

export interface OutboxEventRow {
  id: string;
  merchant_id: string;
  mode: string;
  type: string;
  created_at: Date;
}

export interface EndpointRow {
  id: string;
  merchant_id: string;
  mode: string;
  enabled_events: string[];
  created_at: Date;
  /** The merchant's test-clock offset for the endpoint's mode (a bigint, as text). */
  offset_ms: string;
}

/** The outcome of one attempt, written where the row still holds `lockToken`. */
export interface AttemptOutcome {
  id: string;
  lockToken: string;
  status: DeliveryStatus;
  responseStatus: number | null;
  error: string | null;
  latencyMs: number;
  responseBody: string | null;
  nextAttemptAt: Date | null;
  attemptedAt: Date;
  /** The attempt's entry for attempt_log (JSON text). */
  entry: string;
}

/**
 * A pending delivery `d` is due when `next_attempt_at` has come on the merchant's clock for its mode. The first bound
 * lets the partial index on next_attempt_at cut the scan; the second is exact per row.
 */
const DUE_NOW = `d.next_attempt_at <= now() + ${testClockSql.maxOffsetMs} * interval '1 millisecond'
  and d.next_attempt_at <= now() + ${testClockSql.offsetMs('d.merchant_id', 'd.mode')} * interval '1 millisecond'`;

/** Asks the workers (through NOTIFY, on commit of `em`'s transaction) to look for due deliveries now. */
export function notifyDeliveryDue(em: EntityManager, reason: string): Promise<void> {
  return notify(em, WEBHOOK_CHANNEL, reason);
}

/** One merchant's test mode: the tenant of test-clock work. */
const testMode = (merchantId: string) => ({ merchantId, mode: Mode.TEST });

export class DeliveryStore {
  constructor(
    private readonly db: ServicePool,
    private readonly orm: MikroORM,
  ) {}

  /**
   * Cross-tenant (worker), or one merchant's test mode with `testMerchantId`. In one transaction: takes up to
   * `limit` undispatched outbox events (skipping those another process holds), inserts a pending delivery for each
   * enabled endpoint of the same merchant for which `takes(endpoint, event)` holds, due now on the merchant's clock,
   * and marks the events dispatched. Returns the number of events taken.
   */
  async fanOut(
    limit: number,
    takes: (ep: EndpointRow, ev: OutboxEventRow) => boolean,
    testMerchantId?: string,
  ): Promise<number> {
    return withClient(this.db, async (client) => {
      try {
        await client.query('begin');
        const events = testMerchantId
          ? await tenantQueryAs<OutboxEventRow>(
              client,
              testMode(testMerchantId),
              `select id, merchant_id, mode, type, created_at from outbox_events
               where dispatched_at is null and {tenant} order by id limit $1 for update skip locked`,
              [limit],
            )
          : await systemQuery<OutboxEventRow>(
              client,
              `select id, merchant_id, mode, type, created_at from outbox_events
               where dispatched_at is null order by id limit $1 for update skip locked`,
              [limit],
            );
        if (!events.length) {
          await client.query('commit');
          return 0;
        }
        const merchants = [...new Set(events.map((e) => e.merchant_id))];
        // The enabled endpoints of the events' merchants (cross-tenant: events of many merchants in one pass).
        const endpoints = await systemQuery<EndpointRow>(
          client,
          `select e.id, e.merchant_id, e.mode, e.enabled_events, e.created_at, ${testClockSql.offsetMs('e.merchant_id', 'e.mode')} as offset_ms
             from webhook_endpoints e
             where e.merchant_id = any($1::uuid[]) and e.enabled and e.deleted_at is null`,
          [merchants],
        );
        const cols: unknown[][] = [[], [], [], [], [], [], []];
        for (const ev of events) {
          for (const ep of endpoints) {
            if (!takes(ep, ev)) continue;
            [uuidv7(), ev.merchant_id, ev.mode, ep.id, ev.id, ev.type, ep.offset_ms].forEach((v, i) => cols[i].push(v));
          }
        }
        if (cols[0].length) {
          await systemQuery(
            client,
            `insert into webhook_deliveries
               (id, created_at, updated_at, merchant_id, mode, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, attempt_log)
             select t.id, now(), now(), t.merchant_id, t.mode, t.endpoint_id, t.event_id, t.event_type, 'pending', 0,
                    now() + t.offset_ms * interval '1 millisecond', '[]'::jsonb
             from unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::bigint[])
               as t(id, merchant_id, mode, endpoint_id, event_id, event_type, offset_ms)`,
            cols,
          );
        }
        await systemQuery(client, 'update outbox_events set dispatched_at = now() where id = any($1::uuid[])', [
          events.map((e) => e.id),
        ]);
        await client.query('commit');
        return events.length;
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * Cross-tenant (worker): leases up to `limit` due deliveries for `leaseMs` (due: `next_attempt_at` has come on the
   * merchant's clock for that mode), skipping rows another claim holds. `only`: the test-mode deliveries of one
   * merchant due at or before `at` (test-clock advances).
   */
  async claim(limit: number, leaseMs: number, only?: { merchantId: string; at: Date }): Promise<DeliveryJob[]> {
    if (limit <= 0) return [];
    const token = uuidv7();
    const due = only ? `{tenant:d} and d.next_attempt_at <= $4` : DUE_NOW;
    const sql = `with due as (
         select d.id from webhook_deliveries d
         where d.status = 'pending' and (d.locked_until is null or d.locked_until < now()) and ${due}
         order by d.next_attempt_at limit $1
         for update of d skip locked
       ), claimed as (
         update webhook_deliveries d set locked_until = now() + $2 * interval '1 millisecond', lock_token = $3
         from due where d.id = due.id
         returning d.id, d.merchant_id, d.mode, d.endpoint_id, d.event_id, d.attempts
       )
       select c.*, e.url, e.enabled, e.deleted_at, e.failing_since, e.secret_sealed, e.previous_secret_sealed,
              e.previous_secret_expires_at, o.payload,
              now() + ${testClockSql.offsetMs('c.merchant_id', 'c.mode')} * interval '1 millisecond' as clock_now
       from claimed c
       join webhook_endpoints e on e.id = c.endpoint_id
       join outbox_events o on o.id = c.event_id`;
    type Row = Omit<DeliveryJob, 'lock_token'>;
    const rows = only
      ? await tenantQueryAs<Row>(this.db, testMode(only.merchantId), sql, [limit, leaseMs, token, only.at])
      : await systemQuery<Row>(this.db, sql, [limit, leaseMs, token]);
    return rows.map((row) => ({ ...row, lock_token: token }));
  }

  /** By lease: fails a claimed delivery at once, without an attempt (its endpoint is disabled or deleted). */
  async failClaimed(job: DeliveryJob, error: string): Promise<void> {
    await systemQuery(
      this.db,
      `update webhook_deliveries set status = 'failed', error = $3, next_attempt_at = null, locked_until = null,
         lock_token = null, updated_at = now() where id = $1 and lock_token = $2`,
      [job.id, job.lock_token, error],
    );
  }

  private outcomes: { outcome: AttemptOutcome; done: (err?: unknown) => void }[] = [];
  private writing = false;

  /**
   * By lease: records an attempt's outcome and releases the lease. A row whose lock_token changed is not updated:
   * the lease ran out and another worker took the attempt over. Outcomes are written in batches: while one UPDATE
   * runs, the outcomes that arrive meanwhile queue up and go in the next one (no timer: a lone outcome is written at
   * once). Each caller still waits for its own row.
   */
  recordOutcome(outcome: AttemptOutcome): Promise<void> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ outcome, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.writing) void this.flushOutcomes();
    });
  }

  private async flushOutcomes(): Promise<void> {
    this.writing = true;
    try {
      while (this.outcomes.length) {
        const batch = this.outcomes.splice(0, 500);
        const cols: unknown[][] = Array.from({ length: 10 }, () => []);
        for (const { outcome: o } of batch) {
          // In the order of the unnest columns below.
          const row = [
            o.id,
            o.lockToken,
            o.status,
            o.responseStatus,
            o.error,
            o.latencyMs,
            o.responseBody,
            o.nextAttemptAt,
            o.attemptedAt,
            o.entry,
          ];
          row.forEach((v, i) => cols[i].push(v));
        }
        try {
          await systemQuery(
            this.db,
            `update webhook_deliveries d set status = v.status, attempts = d.attempts + 1, response_status = v.response_status,
               error = v.error, latency_ms = v.latency_ms, response_body = v.response_body, next_attempt_at = v.next_attempt_at,
               last_attempt_at = v.last_attempt_at, locked_until = null, lock_token = null, updated_at = now(),
               attempt_log = (case when jsonb_array_length(d.attempt_log) >= ${ATTEMPT_LOG_MAX} then d.attempt_log - 0 else d.attempt_log end)
                 || v.entry::jsonb
             from unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::int[], $7::text[], $8::timestamptz[],
                         $9::timestamptz[], $10::text[])
               as v(id, token, status, response_status, error, latency_ms, response_body, next_attempt_at, last_attempt_at, entry)
             where d.id = v.id and d.lock_token = v.token`,
            cols,
          );
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }

  /** By id (from a claim): a success ends the endpoint's failure streak. */
  async endpointSucceeded(endpointId: string): Promise<void> {
    await systemQuery(this.db, 'update webhook_endpoints set failing_since = null where id = $1', [endpointId]);
  }

  /** By id (from a claim): a failure starts the streak at `at` unless one runs; answers its start (null: endpoint off). */
  async endpointFailed(endpointId: string, at: Date): Promise<Date | null> {
    const rows = await systemQuery<{ failing_since: Date }>(
      this.db,
      `update webhook_endpoints set failing_since = coalesce(failing_since, $2)
       where id = $1 and enabled and deleted_at is null returning failing_since`,
      [endpointId, at],
    );
    return rows[0]?.failing_since ?? null;
  }

  /**
   * Per tenant (the ORM's tenant filter): disables the endpoint with `reason` if it is still enabled, and runs
   * `andThen` in the same transaction (recording the event). Answers whether it disabled it.
   */
  async disableEndpoint(
    tenant: { merchantId: string; mode: Mode },
    endpointId: string,
    reason: string,
    andThen: (tx: EntityManager, ep: WebhookEndpoint) => void,
  ): Promise<boolean> {
    return tenantEntityManager(this.orm.em, tenant).transactional(async (tx) => {
      const ep = await tx.findOne(
        WebhookEndpoint,
        { id: endpointId, enabled: true, deletedAt: null },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!ep) return false;
      ep.enabled = false;
      ep.disabledReason = reason;
      await tx.flush();
      andThen(tx, ep);
      return true;
    });
  }

  /**
   * Cross-tenant: is any work left or in others' hands? Events not fanned out yet, attempts being sent (leased), and
   * due rows a claim skipped because another claim had them locked but not yet committed.
   */
  async anyWorkLeft(): Promise<boolean> {
    const busy = await systemQuery(
      this.db,
      `select 1 where exists (select 1 from outbox_events where dispatched_at is null)
          or exists (select 1 from webhook_deliveries d where d.status = 'pending' and (d.locked_until > now() or (${DUE_NOW})))`,
    );
    return busy.length > 0;
  }

  /** One merchant's test mode: are events waiting for fan-out, and when is the earliest pending attempt at or before `until`? */
  async testModeWork(merchantId: string, until: Date): Promise<{ undispatched: boolean; nextAttemptAt: Date | null }> {
    const [row] = await tenantQueryAs<{ undispatched: boolean; next_attempt_at: Date | null }>(
      this.db,
      testMode(merchantId),
      `select exists (select 1 from outbox_events where dispatched_at is null and {tenant}) as undispatched,
              (select min(next_attempt_at) from webhook_deliveries
               where status = 'pending' and {tenant} and next_attempt_at <= $1) as next_attempt_at`,
      [until],
    );
    return {
      undispatched: row.undispatched,
      nextAttemptAt: row.next_attempt_at ? new Date(row.next_attempt_at) : null,
    };
  }

  /** One merchant's test mode: is anything due at or before `at` still undone (fan-out or attempts, ours or others')? */
  async testModeWorkLeft(merchantId: string, at: Date): Promise<boolean> {
    const left = await tenantQueryAs(
      this.db,
      testMode(merchantId),
      `select 1 where exists (select 1 from outbox_events where dispatched_at is null and {tenant})
          or exists (select 1 from webhook_deliveries where status = 'pending' and {tenant} and next_attempt_at <= $1)`,
      [at],
    );
    return left.length > 0;
  }
}

/**
 * History retention (cross-tenant, worker processes): one batch of at most `batch` rows with ids (time-ordered
 * UUIDv7s) below `floor`, skipping rows another process holds. Answers the number deleted.
 */
const PRUNE = {
  /** Finished deliveries (the delivery log); pending ones stay whatever their age. */
  deliveries: `delete from webhook_deliveries where id in (
       select id from webhook_deliveries where id < $1 and status <> 'pending' limit $2 for update skip locked)`,
  /** Outbox events fanned out that no delivery refers to any more. */
  events: `delete from outbox_events where id in (
       select o.id from outbox_events o
       where o.id < $1 and o.dispatched_at is not null
         and not exists (select 1 from webhook_deliveries d where d.event_id = o.id)
       limit $2 for update skip locked)`,
  /** Inbound gateway events (kept to ignore repeats; gateways stop retrying after days): the payments module's table. */
  gatewayEvents: PRUNE_GATEWAY_EVENTS,
} as const;

export async function pruneBatch(
  db: ServicePool,
  which: keyof typeof PRUNE,
  floor: string,
  batch: number,
): Promise<number> {
  const [r] = await systemQuery<{ n: number }>(
    db,
    `with gone as (${PRUNE[which]} returning 1) select count(*)::int as n from gone`,
    [floor, batch],
  );
  return r.n;
}

/** Deliveries not yet sent or waiting for a retry, across tenants, for GET /metrics: read on the due index. */
export async function pendingDeliveryCount(db: Db): Promise<number> {
  const [row] = await systemQuery<{ n: number }>(
    db,
    `select count(*)::int as n from webhook_deliveries where status = 'pending'`,
  );
  return row?.n ?? 0;
}

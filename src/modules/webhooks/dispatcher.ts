import { LockMode } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import type { DueWork } from '../../core/clock';
import { Mode, TENANT_FILTER } from '../../core/entity';
import { recordEvent } from '../../core/events';
import type { PgListener } from '../../core/listener';
import { logger } from '../../core/logger';
import { withClient } from '../../core/pool';
import type { SecretBox } from '../../core/secrets';
import type { Serializer } from '../../core/serialize';
import type { LookupAll } from './address';
import { SendResult, WebhookSender } from './sender';
import { AttemptRecord, WebhookEndpoint } from './webhook.entities';

/** NOTIFYed when outbox events are written (a trigger on outbox_events) and when a delivery is due now. */
export const WEBHOOK_CHANNEL = 'cadence_webhooks';
/** An endpoint whose attempts have all failed for this long is disabled. */
export const FAILING_DISABLE_MS = 5 * 24 * 3600_000;
const USER_AGENT = 'Cadence-Webhooks/1.0 (+https://www.standardwebhooks.com/)';
const ATTEMPT_LOG_MAX = 50;

export interface DispatcherOptions {
  /** Seconds to wait after the 1st, 2nd, ... failed attempt; when exhausted the delivery is failed. */
  schedule: number[];
  timeoutMs: number;
  /** A claimed attempt is someone else's to send again only after this long (> timeoutMs). */
  leaseMs: number;
  /** Host resolution for live endpoints (tests stand in a resolver). */
  lookupAll?: LookupAll;
}

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

/** Does `enabledEvents` ("*", exact types, "prefix.*") take `type`? */
export function acceptsEvent(enabledEvents: string[], type: string): boolean {
  return enabledEvents.some((p) => p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1))));
}

/** The body sent: the outbox envelope with its keys in the contract's order (jsonb keeps its own order). */
export function envelopeText(payload: Record<string, unknown>): string {
  const { id, object, type, livemode, created_at, data, ...rest } = payload;
  return JSON.stringify({ id, object, type, livemode, created_at, data: readable(data), ...rest });
}

/** `data.object` with `id` and `object` first and the other fields in alphabetical order. */
function readable(data: unknown): unknown {
  const obj = (data as { object?: unknown } | null)?.object;
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return data;
  const { id, object, ...fields } = obj as Record<string, unknown>;
  const sorted: Record<string, unknown> = { id, object };
  for (const k of Object.keys(fields).sort()) sorted[k] = fields[k];
  return { ...(data as object), object: sorted };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Outbound delivery, durable in PostgreSQL: fan-out turns outbox events into webhook_deliveries rows (one
 * transaction: the rows and the outbox mark commit together); claiming leases due rows with FOR UPDATE SKIP
 * LOCKED; an attempt signs and sends the body and records its outcome only while it still holds the lease.
 * A process killed at any point leaves either an undispatched event or a pending delivery, which the next pass
 * (of any process) picks up: delivery is at least once, with the same webhook-id on every attempt.
 */
/**
 * A pending delivery `d` is due when `next_attempt_at` has come on the merchant's clock for its mode. The first bound
 * lets the partial index on next_attempt_at cut the scan; the second is exact per row.
 */
const DUE_NOW = `d.next_attempt_at <= now() + (select coalesce(max(offset_ms), 0) from test_clocks) * interval '1 millisecond'
  and d.next_attempt_at <= now() + (case when d.mode = 'test'
    then coalesce((select c.offset_ms from test_clocks c where c.merchant_id = d.merchant_id), 0) else 0 end) * interval '1 millisecond'`;

export class WebhookDispatcher {
  readonly sender: WebhookSender;
  private readonly opened = new Map<string, string>();

  constructor(
    private readonly db: Pool,
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly serializer: () => Serializer,
    readonly options: DispatcherOptions,
  ) {
    this.sender = new WebhookSender(options.timeoutMs, options.lookupAll);
  }

  /**
   * Turns up to `limit` undispatched outbox events into deliveries to the enabled endpoints of the same merchant
   * and mode that take their type. `testMerchantId`: only that merchant's test-mode events. Returns the count.
   */
  async fanOut(limit = 500, testMerchantId?: string): Promise<number> {
    return withClient(this.db, async (client) => {
      try {
        await client.query('begin');
        const events = (
          await client.query<{ id: string; merchant_id: string; mode: string; type: string; created_at: Date }>(
            `select id, merchant_id, mode, type, created_at from outbox_events
             where dispatched_at is null ${testMerchantId ? `and merchant_id = $2 and mode = 'test'` : ''}
             order by id limit $1 for update skip locked`,
            testMerchantId ? [limit, testMerchantId] : [limit],
          )
        ).rows;
        if (!events.length) {
          await client.query('commit');
          return 0;
        }
        const merchants = [...new Set(events.map((e) => e.merchant_id))];
        const endpoints = (
          await client.query<{ id: string; merchant_id: string; mode: string; enabled_events: string[]; created_at: Date; offset_ms: string }>(
            `select e.id, e.merchant_id, e.mode, e.enabled_events, e.created_at,
                    case when e.mode = 'test' then coalesce(c.offset_ms, 0) else 0 end as offset_ms
             from webhook_endpoints e left join test_clocks c on c.merchant_id = e.merchant_id
             where e.merchant_id = any($1::uuid[]) and e.enabled and e.deleted_at is null`,
            [merchants],
          )
        ).rows;
        const cols: unknown[][] = [[], [], [], [], [], [], []];
        for (const ev of events) {
          for (const ep of endpoints) {
            if (ep.merchant_id !== ev.merchant_id || ep.mode !== ev.mode) continue;
            if (ep.created_at.getTime() > ev.created_at.getTime() || !acceptsEvent(ep.enabled_events, ev.type)) continue;
            [uuidv7(), ev.merchant_id, ev.mode, ep.id, ev.id, ev.type, ep.offset_ms].forEach((v, i) => cols[i].push(v));
          }
        }
        if (cols[0].length) {
          await client.query(
            `insert into webhook_deliveries
               (id, created_at, updated_at, merchant_id, mode, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, attempt_log)
             select t.id, now(), now(), t.merchant_id, t.mode, t.endpoint_id, t.event_id, t.event_type, 'pending', 0,
                    now() + t.offset_ms * interval '1 millisecond', '[]'::jsonb
             from unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::uuid[], $6::text[], $7::bigint[])
               as t(id, merchant_id, mode, endpoint_id, event_id, event_type, offset_ms)`,
            cols,
          );
        }
        await client.query('update outbox_events set dispatched_at = now() where id = any($1::uuid[])', [events.map((e) => e.id)]);
        await client.query('commit');
        return events.length;
      } catch (err) {
        await client.query('rollback').catch(() => undefined);
        throw err;
      }
    });
  }

  /**
   * Leases up to `limit` due deliveries (due: `next_attempt_at` has come on the merchant's clock for that mode).
   * `only`: the test-mode deliveries of one merchant due at or before `at` (test-clock advances).
   */
  async claim(limit: number, only?: { merchantId: string; at: Date }): Promise<DeliveryJob[]> {
    if (limit <= 0) return [];
    const token = uuidv7();
    const params: unknown[] = [limit, this.options.leaseMs, token];
    let due: string;
    if (only) {
      params.push(only.merchantId, only.at);
      due = `d.merchant_id = $4 and d.mode = 'test' and d.next_attempt_at <= $5`;
    } else {
      due = DUE_NOW;
    }
    const r = await this.db.query<Omit<DeliveryJob, 'lock_token'>>(
      `with due as (
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
              now() + (case when c.mode = 'test' then coalesce(tc.offset_ms, 0) else 0 end) * interval '1 millisecond' as clock_now
       from claimed c
       join webhook_endpoints e on e.id = c.endpoint_id
       join outbox_events o on o.id = c.event_id
       left join test_clocks tc on tc.merchant_id = c.merchant_id`,
      params,
    );
    return r.rows.map((row) => ({ ...row, lock_token: token }));
  }

  /** Sends one claimed attempt and records its outcome (or fails it at once when the endpoint is gone). */
  async attempt(job: DeliveryJob): Promise<void> {
    const clockNow = new Date(job.clock_now);
    if (!job.enabled || job.deleted_at) {
      await this.db.query(
        `update webhook_deliveries set status = 'failed', error = $3, next_attempt_at = null, locked_until = null,
           lock_token = null, updated_at = now() where id = $1 and lock_token = $2`,
        [job.id, job.lock_token, job.deleted_at ? 'endpoint deleted' : 'endpoint disabled'],
      );
      return;
    }
    const body = envelopeText(job.payload);
    // The timestamp is the wall clock's: receivers check it against theirs (5 minutes' tolerance).
    const timestamp = new Date(Math.floor(Date.now() / 1000) * 1000);
    let result: SendResult;
    try {
      const headers = {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': job.event_id,
        'webhook-timestamp': String(timestamp.getTime() / 1000),
        'webhook-signature': this.signatures(job, body, timestamp, clockNow),
      };
      result = await this.sender.send(job.url, headers, body, job.mode === Mode.LIVE);
    } catch (err) {
      logger.error({ err, delivery_id: job.id }, 'webhook attempt failed unexpectedly');
      result = { status: null, ok: false, latencyMs: 0, error: 'internal error while sending', body: null };
    }
    await this.record(job, result, clockNow);
  }

  /** `v1,<sig>` for the current secret, and for the previous one while a roll's overlap lasts, space-separated. */
  private signatures(job: DeliveryJob, body: string, timestamp: Date, clockNow: Date): string {
    const secrets = [this.open(job.secret_sealed)];
    if (job.previous_secret_sealed && job.previous_secret_expires_at && new Date(job.previous_secret_expires_at) > clockNow) {
      secrets.push(this.open(job.previous_secret_sealed));
    }
    return secrets.map((s) => new Webhook(s).sign(job.event_id, timestamp, body)).join(' ');
  }

  private open(sealed: string): string {
    let secret = this.opened.get(sealed);
    if (!secret) {
      if (this.opened.size > 10_000) this.opened.clear();
      secret = this.secrets.open(sealed);
      this.opened.set(sealed, secret);
    }
    return secret;
  }

  private async record(job: DeliveryJob, r: SendResult, clockNow: Date): Promise<void> {
    const schedule = this.options.schedule;
    let status: string;
    let next: Date | null = null;
    if (r.ok) status = 'succeeded';
    else if (job.attempts < schedule.length) {
      status = 'pending';
      next = new Date(clockNow.getTime() + schedule[job.attempts] * 1000);
    } else status = 'failed';
    const entry: AttemptRecord = {
      attempt: job.attempts + 1,
      attemptedAt: clockNow.toISOString(),
      responseStatus: r.status,
      latencyMs: r.latencyMs,
      error: r.error,
      responseBody: r.body,
    };
    // The endpoint's health first, while the lease is held: whoever waits for this attempt (a test-clock advance)
    // also sees the webhook_endpoint.disabled event it may cause.
    await this.trackHealth(job, r.ok, clockNow);
    // A row whose lock_token changed is not updated: the lease ran out and another worker took the attempt over.
    await this.writeOutcome([job.id, job.lock_token, status, r.status, r.error, r.latencyMs, r.body, next, clockNow, JSON.stringify([entry])]);
  }

  private outcomes: { row: unknown[]; done: (err?: unknown) => void }[] = [];
  private writing = false;

  /**
   * Outcomes are written in batches: while one UPDATE runs, the outcomes that arrive meanwhile queue up and go in
   * the next one (no timer: a lone outcome is written at once). Each attempt still waits for its own row.
   */
  private writeOutcome(row: unknown[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.outcomes.push({ row, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.writing) void this.flushOutcomes();
    });
  }

  private async flushOutcomes(): Promise<void> {
    this.writing = true;
    try {
      while (this.outcomes.length) {
        const batch = this.outcomes.splice(0, 500);
        const cols: unknown[][] = Array.from({ length: 10 }, () => []);
        for (const { row } of batch) row.forEach((v, i) => cols[i].push(v));
        try {
          await this.db.query(
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

  /** A success ends the endpoint's failure streak; a failure starts it, or disables the endpoint after 5 days. */
  private async trackHealth(job: DeliveryJob, ok: boolean, clockNow: Date): Promise<void> {
    if (ok) {
      if (job.failing_since) await this.db.query('update webhook_endpoints set failing_since = null where id = $1', [job.endpoint_id]);
      return;
    }
    const h = await this.db.query<{ failing_since: Date }>(
      `update webhook_endpoints set failing_since = coalesce(failing_since, $2)
       where id = $1 and enabled and deleted_at is null returning failing_since`,
      [job.endpoint_id, clockNow],
    );
    const since = h.rows[0]?.failing_since;
    if (since && clockNow.getTime() - new Date(since).getTime() >= FAILING_DISABLE_MS) await this.disableFailing(job);
  }

  /** Every attempt for 5 days failed: the endpoint is disabled and a webhook_endpoint.disabled event recorded. */
  private async disableFailing(job: DeliveryJob): Promise<void> {
    const em = this.orm.em.fork();
    em.setFilterParams(TENANT_FILTER, { merchantId: job.merchant_id, mode: job.mode });
    await em.transactional(async (tx) => {
      const ep = await tx.findOne(WebhookEndpoint, { id: job.endpoint_id, enabled: true, deletedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!ep) return;
      ep.enabled = false;
      ep.disabledReason = 'failing';
      await tx.flush();
      recordEvent(tx, 'webhook_endpoint.disabled', this.serializer().toRest(ep), job.mode);
    });
    logger.warn({ endpoint_id: job.endpoint_id, merchant_id: job.merchant_id }, 'webhook endpoint disabled after 5 days of failures');
  }

  /** Fans out and sends everything due now, until nothing is left (tests; the worker does this continuously). */
  async drain(): Promise<void> {
    for (;;) {
      const fanned = await this.fanOut(500);
      const jobs = await this.claim(100);
      await Promise.all(jobs.map((j) => this.attempt(j)));
      if (fanned || jobs.length) continue;
      // Events other workers are fanning out, attempts they are sending, and due rows our claim skipped because
      // another worker's claim had them locked but not yet committed.
      const busy = await this.db.query(
        `select 1 where exists (select 1 from outbox_events where dispatched_at is null)
            or exists (select 1 from webhook_deliveries d where d.status = 'pending' and (d.locked_until > now() or (${DUE_NOW})))`,
      );
      if (!busy.rowCount) return;
      await sleep(20);
    }
  }

  /** Webhook retries as test-clock due work (contract 14: retry times follow the merchant's test clock). */
  readonly dueWork: DueWork = {
    name: 'webhook deliveries',
    nextDue: async (merchantId, until) => {
      const r = await this.db.query<{ undispatched: boolean; next_attempt_at: Date | null }>(
        `select exists (select 1 from outbox_events where dispatched_at is null and merchant_id = $1 and mode = 'test') as undispatched,
                (select min(next_attempt_at) from webhook_deliveries
                 where status = 'pending' and merchant_id = $1 and mode = 'test' and next_attempt_at <= $2) as next_attempt_at`,
        [merchantId, until],
      );
      const row = r.rows[0];
      if (row.undispatched) return new Date(0); // due now
      return row.next_attempt_at ? new Date(row.next_attempt_at) : null;
    },
    runDue: async (merchantId, at) => {
      for (let i = 0; ; i++) {
        const fanned = await this.fanOut(500, merchantId);
        const jobs = await this.claim(100, { merchantId, at });
        if (jobs.length) await Promise.all(jobs.map((j) => this.attempt(j)));
        if (fanned || jobs.length) continue;
        // Due rows another process holds (fanning out or sending): wait for their outcome.
        const left = await this.db.query(
          `select 1 where exists (select 1 from outbox_events where dispatched_at is null and merchant_id = $1 and mode = 'test')
              or exists (select 1 from webhook_deliveries where status = 'pending' and merchant_id = $1 and mode = 'test' and next_attempt_at <= $2)`,
          [merchantId, at],
        );
        if (!left.rowCount) return;
        await sleep(Math.min(100, 5 + i));
      }
    },
  };

  close(): void {
    this.sender.close();
  }
}

/**
 * The delivery loop of one process: woken by NOTIFY on WEBHOOK_CHANNEL (new outbox events, retries asked for) through
 * the process's shared PgListener, and after each of its reconnections (a sweep: NOTIFYs sent while it was down are
 * lost); otherwise every `pollMs` for retries coming due. Sends up to `concurrency` attempts at once.
 */
export class WebhookWorker {
  private running = false;
  private loopDone: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private wakeUp: (() => void) | null = null;
  private woken = false;
  private full = false;
  private unlisten: (() => Promise<void>) | null = null;
  private offReconnect: (() => void) | null = null;

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    /** null: polling only. */
    private readonly listener: PgListener | null,
    private readonly options: { concurrency: number; pollMs: number },
  ) {}

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    if (this.listener) {
      this.offReconnect = this.listener.onReconnect(() => this.wake());
      this.unlisten = await this.listener.listen(WEBHOOK_CHANNEL, () => this.wake());
    }
    this.loopDone = this.loop();
    logger.info({ concurrency: this.options.concurrency }, 'webhook worker started');
  }

  /** Stops taking work, lets attempts in flight finish and record their outcome. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.offReconnect?.();
    this.offReconnect = null;
    const unlisten = this.unlisten;
    this.unlisten = null;
    await unlisten?.();
    this.wake();
    await this.loopDone;
    await Promise.allSettled([...this.inFlight]);
  }

  wake(): void {
    this.woken = true;
    const w = this.wakeUp;
    this.wakeUp = null;
    w?.();
  }

  private pause(ms: number): Promise<void> {
    if (this.woken) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wakeUp = null;
        resolve();
      }, ms);
      this.wakeUp = () => {
        clearTimeout(t);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      this.woken = false;
      try {
        const fanned = await this.dispatcher.fanOut(500);
        const room = this.options.concurrency - this.inFlight.size;
        let claimed = 0;
        if (room > 0) {
          const jobs = await this.dispatcher.claim(room);
          claimed = jobs.length;
          for (const job of jobs) this.track(job);
        }
        this.full = this.inFlight.size >= this.options.concurrency;
        // More may be waiting when a batch came back full; otherwise sleep until woken or the next poll.
        failures = 0;
        if (this.full || (fanned < 500 && claimed < room)) await this.pause(this.options.pollMs);
      } catch (err) {
        if (!this.running) break;
        // The database may be down: back off to 10 s between passes; the listener's reconnection wakes us sooner.
        const delay = Math.min(10_000, 1000 * 2 ** Math.min(failures++, 4));
        logger.error({ err, retry_in_ms: delay }, 'webhook worker pass failed');
        await this.pause(delay);
      }
    }
  }

  private track(job: DeliveryJob): void {
    const p: Promise<void> = this.dispatcher
      .attempt(job)
      .catch((err) => logger.error({ err, delivery_id: job.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        this.inFlight.delete(p);
        // Claim again once half the slots are free: fewer, larger claims.
        if (this.full && this.inFlight.size <= this.options.concurrency / 2) {
          this.full = false;
          this.wake();
        }
      });
    this.inFlight.add(p);
  }
}

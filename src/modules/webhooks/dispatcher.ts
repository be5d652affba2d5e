import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServicePool } from '../../core/orm-pool';
import { Mode } from '../../core/entity';
import { recordEvent } from '../../core/events';
import { logger } from '../../core/logger';
import { webhookAttempts } from '../../core/metrics';
import type { SecretBox } from '../../core/secrets';
import type { Serializer } from '../../core/serialize';
import type { DueWork } from '../test-clock';
import type { LookupAll } from './address';
import { afterAttempt, endpointTakes, failingTooLong } from './delivery.policy';
import { DeliveryJob, DeliveryStore } from './delivery.store';
import { SendResult, WebhookSender } from './sender';
import { deliveryHeaders } from './signing';
import { AttemptRecord } from './webhook.entities';

export interface DispatcherOptions {
  /** Seconds to wait after the 1st, 2nd, ... failed attempt; when exhausted the delivery is failed. */
  schedule: number[];
  timeoutMs: number;
  /** A claimed attempt is someone else's to send again only after this long (> timeoutMs). */
  leaseMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: attempts may connect to loopback, private and link-local addresses. */
  allowPrivateNetworks?: boolean;
  /** Host resolution (tests stand in a resolver). */
  lookupAll?: LookupAll;
}

/** The body sent: the outbox envelope, keys in the order docs/webhooks.md shows (jsonb keeps its own order). */
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
 * The statements are delivery.store.ts's, the rules (retry schedule, health) delivery.policy.ts's; the loop that
 * drives this in a worker process is src/core/claim-loop.ts (runtime.ts).
 */
export class WebhookDispatcher {
  readonly sender: WebhookSender;
  readonly store: DeliveryStore;
  private readonly opened = new Map<string, string>();

  constructor(
    db: ServicePool,
    orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly serializer: () => Serializer,
    readonly options: DispatcherOptions,
  ) {
    this.store = new DeliveryStore(db, orm);
    this.sender = new WebhookSender(options.timeoutMs, options);
  }

  /**
   * Turns up to `limit` undispatched outbox events into deliveries to the enabled endpoints of the same merchant
   * and mode that take their type. `testMerchantId`: only that merchant's test-mode events. Returns the count.
   */
  fanOut(limit = 500, testMerchantId?: string): Promise<number> {
    return this.store.fanOut(limit, endpointTakes, testMerchantId);
  }

  /**
   * Leases up to `limit` due deliveries (due: `next_attempt_at` has come on the merchant's clock for that mode).
   * `only`: the test-mode deliveries of one merchant due at or before `at` (test-clock advances).
   */
  claim(limit: number, only?: { merchantId: string; at: Date }): Promise<DeliveryJob[]> {
    return this.store.claim(limit, this.options.leaseMs, only);
  }

  /** Sends one claimed attempt and records its outcome (or fails it at once when the endpoint is gone). */
  async attempt(job: DeliveryJob): Promise<void> {
    const clockNow = new Date(job.clock_now);
    if (!job.enabled || job.deleted_at) {
      await this.store.failClaimed(job, job.deleted_at ? 'endpoint deleted' : 'endpoint disabled');
      return;
    }
    const body = envelopeText(job.payload);
    let result: SendResult;
    try {
      // The timestamp is the wall clock's: receivers check it against theirs (5 minutes' tolerance).
      const headers = deliveryHeaders(job.event_id, body, this.secretsOf(job, clockNow));
      result = await this.sender.send(job.url, headers, body, job.mode === Mode.LIVE);
    } catch (err) {
      logger.error({ err, delivery_id: job.id }, 'webhook attempt failed unexpectedly');
      result = { status: null, ok: false, latencyMs: 0, error: 'internal error while sending', body: null };
    }
    await this.record(job, result, clockNow);
  }

  /** The current secret, and the previous one while a roll's overlap lasts. */
  private secretsOf(job: DeliveryJob, clockNow: Date): string[] {
    const secrets = [this.open(job.secret_sealed)];
    if (
      job.previous_secret_sealed &&
      job.previous_secret_expires_at &&
      new Date(job.previous_secret_expires_at) > clockNow
    ) {
      secrets.push(this.open(job.previous_secret_sealed));
    }
    return secrets;
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
    const { status, nextAttemptAt } = afterAttempt(r.ok, job.attempts, this.options.schedule, clockNow);
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
    await this.store.recordOutcome({
      id: job.id,
      lockToken: job.lock_token,
      status,
      responseStatus: r.status,
      error: r.error,
      latencyMs: r.latencyMs,
      responseBody: r.body,
      nextAttemptAt,
      attemptedAt: clockNow,
      entry: JSON.stringify([entry]),
    });
    webhookAttempts.inc({ result: status === 'pending' ? 'retry' : status }); // recorded: counted (GET /metrics)
  }

  /** A success ends the endpoint's failure streak; a failure starts it, or disables the endpoint after 5 days. */
  private async trackHealth(job: DeliveryJob, ok: boolean, clockNow: Date): Promise<void> {
    if (ok) {
      if (job.failing_since) await this.store.endpointSucceeded(job.endpoint_id);
      return;
    }
    const since = await this.store.endpointFailed(job.endpoint_id, clockNow);
    if (since && failingTooLong(since, clockNow)) await this.disableFailing(job);
  }

  /** Every attempt for 5 days failed: the endpoint is disabled and a webhook_endpoint.disabled event recorded. */
  private async disableFailing(job: DeliveryJob): Promise<void> {
    await this.store.disableEndpoint(
      { merchantId: job.merchant_id, mode: job.mode },
      job.endpoint_id,
      'failing',
      (tx, ep) => recordEvent(tx, 'webhook_endpoint.disabled', this.serializer().toRest(ep), job.mode),
    );
    logger.warn(
      { endpoint_id: job.endpoint_id, merchant_id: job.merchant_id },
      'webhook endpoint disabled after 5 days of failures',
    );
  }

  /** Fans out and sends everything due now, until nothing is left (tests; the worker does this continuously). */
  async drain(): Promise<void> {
    for (;;) {
      const fanned = await this.fanOut(500);
      const jobs = await this.claim(100);
      await Promise.all(jobs.map((j) => this.attempt(j)));
      if (fanned || jobs.length) continue;
      if (!(await this.store.anyWorkLeft())) return;
      await sleep(20);
    }
  }

  /** Webhook retries as test-clock due work (docs/sandbox.md: retry times follow the merchant's test clock). */
  readonly dueWork: DueWork = {
    name: 'webhook deliveries',
    nextDue: async (merchantId, until) => {
      const work = await this.store.testModeWork(merchantId, until);
      if (work.undispatched) return new Date(0); // due now
      return work.nextAttemptAt;
    },
    runDue: async (merchantId, at) => {
      for (let i = 0; ; i++) {
        const fanned = await this.fanOut(500, merchantId);
        const jobs = await this.claim(100, { merchantId, at });
        if (jobs.length) await Promise.all(jobs.map((j) => this.attempt(j)));
        if (fanned || jobs.length) continue;
        // Due rows another process holds (fanning out or sending): wait for their outcome.
        if (!(await this.store.testModeWorkLeft(merchantId, at))) return;
        await sleep(Math.min(100, 5 + i));
      }
    },
  };

  close(): void {
    this.sender.close();
  }
}

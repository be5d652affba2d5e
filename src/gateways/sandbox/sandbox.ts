import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { Pool } from 'pg';
import { logger } from '../../core/logger';
import { deliverEvent, DeliveryOptions } from './events';
import { renewRazorpaySubscription, retryRazorpayCharge } from './razorpay.billing';
import { SandboxEvent, SandboxObject, SandboxProvider, SandboxWebhook } from './sandbox.entities';
import { isSealed, SecretBox } from './sealed';
import { renewStripeSubscription, retryStripeInvoice } from './stripe.billing';

export interface SandboxOptions {
  /** The sandbox's own ORM (src/gateways/sandbox/database.ts: its entities and migrations only). */
  orm: MikroORM;
  /** Base URL the hosted checkout pages are served under (startSandbox fills it once listening). */
  publicUrl?: string;
  delivery?: DeliveryOptions;
  /**
   * The time a checkout completes at, per sandbox account (default: the wall clock). Lets the service start
   * subscription periods on a merchant's test clock, so chargeDueRenewals(testClockNow) lines up with them.
   */
  clock?: (accountKey: string) => Date | Promise<Date>;
  /** Plain connections for the hot create path (default: a pool of its own on the ORM's database, closed with it). */
  pool?: Pool;
  /** Size of that pool of its own (default 10). */
  poolMax?: number;
  /** Seals the webhook secrets merchants register (src/gateways/sandbox/sealed.ts). */
  secrets: SecretBox;
}

export interface RenewalFilter {
  /** Only this sandbox account (see sandboxAccountKey). */
  accountKey?: string;
  provider?: SandboxProvider;
}

export interface RenewalResult {
  provider: SandboxProvider;
  providerSubscriptionId: string;
  /** The gateway events sent, in order (e.g. ['invoice.paid'] or ['subscription.pending']). */
  events: string[];
}

/**
 * The sandbox's state and its time-driven operations, shared by the HTTP routes. Every change commits first and
 * its webhooks are delivered after: to the caller's answer for checkouts and renewals, in the background for API
 * commands (as real gateways do), and an event that could not be delivered stays stored for redeliverPending().
 */
export class Sandbox {
  readonly orm: MikroORM;
  readonly secrets: SecretBox;
  /** Creates (checkout sessions, prices, payment links) skip the ORM: its unit of work costs ~1.4 ms CPU a query. */
  readonly pool: Pool;
  private readonly ownsPool: boolean;
  publicUrl: string;
  private readonly delivery: DeliveryOptions;
  private readonly clock?: SandboxOptions['clock'];
  private readonly background = new Set<Promise<unknown>>();

  constructor(opts: SandboxOptions) {
    this.orm = opts.orm;
    this.secrets = opts.secrets;
    this.ownsPool = !opts.pool;
    this.pool = opts.pool ?? new Pool({ connectionString: opts.orm.config.get('clientUrl'), max: opts.poolMax ?? 10, allowExitOnIdle: true });
    // A broken idle connection is logged (an unheard 'error' would end the process) and replaced on the next query.
    if (this.ownsPool) this.pool.on('error', (err) => logger.warn({ err, pool: 'sandbox' }, 'idle database connection lost'));
    this.publicUrl = (opts.publicUrl ?? '').replace(/\/$/, '');
    this.delivery = opts.delivery ?? {};
    this.clock = opts.clock;
  }

  /** "Now" for an account (see SandboxOptions.clock). */
  async now(accountKey: string): Promise<Date> {
    return this.clock ? await this.clock(accountKey) : new Date();
  }

  /**
   * Seals what was stored in plain text before sealing existed: webhook secrets (one row per gateway account) and
   * the `secret` of stored idempotent answers (a webhook endpoint's creation; only those rows are read).
   */
  async sealStoredSecrets(): Promise<void> {
    await this.tx(async (em) => {
      for (const hook of await em.find(SandboxWebhook, {})) {
        if (!isSealed(hook.secret)) hook.secret = this.secrets.seal(hook.secret);
      }
      const answers = await em.getConnection().execute<{ id: string; secret: string }[]>(
        `select id, response->>'secret' as secret from sandbox_idempotency_keys where jsonb_typeof(response->'secret') = 'string'`,
      );
      for (const { id, secret } of answers) {
        if (isSealed(secret)) continue;
        await em.getConnection().execute(
          `update sandbox_idempotency_keys set response = jsonb_set(response, '{secret}', to_jsonb(?::text)) where id = ?`,
          [this.secrets.seal(secret), id],
        );
      }
    });
  }

  /** One transaction on a fresh EntityManager. */
  tx<T>(fn: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.orm.em.fork().transactional(fn) as Promise<T>;
  }

  /** Delivers events in order, waiting for each answer. */
  async deliver(eventIds: string[]): Promise<void> {
    const em = this.orm.em.fork();
    for (const id of eventIds) {
      try {
        await deliverEvent(em, id, this.secrets, this.delivery);
      } catch {
        /* stays undelivered; redeliverPending() picks it up */
      }
    }
  }

  /** Delivers in the background; close() waits for these. */
  deliverLater(eventIds: string[]): void {
    if (eventIds.length === 0) return;
    const p = this.deliver(eventIds).finally(() => this.background.delete(p));
    this.background.add(p);
  }

  /** Waits for background deliveries (tests use it to make "eventually" deterministic). */
  async settle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }

  /** Sends again every stored event no webhook has acknowledged yet (oldest first). */
  async redeliverPending(filter: RenewalFilter = {}): Promise<number> {
    const em = this.orm.em.fork();
    const pending = await em.find(
      SandboxEvent,
      { delivered: false, ...(filter.accountKey ? { accountKey: filter.accountKey } : {}), ...(filter.provider ? { provider: filter.provider } : {}) },
      { orderBy: { createdAt: 'asc' } },
    );
    await this.deliver(pending.map((e) => e.id));
    return pending.length;
  }

  /**
   * Charges every sandbox subscription whose period (or trial) ended by `now`, in time order, as the gateway's
   * scheduler would: advances its period, applies the test-card rules, and delivers the webhooks before returning.
   * Time here is the caller's: pass the merchant's test-clock time.
   */
  async chargeDueRenewals(now: Date, filter: RenewalFilter = {}): Promise<RenewalResult[]> {
    const results: RenewalResult[] = [];
    for (let guard = 0; guard < 10_000; guard++) {
      const step = await this.tx(async (em) => {
        const sub = await em.findOne(
          SandboxObject,
          {
            type: 'subscription',
            dueAt: { $lte: now },
            ...(filter.accountKey ? { accountKey: filter.accountKey } : {}),
            ...(filter.provider ? { provider: filter.provider } : {}),
          },
          // SKIP LOCKED: two callers never charge the same period twice, nor wait on each other.
          { orderBy: { dueAt: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
        );
        if (!sub) return null;
        const events = sub.provider === 'stripe' ? renewStripeSubscription(em, sub, now) : renewRazorpaySubscription(em, sub, now);
        return { sub, events };
      });
      if (!step) break;
      await this.deliver(step.events);
      results.push({ provider: step.sub.provider, providerSubscriptionId: step.sub.id, events: await this.eventTypes(step.events) });
    }
    return results;
  }

  /** Retries the failed charge of a past_due (Stripe) or pending/halted (Razorpay) subscription now. */
  async retryCharge(providerSubscriptionId: string, now: Date = new Date()): Promise<RenewalResult | null> {
    const step = await this.tx(async (em) => {
      const sub = await em.findOne(SandboxObject, { id: providerSubscriptionId, type: 'subscription' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!sub) return null;
      const events = sub.provider === 'stripe' ? await retryStripeInvoice(em, sub, now) : retryRazorpayCharge(em, sub);
      return { sub, events };
    });
    if (!step) return null;
    await this.deliver(step.events);
    return { provider: step.sub.provider, providerSubscriptionId, events: await this.eventTypes(step.events) };
  }

  private async eventTypes(ids: string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.orm.em.fork().find(SandboxEvent, { id: { $in: ids } });
    const byId = new Map(rows.map((r) => [r.id, r.type]));
    return ids.map((id) => byId.get(id) ?? 'unknown');
  }

  async close(): Promise<void> {
    await this.settle();
    // Tests close a sandbox they stopped earlier once more: end the pool once.
    if (this.ownsPool && !this.pool.ended) await this.pool.end();
  }
}

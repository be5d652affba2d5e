import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { Pool } from 'pg';
import { logger } from '../../core/logger';
import {
  deliverStored,
  DeliveryOptions,
  DeliveryOutcome,
  postEvent,
  recordDeliveries,
  NO_WEBHOOK,
  RETRY_DELAYS_MS,
} from './events';
import { retryRazorpayCharge } from './razorpay.billing';
import { ChargedBatch, ChargedRenewal, chargeDueBatch } from './renewals';
import { SandboxEvent, SandboxObject, SandboxProvider, SandboxWebhook } from './sandbox.entities';
import { isSealed, SecretBox } from './sealed';
import { retryStripeInvoice } from './stripe.billing';

export interface SandboxOptions {
  /** The sandbox's own ORM (src/gateways/sandbox/database.ts: its entities and migrations only). */
  orm: MikroORM;
  /** Base URL the hosted checkout pages are served under (startSandbox fills it once listening). */
  publicUrl?: string;
  delivery?: DeliveryOptions;
  /**
   * Overrides an account's "now" (tests). Default: the wall clock plus the account's offset in `sandbox_clocks`,
   * which the test-clock routes move (advanceClock).
   */
  clock?: (accountKey: string) => Date | Promise<Date>;
  /**
   * Plain connections for the hot paths: creates, renewals, deliveries (default: a pool of its own on the ORM's
   * database, closed with it).
   */
  pool?: Pool;
  /** Size of that pool of its own (default 10). */
  poolMax?: number;
  /** Seals the webhook secrets merchants register (src/gateways/sandbox/sealed.ts). */
  secrets: SecretBox;
  /** Serves /_faults, which makes chosen requests fail, time out or lose their answer (tests; faults.ts). */
  faults?: boolean;
  /**
   * Webhooks of renewals in flight at once among the subscriptions of one account due at the same instant (default
   * 16): each worker delivers one renewal's events in order, waiting for each answer; the next due instant starts once
   * all of the instant's webhooks were answered.
   */
  renewalConcurrency?: number;
  /**
   * Subscriptions charged per transaction by the renewal path (default 64; the first batch of an instant is
   * `renewalConcurrency`, so deliveries start early). The next batch is charged while earlier ones are delivered.
   */
  renewalBatch?: number;
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

export interface AdvanceResult {
  /** The account's time after the advance (never earlier than before). */
  now: Date;
  /** What fell due on the way, in time order. */
  renewals: RenewalResult[];
}

/** The account's earliest due instant by $2 (from sandbox_objects_subscription_due_index). */
const NEXT_WAVE = `
select due_at from sandbox_objects
where type = 'subscription' and account_key = $1 and due_at <= $2 and ($3::text is null or provider = $3)
order by account_key, due_at
limit 1`;

/**
 * Accounts with a subscription due by their own time: the wall time given plus each account's clock offset. The
 * accounts holding subscriptions are walked through the index (one probe each, not one row per subscription), then
 * each is checked for a due row there.
 */
const ACCOUNTS_DUE = `
with recursive accounts(account_key) as (
  (select account_key from sandbox_objects where type = 'subscription' and ($2::text is null or account_key = $2) order by account_key limit 1)
  union all
  select (
    select o.account_key from sandbox_objects o
    where o.type = 'subscription' and o.account_key > a.account_key and ($2::text is null or o.account_key = $2)
    order by o.account_key limit 1
  )
  from accounts a where a.account_key is not null
)
select a.account_key
from accounts a left join sandbox_clocks c on c.account_key = a.account_key
where a.account_key is not null and exists (
  select 1 from sandbox_objects o
  where o.type = 'subscription' and o.account_key = a.account_key
    and o.due_at <= $1::timestamptz + coalesce(c.offset_ms, 0) * interval '1 millisecond'
    and ($3::text is null or o.provider = $3)
)
order by a.account_key`;

/** Raises an account's offset (never lowers it) and answers the offset in force. */
const RAISE_CLOCK = `
insert into sandbox_clocks (account_key, offset_ms) values ($1, $2)
on conflict (account_key) do update set offset_ms = greatest(sandbox_clocks.offset_ms, excluded.offset_ms), updated_at = now()
returning offset_ms::float8 as offset_ms`;

/** Delivery rounds of an event before it is given up (with 60 s first: the last about 2.8 days after it was made). */
export const REDELIVERY_ROUNDS = 12;

/**
 * A first delivery round (four attempts of at most 10 s) is surely over this long after its event was made: an event
 * never tried by then was left by a process that stopped before delivering it.
 */
const FIRST_ROUND_OVER_SECONDS = 60;

/**
 * Undelivered events due another round (Sandbox.redeliverDue): $1 the first wait in seconds, $2 attempts per round,
 * $3 the rounds in all, $4 the limit, $5 the error of an event whose account had no webhook (never sent later), $6
 * FIRST_ROUND_OVER_SECONDS. After r rounds an event is due $1 x (2^r - 1) seconds after its creation; one never tried,
 * once its first round would be over.
 */
const REDELIVERY_DUE = `
select e.id from sandbox_events e
join sandbox_webhooks w on w.provider = e.provider and w.account_key = e.account_key
where not e.delivered and e.last_error is distinct from $5 and e.attempts < $2::int * $3::int
  and e.created_at + make_interval(secs => case when e.attempts = 0 then greatest($1::float8, $6::float8)
        else $1::float8 * (power(2, ceil(e.attempts::float8 / $2::int)) - 1) end) <= now()
order by e.created_at
limit $4`;

/**
 * The sandbox's state and its time-driven operations, shared by the HTTP routes. Every change commits first and
 * its webhooks are delivered after: to the caller's answer for checkouts and renewals, in the background for API
 * commands (as real gateways do), and an event that could not be delivered stays stored for redeliverPending().
 */
export class Sandbox {
  readonly orm: MikroORM;
  readonly secrets: SecretBox;
  /** Creates, renewals and deliveries skip the ORM (its unit of work costs ~1.4 ms CPU a query): plain statements here. */
  readonly pool: Pool;
  private readonly ownsPool: boolean;
  publicUrl: string;
  /** PEM certificates it shows as a proxy standing in for a gateway host, by host (startSandbox loads them). */
  readonly certificates = new Map<string, string>();
  private readonly delivery: DeliveryOptions;
  private readonly clock?: SandboxOptions['clock'];
  private readonly background = new Set<Promise<unknown>>();
  /** Per account, the tail of its charging runs: the ticker and test-clock advances of one account take turns. */
  private readonly accountRuns = new Map<string, Promise<unknown>>();
  private readonly renewalConcurrency: number;
  private readonly renewalBatch: number;

  constructor(opts: SandboxOptions) {
    this.orm = opts.orm;
    this.secrets = opts.secrets;
    this.ownsPool = !opts.pool;
    this.pool =
      opts.pool ??
      new Pool({ connectionString: opts.orm.config.get('clientUrl'), max: opts.poolMax ?? 10, allowExitOnIdle: true });
    // A broken idle connection is logged (an unheard 'error' would end the process) and replaced on the next query.
    if (this.ownsPool)
      this.pool.on('error', (err) => logger.warn({ err, pool: 'sandbox' }, 'idle database connection lost'));
    this.publicUrl = (opts.publicUrl ?? '').replace(/\/$/, '');
    this.delivery = opts.delivery ?? {};
    this.clock = opts.clock;
    this.renewalConcurrency = Math.max(1, Math.floor(opts.renewalConcurrency ?? 16));
    this.renewalBatch = Math.max(1, Math.floor(opts.renewalBatch ?? 64));
  }

  /** "Now" for an account: the wall clock plus the account's offset (or SandboxOptions.clock). */
  async now(accountKey: string): Promise<Date> {
    if (this.clock) return await this.clock(accountKey);
    return new Date(Date.now() + (await this.offsetMs(accountKey)));
  }

  /** How far an account's clock runs ahead of the wall clock (0 until a test-clock advance). */
  async offsetMs(accountKey: string): Promise<number> {
    const { rows } = await this.pool.query<{ offset_ms: number }>({
      name: 'sandbox_clock_offset',
      text: 'select offset_ms::float8 as offset_ms from sandbox_clocks where account_key = $1',
      values: [accountKey],
    });
    return rows[0]?.offset_ms ?? 0;
  }

  /** Runs `fn` after the account's earlier charging runs (in this process), so runs of one account never interleave. */
  private async serial<T>(accountKey: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.accountRuns.get(accountKey) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.accountRuns.set(accountKey, tail);
    try {
      return await run;
    } finally {
      if (this.accountRuns.get(accountKey) === tail) this.accountRuns.delete(accountKey);
    }
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
      const answers = await em
        .getConnection()
        .execute<{ id: string; secret: string }[]>(
          `select id, response->>'secret' as secret from sandbox_idempotency_keys where jsonb_typeof(response->'secret') = 'string'`,
        );
      for (const { id, secret } of answers) {
        if (isSealed(secret)) continue;
        await em
          .getConnection()
          .execute(
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
    try {
      await deliverStored(this.pool, eventIds, this.secrets, this.delivery);
    } catch (err) {
      // What was not recorded as delivered stays pending: redeliverPending() sends it again.
      logger.warn({ err }, 'sandbox: event delivery failed');
    }
  }

  /** Delivers in the background; close() waits for these. */
  deliverLater(eventIds: string[]): void {
    if (eventIds.length === 0) return;
    void this.tracked(this.deliver(eventIds));
  }

  /** `work`, which close() and settle() wait for. */
  private tracked(work: Promise<void>): Promise<void> {
    const p = work.finally(() => this.background.delete(p));
    this.background.add(p);
    return p;
  }

  /** Waits for background deliveries (tests use it to make "eventually" deterministic). */
  async settle(): Promise<void> {
    while (this.background.size) await Promise.allSettled([...this.background]);
  }

  /**
   * Sends again the stored events whose webhook answered with an error or not at all, as the gateways retry theirs
   * (Stripe for three days): each delivery round (one attempt and its quick retries) is followed by a wait of
   * `firstSeconds` after the first, doubling after each, measured from the event's creation; after
   * REDELIVERY_ROUNDS rounds it is given up. An event whose account had no webhook is never taken; one never tried
   * (its process stopped first) once its first round would be over. At most `limit` (oldest first) per call; answers
   * how many were sent.
   */
  async redeliverDue(firstSeconds: number, limit = 100): Promise<number> {
    const perRound = (this.delivery.retryDelaysMs ?? RETRY_DELAYS_MS).length + 1;
    const { rows } = await this.pool.query<{ id: string }>({
      name: 'sandbox_redelivery_due',
      text: REDELIVERY_DUE,
      values: [firstSeconds, perRound, REDELIVERY_ROUNDS, limit, NO_WEBHOOK, FIRST_ROUND_OVER_SECONDS],
    });
    // Waited for by close(), like the first rounds.
    if (rows.length) await this.tracked(this.deliver(rows.map((r) => r.id)));
    return rows.length;
  }

  /** Sends again every stored event no webhook has acknowledged yet (oldest first). */
  async redeliverPending(filter: RenewalFilter = {}): Promise<number> {
    const em = this.orm.em.fork();
    const pending = await em.find(
      SandboxEvent,
      {
        delivered: false,
        ...(filter.accountKey ? { accountKey: filter.accountKey } : {}),
        ...(filter.provider ? { provider: filter.provider } : {}),
      },
      { orderBy: { createdAt: 'asc' } },
    );
    await this.deliver(pending.map((e) => e.id));
    return pending.length;
  }

  /**
   * Charges every sandbox subscription whose period (or trial) ended, each account by its own time: `wallNow` plus
   * the account's clock offset (so an account whose test clock runs ahead is charged by its time, not the wall's).
   * In time order per account, as the gateway's scheduler would: advances the period, applies the test-card rules,
   * and delivers the webhooks before returning. The wall-clock ticker calls this with new Date().
   */
  async chargeDueRenewals(wallNow: Date, filter: RenewalFilter = {}): Promise<RenewalResult[]> {
    const { rows } = await this.pool.query<{ account_key: string }>(ACCOUNTS_DUE, [
      wallNow,
      filter.accountKey ?? null,
      filter.provider ?? null,
    ]);
    const results: RenewalResult[] = [];
    for (const { account_key: accountKey } of rows) {
      const done = await this.serial(accountKey, async () => {
        // Read inside the turn: an advance that ran meanwhile moved the offset.
        const until = new Date(wallNow.getTime() + (await this.offsetMs(accountKey)));
        return this.chargeAccount(accountKey, until, { provider: filter.provider, moveClock: false });
      });
      results.push(...done);
    }
    return results;
  }

  /**
   * The test-clock extension (POST /v1/test_helpers/sandbox/advance, /razorpay/v1/test_helpers/advance): charges
   * everything of the account due by `to` in time order, the account's clock reading each charge's due time while
   * its webhooks are delivered, then sets the clock to `to` (never backwards). Answers once all that is done.
   */
  async advanceClock(accountKey: string, to: Date): Promise<AdvanceResult> {
    return this.serial(accountKey, async () => {
      // What an earlier advance could not deliver goes first; an advance answers only once the merchant has been told
      // of every charge it made (else it fails, and the next one delivers them before anything else).
      await this.deliverUndelivered(accountKey);
      const renewals = await this.chargeAccount(accountKey, to, { moveClock: true });
      await this.deliverUndelivered(accountKey);
      const offset = await this.raiseClock(accountKey, to);
      return { now: this.clock ? await this.clock(accountKey) : new Date(Date.now() + offset), renewals };
    });
  }

  /**
   * Delivers the account's events that were not delivered (the merchant's endpoint failed), and throws when some still
   * were not: a test-clock advance must not answer while the merchant has not heard of what it charged. Events of an
   * account without a webhook endpoint have nowhere to go and do not count.
   */
  private async deliverUndelivered(accountKey: string): Promise<void> {
    const waiting = { accountKey, delivered: false, $or: [{ lastError: null }, { lastError: { $ne: NO_WEBHOOK } }] };
    if (!(await this.orm.em.fork().count(SandboxEvent, waiting))) return;
    await this.redeliverPending({ accountKey });
    const left = await this.orm.em.fork().count(SandboxEvent, waiting);
    if (left)
      throw new Error(
        `${left} webhook(s) of this account could not be delivered: the clock advance stops until they are`,
      );
  }

  /** Sets the account's clock to at least `at`; answers the offset in force. */
  private async raiseClock(accountKey: string, at: Date): Promise<number> {
    const { rows } = await this.pool.query<{ offset_ms: number }>({
      name: 'sandbox_raise_clock',
      text: RAISE_CLOCK,
      values: [accountKey, Math.round(at.getTime() - Date.now())],
    });
    return rows[0].offset_ms;
  }

  /**
   * One account's subscriptions due by `until`, in waves of one due instant, earliest first: the account's clock is
   * set to the instant, then its due subscriptions are charged and their webhooks delivered (chargeInstant). A wave
   * ends when all its webhooks were answered, so everything due earlier is done before anything due later starts; a
   * renewal moves a subscription's due time past the instant, so each subscription is charged once per wave.
   */
  private async chargeAccount(
    accountKey: string,
    until: Date,
    opts: { provider?: SandboxProvider; moveClock: boolean },
  ): Promise<RenewalResult[]> {
    const results: RenewalResult[] = [];
    for (let guard = 0; guard < 10_000; guard++) {
      const { rows } = await this.pool.query<{ due_at: Date }>({
        name: 'sandbox_next_wave',
        text: NEXT_WAVE,
        values: [accountKey, until, opts.provider ?? null],
      });
      if (!rows.length) break;
      const at = rows[0].due_at;
      // The gateway acts at the due time: the clock reads it while the wave's webhooks are delivered.
      if (opts.moveClock) await this.raiseClock(accountKey, at);
      const wave = await this.chargeInstant(accountKey, at, opts.provider);
      // Every row of the instant is locked by another caller (another process's ticker): it charges them.
      if (!wave.length) break;
      // In the pick order (due time, id), whichever worker finished first.
      results.push(...wave.sort((a, b) => (a.providerSubscriptionId < b.providerSubscriptionId ? -1 : 1)));
    }
    return results;
  }

  /**
   * Charges the account's subscriptions due by `at` and delivers their webhooks. Batches are charged one
   * transaction each (src/gateways/sandbox/renewals.ts), the next one while the workers deliver the last; up to
   * `renewalConcurrency` workers each deliver one renewal's events in order, waiting for each answer. What the
   * deliveries did is recorded a few hundred at a time, and all of it before this answers.
   */
  private async chargeInstant(accountKey: string, at: Date, provider?: SandboxProvider): Promise<RenewalResult[]> {
    const workers = this.renewalConcurrency;
    const queue: { renewal: ChargedRenewal; hooks: ChargedBatch['hooks'] }[] = [];
    let charging: Promise<void> | null = null;
    let exhausted = false;
    let failure: unknown = null;
    let batches = 0;
    /** Charges the next batch into the queue (once at a time); a short batch means nothing more is due here. */
    const refill = (): Promise<void> =>
      (charging ??= (async () => {
        const limit = batches++ === 0 ? Math.min(workers, this.renewalBatch) : this.renewalBatch;
        try {
          const batch = await chargeDueBatch(this.pool, accountKey, at, provider, limit);
          if (batch.renewals.length < limit) exhausted = true;
          for (const renewal of batch.renewals) queue.push({ renewal, hooks: batch.hooks });
        } catch (err) {
          failure = err;
        } finally {
          charging = null;
        }
      })());
    const take = async () => {
      for (;;) {
        // What was charged (committed) is delivered even after a later batch failed.
        const next = queue.shift();
        if (next) {
          // Charge ahead while the workers are busy, so they never wait for a batch.
          if (queue.length < workers && !exhausted && !failure) void refill();
          return next;
        }
        if (failure) throw failure;
        if (exhausted) return null;
        await refill();
      }
    };

    const wave: RenewalResult[] = [];
    const outcomes: DeliveryOutcome[] = [];
    const record = async (all: boolean) => {
      while (outcomes.length >= 256 || (all && outcomes.length))
        await recordDeliveries(this.pool, outcomes.splice(0, 256));
    };
    const worker = async () => {
      for (let item = await take(); item; item = await take()) {
        const { renewal, hooks } = item;
        for (const event of renewal.events) {
          outcomes.push(await postEvent(event, hooks.get(event.provider) ?? null, this.secrets, this.delivery));
        }
        wave.push({
          provider: renewal.sub.provider,
          providerSubscriptionId: renewal.sub.id,
          events: renewal.events.map((e) => e.type),
        });
        await record(false);
      }
    };
    try {
      const settled = await Promise.allSettled(Array.from({ length: workers }, worker));
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      // A batch charged ahead still commits; its events stay pending (redeliverPending) if the wave failed.
      await charging;
      await record(true);
    }
    return wave;
  }

  /** Retries the failed charge of a past_due (Stripe) or pending/halted (Razorpay) subscription now (the account's time). */
  async retryCharge(providerSubscriptionId: string, now?: Date): Promise<RenewalResult | null> {
    const step = await this.tx(async (em) => {
      const sub = await em.findOne(
        SandboxObject,
        { id: providerSubscriptionId, type: 'subscription' },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!sub) return null;
      const at = now ?? (await this.now(sub.accountKey));
      const events =
        sub.provider === 'stripe'
          ? await retryStripeInvoice(em, sub, at)
          : ((await retryRazorpayCharge(em, sub, at))?.events ?? []);
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

import type { Pool } from 'pg';
import type { OutgoingEvent, WebhookTarget } from './events';
import { renewRazorpaySubscription } from './razorpay.billing';
import { SandboxEvent, SandboxObject, SandboxProvider } from './sandbox.entities';
import { Collector } from './store';
import { renewStripeSubscription } from './stripe.billing';

/**
 * The renewal path of the sandbox's clock, in plain SQL and in batches: the subscriptions of an account due at one
 * instant are locked, charged and written a batch per transaction (four round trips for the whole batch: begin, the
 * locking read, one set-based write, commit) instead of an ORM unit of work and its statements per subscription. The
 * charging itself is the billing functions' (renewStripeSubscription / renewRazorpaySubscription), unchanged: they
 * write into a Collector here rather than an EntityManager.
 */

/**
 * Up to $4 subscriptions of the account due by $2, locked (SKIP LOCKED: two callers never charge one period twice; a
 * row another process holds is left to it). Reads sandbox_objects_subscription_due_index in its order.
 */
const LOCK_DUE = `
select id, provider, account_key, data, internal, due_at, created_at, updated_at
from sandbox_objects
where type = 'subscription' and account_key = $1 and due_at <= $2 and ($3::text is null or provider = $3)
order by account_key, due_at, id
limit $4
for update skip locked`;

/**
 * The batch's writes in one statement: the renewed subscriptions ($1), the objects the charges created ($2: payment
 * intents, payments, invoices) and the events to deliver ($3). Answers the account's webhook registrations, read in the
 * same statement, so the deliveries need no read of their own.
 */
const WRITE_RENEWALS = `
with subs as (
  update sandbox_objects o
  set data = x.data, internal = x.internal, due_at = x.due_at, updated_at = x.updated_at
  from jsonb_to_recordset($1::jsonb) as x(id text, data jsonb, internal jsonb, due_at timestamptz, updated_at timestamptz)
  where o.id = x.id
), objects as (
  insert into sandbox_objects (id, provider, account_key, type, data, internal, due_at, created_at, updated_at)
  select x.id, x.provider, x.account_key, x.type, x.data, x.internal, x.due_at, x.created_at, x.updated_at
  from jsonb_to_recordset($2::jsonb) as x(id text, provider text, account_key text, type text, data jsonb, internal jsonb, due_at timestamptz, created_at timestamptz, updated_at timestamptz)
), events as (
  insert into sandbox_events (id, provider, account_key, type, body, delivered, attempts, created_at)
  select x.id, x.provider, x.account_key, x.type, x.body, false, 0, x.created_at
  from jsonb_to_recordset($3::jsonb) as x(id text, provider text, account_key text, type text, body text, created_at timestamptz)
)
select provider, url, secret, events from sandbox_webhooks where account_key = $4`;

interface DueRow {
  id: string;
  provider: SandboxProvider;
  account_key: string;
  data: Record<string, any>;
  internal: Record<string, any>;
  due_at: Date;
  created_at: Date;
  updated_at: Date;
}

/** One charged subscription of a batch and the events it queued, in order. */
export interface ChargedRenewal {
  sub: SandboxObject;
  events: OutgoingEvent[];
}

export interface ChargedBatch {
  renewals: ChargedRenewal[];
  /** The account's webhook per provider at the time of the charge (absent: none registered). */
  hooks: Map<SandboxProvider, WebhookTarget>;
}

const row = (o: SandboxObject) => ({
  id: o.id,
  provider: o.provider,
  account_key: o.accountKey,
  type: o.type,
  data: o.data,
  internal: o.internal,
  due_at: o.dueAt ?? null,
  created_at: o.createdAt,
  updated_at: o.updatedAt,
});

/**
 * Charges up to `limit` subscriptions of the account due by `at`, each at its own due time, in one transaction
 * (committed before this returns, so the events exist before anything is delivered). An empty batch: nothing is due,
 * or every due row is locked by another caller.
 */
export async function chargeDueBatch(
  pool: Pool,
  accountKey: string,
  at: Date,
  provider: SandboxProvider | undefined,
  limit: number,
): Promise<ChargedBatch> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('begin');
    const { rows } = await client.query<DueRow>({
      name: 'sandbox_lock_due',
      text: LOCK_DUE,
      values: [accountKey, at, provider ?? null, limit],
    });
    if (!rows.length) {
      await client.query('commit');
      return { renewals: [], hooks: new Map() };
    }
    const collector = new Collector();
    const renewals: ChargedRenewal[] = [];
    for (const r of rows) {
      const sub = Object.assign(new SandboxObject(), {
        id: r.id,
        provider: r.provider,
        accountKey: r.account_key,
        type: 'subscription',
        data: r.data,
        internal: r.internal,
        dueAt: r.due_at,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      });
      const from = collector.events.length;
      // The gateway acts at the due time: events, periods and cancellations carry it.
      const ids =
        sub.provider === 'stripe'
          ? renewStripeSubscription(collector, sub, r.due_at)
          : renewRazorpaySubscription(collector, sub, r.due_at);
      const queued = new Map(collector.events.slice(from).map((e) => [e.id, e]));
      sub.updatedAt = new Date();
      renewals.push({ sub, events: ids.map((id) => queued.get(id)!) });
    }
    const subs = renewals.map(({ sub }) => ({
      id: sub.id,
      data: sub.data,
      internal: sub.internal,
      due_at: sub.dueAt ?? null,
      updated_at: sub.updatedAt,
    }));
    const events = collector.events.map((e: SandboxEvent) => ({
      id: e.id,
      provider: e.provider,
      account_key: e.accountKey,
      type: e.type,
      body: e.body,
      created_at: e.createdAt,
    }));
    const written = await client.query<{ provider: SandboxProvider; url: string; secret: string; events: string[] }>({
      name: 'sandbox_write_renewals',
      text: WRITE_RENEWALS,
      values: [JSON.stringify(subs), JSON.stringify(collector.objects.map(row)), JSON.stringify(events), accountKey],
    });
    await client.query('commit');
    return {
      renewals,
      hooks: new Map(written.rows.map((h) => [h.provider, { url: h.url, secret: h.secret, events: h.events }])),
    };
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw err;
  } finally {
    // A connection whose rollback failed is closed, not handed out again.
    client.release(broken || undefined);
  }
}

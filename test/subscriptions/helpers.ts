import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { Client_, TestApp } from '../harness/app';
import { ADMIN_TOKEN } from '../harness/app';
import { startApp, RunningApp } from '../../src/app';
import { Config, loadConfig } from '../../src/config';
import { openDatabase } from '../../src/core/db';
import { servicePoolSize } from '../../src/core/sql';
import { entities } from '../../src/entities';
import { submitCheckout } from '../harness/checkout';
import type { Received, Receiver } from '../harness/receiver';
import { Connected, ProviderName, razorpayEvent, stripeEvent } from '../payments/helpers';

/** Shared by the subscription tests: a recurring catalog, subscriptions and their mandate checkouts. */

const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

export interface Catalog {
  product: any;
  plan: any;
  price: any;
}

/** A subscription product with one plan and one default INR price (plan fields overridable). */
export async function recurringPlan(
  c: Client_,
  plan: Record<string, unknown> = {},
  price: Record<string, unknown> = {},
): Promise<Catalog> {
  const product = await ok(c.post('/products', { name: `Pro ${rnd()}`, type: 'subscription' }), 201);
  const p = await ok(
    c.post(`/products/${product.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly', ...plan }),
    201,
  );
  const pr = await ok(
    c.post(`/plans/${p.id}/prices`, { currency: 'INR', amount: 49900, is_default: true, ...price }),
    201,
  );
  return { product, plan: p, price: pr };
}

export function subscriptionBody(planId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    plan_id: planId,
    // An existing customer (customer_id) is named by its id alone: a different e-mail beside it is refused.
    ...('customer_id' in overrides ? {} : { customer_email: `sub-${rnd()}@example.com` }),
    customer_name: 'Asha Rao',
    success_url: 'https://merchant.example/welcome?sub={SUBSCRIPTION_ID}',
    cancel_url: 'https://merchant.example/pricing',
    ...overrides,
  };
}

export async function createSubscription(
  c: Client_,
  planId: string,
  overrides: Record<string, unknown> = {},
  headers?: Record<string, string>,
) {
  return ok(c.post('/subscriptions', subscriptionBody(planId, overrides), headers), 201);
}

/** Completes the mandate checkout (default: a good card) and answers the subscription as the service now shows it. */
export async function authorise(c: Client_, sub: any, form: Record<string, string> = { outcome: 'success' }) {
  const r = await submitCheckout(sub.checkout_url, form);
  if (r.status !== 303) throw new Error(`checkout answered ${r.status}: ${r.text}`);
  return { redirect: r.location, subscription: await ok(c.get(`/subscriptions/${sub.id}`)) };
}

export async function events(c: Client_, id: string): Promise<any[]> {
  return ok(c.get(`/subscriptions/${id}/events`));
}

/** The transitions as `from>to:event_type:triggered_by` strings, oldest first (easy to compare whole). */
export async function trail(c: Client_, id: string): Promise<string[]> {
  return (await events(c, id)).map((e) => `${e.from_state ?? 'none'}>${e.to_state}:${e.event_type}:${e.triggered_by}`);
}

export async function ok(p: Promise<{ status: number; text: string; body: any }>, status = 200): Promise<any> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

// --- lifecycle end-to-end helpers (table / dunning / terms tests) ---------------------------------------------------

/** A command that the state table does not allow: 409 invalid_state_transition, and the subscription and its trail unchanged. */
export async function expectIllegal(c: Client_, id: string, command: string, body: unknown = {}): Promise<void> {
  const before = await ok(c.get(`/subscriptions/${id}`));
  const trailBefore = await events(c, id);
  const r = await c.post(`/subscriptions/${id}/${command}`, body);
  if (r.status !== 409 || r.body?.error?.code !== 'invalid_state_transition') {
    throw new Error(
      `${command} on a ${before.status} subscription: expected 409 invalid_state_transition, got ${r.status}: ${r.text}`,
    );
  }
  expect(await ok(c.get(`/subscriptions/${id}`))).toEqual(before);
  expect(await events(c, id)).toEqual(trailBefore);
}

/** Types of the outbox events (docs/webhooks.md) about one subscription (its own and its invoices'), oldest first. */
export async function outboxTypesOf(app: TestApp, merchantId: string, subscriptionId: string): Promise<string[]> {
  const rows = await app.orm.em
    .getConnection()
    .execute<{ type: string; payload: any }[]>(
      'select type, payload from outbox_events where merchant_id = ? order by id',
      [merchantId],
    );
  return rows
    .map((r) => ({
      type: r.type,
      o: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload)?.data?.object ?? {},
    }))
    .filter((r) => r.o.id === subscriptionId || r.o.subscription_id === subscriptionId)
    .map((r) => r.type);
}

/** Every invoice (and credit note) of a client's merchant and mode matching `filters`, oldest first (all pages). */
export async function allInvoices(c: Client_, filters: Record<string, string> = {}): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ ...filters, limit: '100', ...(cursor ? { cursor } : {}) });
    const page = await ok(c.get(`/invoices?${q}`));
    all.push(...page.data);
    cursor = page.has_more ? page.next_cursor : null;
  } while (cursor);
  return all.reverse();
}

/** The subscription's invoices (and credit notes), oldest first. */
export const invoicesOf = (c: Client_, subscriptionId: string): Promise<any[]> =>
  allInvoices(c, { subscription_id: subscriptionId });

/** An instant `ms` after an ISO timestamp. */
export const after = (iso: string, ms = 1000) => new Date(new Date(iso).getTime() + ms);

// --- hard-path helpers (races, gateway events, recovery) -------------------------------------------------------------

/** The gateway sandbox's price objects (Stripe prices, Razorpay plans) made for one of our prices (same database). */
export async function gatewayPriceObjects(t: TestApp, priceId: string): Promise<{ id: string; type: string }[]> {
  return t.orm.em.getConnection().execute(
    `select id, type from sandbox_objects
      where type in ('price', 'plan') and (data->'metadata'->>'price_id' = ? or data->'notes'->>'price_id' = ?) order by id`,
    [priceId, priceId],
  );
}

/** The amounts the gateway holds prices (Stripe) or plans (Razorpay) at for one of our prices, ascending. */
export async function gatewayPriceAmountsOf(t: TestApp, priceId: string): Promise<number[]> {
  const rows = await t.orm.em.getConnection().execute<{ amount: string }[]>(
    `select coalesce(data->>'unit_amount', data->'item'->>'amount') as amount from sandbox_objects
      where type in ('price', 'plan') and (data->'metadata'->>'price_id' = ? or data->'notes'->>'price_id' = ?)`,
    [priceId, priceId],
  );
  return rows.map((r) => Number(r.amount)).sort((a, b) => a - b);
}

/**
 * What a subscription's customer paid the gateway (the sandbox's own records): captured charges less refunds. Stripe:
 * the payment intents of its gateway customer; Razorpay: the payments carrying its id in their notes.
 */
export async function collectedAt(
  t: TestApp,
  provider: 'stripe' | 'razorpay',
  sub: { id: string; provider_customer_id?: string | null },
): Promise<number> {
  const sql = t.orm.em.getConnection();
  const rows =
    provider === 'stripe'
      ? await sql.execute<{ paid: string | null }[]>(
          `select sum((data->'latest_charge'->>'amount_captured')::bigint - (data->'latest_charge'->>'amount_refunded')::bigint) as paid
             from sandbox_objects where provider = 'stripe' and type = 'payment_intent' and data->>'customer' = ?`,
          [sub.provider_customer_id],
        )
      : await sql.execute<{ paid: string | null }[]>(
          `select sum((data->>'amount')::bigint - (data->>'amount_refunded')::bigint) as paid
             from sandbox_objects where provider = 'razorpay' and type = 'payment' and data->>'status' in ('captured', 'refunded')
              and data->'notes'->>'subscription_id' = ?`,
          [sub.id],
        );
  return Number(rows[0]?.paid ?? 0);
}

/** The gateway events the sandbox emitted about a subscription (its id or gateway id in the body), oldest first. */
export async function sandboxEventsAbout(
  t: TestApp,
  sub: { id: string; provider_subscription_id?: string | null },
): Promise<{ id: string; type: string; body: string; delivered: boolean }[]> {
  const ids = [sub.id, sub.provider_subscription_id].filter(Boolean) as string[];
  return t.orm.em
    .getConnection()
    .execute(
      `select id, type, body, delivered from sandbox_events where ${ids.map(() => 'position(? in body) > 0').join(' or ')} order by created_at, id`,
      ids,
    );
}

/**
 * Points the sandbox's webhook for a connection elsewhere (a receiver, a closed port): the service then does not hear
 * of what the gateway does. Answers a function that points it back.
 */
export async function redirectGatewayWebhook(
  t: TestApp,
  connection: { webhook_url: string },
  url: string,
): Promise<() => Promise<void>> {
  const conn = t.orm.em.getConnection();
  const rows = await conn.execute<{ id: string }[]>('update sandbox_webhooks set url = ? where url = ? returning id', [
    url,
    connection.webhook_url,
  ]);
  if (rows.length !== 1) throw new Error(`no sandbox webhook registered for ${connection.webhook_url}`);
  return async () => {
    await conn.execute('update sandbox_webhooks set url = ? where id = ?', [connection.webhook_url, rows[0].id]);
  };
}

/** What the gateway sends about `connection` while `action` runs, caught by `receiver` instead of reaching the service. */
export async function captureGatewayEvents(
  t: TestApp,
  receiver: Receiver,
  connection: { webhook_url: string },
  action: () => Promise<unknown>,
): Promise<Received[]> {
  const restore = await redirectGatewayWebhook(t, connection, `${receiver.url}/gateway`);
  try {
    await action();
  } finally {
    await restore();
  }
  return receiver.received;
}

/**
 * Another service process on the same database and gateway sandbox (docs/operations.md: several API and worker
 * processes work together), with its own pool; `close` stops it and its pool.
 */
export async function startSecondApp(
  first: TestApp,
  overrides: Partial<Config> = {},
): Promise<RunningApp & { close(): Promise<void> }> {
  const orm = await openDatabase(first.databaseUrl, entities, servicePoolSize(overrides.dbPoolMax ?? 5));
  const app = await startApp(
    {
      ...loadConfig({}),
      port: 0,
      host: '127.0.0.1',
      databaseUrl: first.databaseUrl,
      adminToken: ADMIN_TOKEN,
      rateLimitPerSecond: 10_000,
      sandbox: true,
      sandboxUrl: first.app.sandboxUrl!,
      dataDir: path.join(os.tmpdir(), 'cadence-test-data'), // as test/harness/app.ts: the same sealing key
      gatewayTimeoutMs: 3000,
      ...overrides,
    },
    orm,
    0,
  );
  return {
    ...app,
    async close() {
      await app.close();
      await orm.close(true);
    },
  };
}

/** The gateway's "this subscription was cancelled" event (made in its dashboard, say), as each gateway sends it, signed for the connection. */
export function gatewayCancellation(provider: ProviderName, c: Connected, sub: any) {
  if (provider === 'stripe') {
    return stripeEvent(c.webhookSecret, 'customer.subscription.deleted', {
      id: sub.provider_subscription_id,
      object: 'subscription',
      status: 'canceled',
      customer: sub.provider_customer_id,
      metadata: { subscription_id: sub.id },
    });
  }
  return razorpayEvent(c.webhookSecret, 'subscription.cancelled', {
    subscription: {
      id: sub.provider_subscription_id,
      entity: 'subscription',
      status: 'cancelled',
      customer_id: sub.provider_customer_id ?? 'cust_x',
      paid_count: 1,
      current_start: Math.floor(Date.now() / 1000) - 60,
      notes: { subscription_id: sub.id },
    },
  });
}

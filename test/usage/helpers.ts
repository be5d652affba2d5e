import crypto from 'node:crypto';
import type { Client_, TestApp, TestMerchant } from '../harness/app';
import { authorise, createSubscription, invoicesOf, ok, recurringPlan } from '../subscriptions/helpers';

/** Shared by the usage tests: billable subscriptions through the sandbox checkout, and what the database holds. */

export const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

/** A subscription through the hosted mandate checkout (active, or trialing with trial days), as the API shows it. */
export async function billableSubscription(c: Client_, plan: Record<string, unknown> = {}): Promise<any> {
  const { plan: p } = await recurringPlan(c, plan);
  const { subscription } = await authorise(c, await createSubscription(c, p.id));
  return subscription;
}

/** A usage event body (fields overridable; `undefined` drops one). */
export function usageBody(subscriptionId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    subscription_id: subscriptionId,
    event_type: 'api_calls',
    quantity: 1,
    unit: 'calls',
    ...overrides,
  };
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body;
}

export async function report(
  c: Client_,
  subscriptionId: string,
  overrides: Record<string, unknown> = {},
  headers?: Record<string, string>,
) {
  return ok(c.post('/usage/events', usageBody(subscriptionId, overrides), headers), 201);
}

export async function summary(c: Client_, subscriptionId: string): Promise<any> {
  return ok(c.get(`/usage/summary?subscription_id=${subscriptionId}`));
}

/** The aggregations of a subscription as `period_start event_type total unit` strings (easy to compare whole). */
export async function totals(c: Client_, subscriptionId: string): Promise<string[]> {
  return (await summary(c, subscriptionId)).aggregations.map(
    (a: any) => `${a.billing_period_start} ${a.event_type} ${a.total_quantity_decimal} ${a.unit}`,
  );
}

/** Rows the database holds for a subscription: events, aggregate rows (slots), idempotency keys and units. */
export async function stored(
  t: TestApp,
  subscriptionId: string,
): Promise<{ events: number; aggregates: number; units: number }> {
  const conn = t.orm.em.getConnection();
  const [row] = await conn.execute<{ events: string; aggregates: string; units: string }[]>(
    `select (select count(*) from usage_events where subscription_id = ?) as events,
            (select count(*) from usage_aggregates where subscription_id = ?) as aggregates,
            (select count(*) from usage_units where subscription_id = ?) as units`,
    [subscriptionId, subscriptionId, subscriptionId],
  );
  return { events: Number(row.events), aggregates: Number(row.aggregates), units: Number(row.units) };
}

export async function keysOf(t: TestApp, merchantId: string): Promise<number> {
  const [row] = await t.orm.em
    .getConnection()
    .execute<{ n: string }[]>('select count(*) as n from usage_event_keys where merchant_id = ?', [merchantId]);
  return Number(row.n);
}

/** The partitions of usage_events, by name. */
export async function partitions(t: TestApp): Promise<string[]> {
  const rows = await t.orm.em
    .getConnection()
    .execute<{ name: string }[]>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'usage_events'::regclass order by 1`,
    );
  return rows.map((r) => r.name);
}

/** `usage_events_2026_11` for an instant. */
export const partitionOf = (t: Date | string) => {
  const d = new Date(t);
  return `usage_events_${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
};

/** An error answer's status, code and param. */
export const errorOf = (r: { status: number; body: any }) => [r.status, r.body?.error?.code, r.body?.error?.param];

/** A monthly 49900 INR plan pricing api_calls at 0.25 and gpu_seconds at 250.5 paise per unit. */
export async function meteredPlan(m: TestMerchant, plan: Record<string, unknown> = {}) {
  const catalog = await recurringPlan(m.test, { name: 'API monthly', ...plan }, { amount: 49900 });
  // A quarter paisa per call; 250.5 paise per GPU second (fractional, so the exact sum of ten 0.1 matters).
  for (const [event_type, unit_amount_decimal] of [
    ['api_calls', '0.25'],
    ['gpu_seconds', '250.5'],
  ]) {
    await ok(
      m.test.post(`/plans/${catalog.plan.id}/usage-rates`, { event_type, currency: 'INR', unit_amount_decimal }),
      201,
    );
  }
  return catalog;
}

/** Amounts of the Razorpay add-ons the sandbox holds for a gateway subscription, oldest first. */
export async function razorpayAddonAmounts(t: TestApp, providerSubscriptionId: string): Promise<number[]> {
  const rows = await t.orm.em.getConnection().execute<{ amount: string }[]>(
    `select data->'item'->>'amount' as amount from sandbox_objects
      where provider = 'razorpay' and type = 'addon' and data->>'subscription_id' = ? order by created_at, id`,
    [providerSubscriptionId],
  );
  return rows.map((a) => Number(a.amount));
}

/** The subscription's usage invoices (its invoices with Usage lines), oldest first. */
export async function usageInvoices(c: Client_, subscriptionId: string): Promise<any[]> {
  return (await invoicesOf(c, subscriptionId)).filter((i) =>
    i.line_items.some((l: any) => l.description.startsWith('Usage: ')),
  );
}

/** Reported but not billed yet in a subscription's aggregates (decimal text; '0': nothing left, nothing billed beyond). */
export async function unbilled(t: TestApp, subscriptionId: string): Promise<string> {
  const [row] = await t.orm.em
    .getConnection()
    .execute<{ left: string }[]>(
      'select trim_scale(coalesce(sum(total_quantity - billed_quantity), 0))::text as left from usage_aggregates where subscription_id = ?',
      [subscriptionId],
    );
  return row.left;
}

/** The gateway command worker's claim, which polls the pool whatever a test does (the only such statement on it). */
const BACKGROUND_CLAIM = /^\s*with due as \(\s*select c\.id from gateway_commands/;

/**
 * Runs `run` with every statement on the service's pool passed to `intercept` first (its text, and `pass` to send it
 * on), which may note it or fail it instead (the command worker's claim is passed on unseen); the pool's own `query` is back afterwards, whatever happened.
 */
export async function interceptPool<T>(
  t: TestApp,
  intercept: (text: string, pass: () => Promise<unknown>) => Promise<unknown>,
  run: () => Promise<T>,
): Promise<T> {
  const pool = t.app.services.plainPool;
  const original = pool.query.bind(pool);
  (pool as unknown as { query: unknown }).query = (config: string | { text: string }, values?: unknown[]) => {
    const text = typeof config === 'string' ? config : config.text;
    if (BACKGROUND_CLAIM.test(text)) return original(config as never, values as never);
    return intercept(text, () => original(config as never, values as never));
  };
  try {
    return await run();
  } finally {
    (pool as unknown as { query: unknown }).query = original;
  }
}

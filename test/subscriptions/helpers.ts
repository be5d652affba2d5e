import crypto from 'node:crypto';
import type { Client_ } from '../harness/app';
import { submitCheckout } from '../harness/checkout';

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
  const p = await ok(c.post(`/products/${product.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly', ...plan }), 201);
  const pr = await ok(c.post(`/plans/${p.id}/prices`, { currency: 'INR', amount: 49900, is_default: true, ...price }), 201);
  return { product, plan: p, price: pr };
}

export function subscriptionBody(planId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    plan_id: planId,
    customer_email: `sub-${rnd()}@example.com`,
    customer_name: 'Asha Rao',
    success_url: 'https://merchant.example/welcome?sub={SUBSCRIPTION_ID}',
    cancel_url: 'https://merchant.example/pricing',
    ...overrides,
  };
}

export async function createSubscription(c: Client_, planId: string, overrides: Record<string, unknown> = {}, headers?: Record<string, string>) {
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

import type { Client_ } from '../harness/app';
import { authorise, createSubscription, ok } from '../subscriptions/helpers';

/** Shared by the analytics tests. */

/** GET /analytics/<path> with query parameters (200 expected). */
export function analytics(
  c: Client_,
  path: 'mrr' | 'churn' | 'ltv' | 'quick-ratio',
  params: Record<string, string | Date | undefined> = {},
) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v instanceof Date ? v.toISOString() : v);
  const qs = q.toString();
  return ok(c.get(`/analytics/${path}${qs ? `?${qs}` : ''}`));
}

/** A subscription created and authorised (default: a good card); answers it as the service shows it after. */
export async function subscribed(
  c: Client_,
  planId: string,
  overrides: Record<string, unknown> = {},
  form: Record<string, string> = { outcome: 'success' },
) {
  const sub = await createSubscription(c, planId, overrides);
  return (await authorise(c, sub, form)).subscription;
}

/** A plan (of a new product) at one default price: `plan` fields over monthly, `price` fields over INR 49900. */
export async function planAt(c: Client_, plan: Record<string, unknown>, price: Record<string, unknown>) {
  const product = await ok(
    c.post('/products', { name: `Analytics ${Math.random().toString(36).slice(2, 8)}`, type: 'subscription' }),
    201,
  );
  const p = await ok(
    c.post(`/products/${product.id}/plans`, { name: 'Plan', billing_frequency: 'monthly', ...plan }),
    201,
  );
  await ok(c.post(`/plans/${p.id}/prices`, { currency: 'INR', amount: 49900, is_default: true, ...price }), 201);
  return p;
}

/** An instant in UTC, `2031-01-10` or `2031-01-10T12:00:00`, as a Date. */
export const at = (s: string) => new Date(s.includes('T') ? `${s}Z` : `${s}T00:00:00Z`);

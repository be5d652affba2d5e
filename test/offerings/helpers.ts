import crypto from 'node:crypto';
import type { Client_ } from '../harness';

/** Shared by the offerings tests: catalog, offerings, packages and customers, through the REST API. */

export const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

export async function ok(p: Promise<{ status: number; text: string; body: any }>, status = 200): Promise<any> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

/** A subscription product with a monthly plan (INR default price, USD price) and a yearly plan. */
export async function product(
  c: Client_,
  name = `Pro ${rnd()}`,
): Promise<{ product: any; monthly: any; yearly: any; prices: any[] }> {
  const p = await ok(c.post('/products', { name, type: 'subscription' }), 201);
  const monthly = await ok(c.post(`/products/${p.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly' }), 201);
  const yearly = await ok(c.post(`/products/${p.id}/plans`, { name: 'Yearly', billing_frequency: 'yearly' }), 201);
  const prices = [
    await ok(c.post(`/plans/${monthly.id}/prices`, { currency: 'INR', amount: 49900 }), 201),
    await ok(c.post(`/plans/${monthly.id}/prices`, { currency: 'USD', amount: 999 }), 201),
    await ok(c.post(`/plans/${yearly.id}/prices`, { currency: 'INR', amount: 499000 }), 201),
  ];
  return { product: p, monthly, yearly, prices };
}

export const offering = (c: Client_, body: Record<string, unknown> = {}) =>
  ok(c.post('/offerings', { lookup_key: `off_${rnd()}`, name: 'Offering', ...body }), 201);

export const pkg = (c: Client_, body: Record<string, unknown> = {}) =>
  ok(c.post('/packages', { lookup_key: `$rc_${rnd()}`, name: 'Package', ...body }), 201);

export const attach = (c: Client_, offeringId: string, packageId: string, position?: number) =>
  ok(
    c.post(
      `/offerings/${offeringId}/packages`,
      position === undefined ? { package_id: packageId } : { package_id: packageId, position },
    ),
  );

/** The package ids of an offering, in position order, and their positions. */
export async function order(c: Client_, offeringId: string): Promise<string[]> {
  const o = await ok(c.get(`/offerings/${offeringId}`));
  expect(o.packages.map((p: any) => p.position)).toEqual(o.packages.map((_: any, i: number) => i));
  return o.packages.map((p: any) => p.id);
}

const STRIPE_TEST = { secret_key: `sk_test_${'s'.repeat(24)}`, webhook_secret: `whsec_${'w'.repeat(24)}` };
const STRIPE_LIVE = { secret_key: `sk_live_${'s'.repeat(24)}`, webhook_secret: `whsec_${'w'.repeat(24)}` };

/** Connects the mode's sandbox Stripe account (customers come from payments: the API has no customer create). */
export async function connect(c: Client_, live = false): Promise<void> {
  await ok(
    c.post('/providers/connections', { provider: 'stripe', credentials: live ? STRIPE_LIVE : STRIPE_TEST }),
    201,
  );
}

/** A customer of the client's merchant and mode (found or created by e-mail through a payment). */
export async function customer(c: Client_, email = `cust-${rnd()}@example.com`): Promise<string> {
  const p = await ok(
    c.post('/payments', {
      amount: 5000,
      currency: 'INR',
      customer_email: email,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    }),
    201,
  );
  return p.customer_id;
}

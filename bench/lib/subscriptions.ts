import crypto from 'node:crypto';
import { mapLimit, requestJson } from './http';
import { BenchMerchant, connectSandbox, createMerchant } from './seed';

/** Subscriptions for the benches: a recurring plan, creates and their mandate checkouts, through the REST API. */

/** The create body of the `POST /v1/subscriptions` scenario and the seeds (a fresh e-mail: a new customer each). */
export function subscriptionBody(planId: string): Record<string, unknown> {
  return {
    plan_id: planId,
    customer_email: `bench-${crypto.randomBytes(6).toString('hex')}@example.com`,
    customer_name: 'Bench Customer',
    success_url: 'http://127.0.0.1:9/welcome?sub={SUBSCRIPTION_ID}',
    cancel_url: 'http://127.0.0.1:9/pricing',
  };
}

/** A subscription product with one monthly plan (no trial) and a default INR price; answers the plan id. */
export async function seedRecurringPlan(baseUrl: string, key: string, name: string): Promise<string> {
  const post = async (path: string, body: unknown) => {
    const r = await requestJson(`${baseUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` }, body });
    if (r.status !== 201) throw new Error(`seed: POST /v1${path} answered ${r.status}: ${r.text.slice(0, 500)}`);
    return r.body as { id: string };
  };
  const product = await post('/products', { name, type: 'subscription' });
  const plan = await post(`/products/${product.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly' });
  await post(`/plans/${plan.id}/prices`, { currency: 'INR', amount: 49_900, is_default: true, setup_fee: 0 });
  return plan.id;
}

export interface CreatedSubscription {
  id: string;
  status: string;
  checkout_url: string;
}

/** POST /v1/subscriptions with a fresh Idempotency-Key; answers the subscription (status created). */
export async function createSubscription(baseUrl: string, key: string, planId: string): Promise<CreatedSubscription> {
  const r = await requestJson(`${baseUrl}/v1/subscriptions`, {
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID() },
    body: subscriptionBody(planId),
  });
  if (r.status !== 201 || typeof r.body?.checkout_url !== 'string') {
    throw new Error(`POST /v1/subscriptions answered ${r.status}: ${r.text.slice(0, 500)}`);
  }
  return r.body;
}

/**
 * Completes the hosted mandate checkout with a good card, as JSON (test/harness/checkout.ts posts the same form).
 * The sandbox delivers the authorisation and first-charge webhooks to the service before it answers its 303, so the
 * subscription is active (cycles_completed 1) once this returns. The redirect is not followed.
 */
export async function completeCheckout(checkoutUrl: string): Promise<void> {
  const res = await fetch(checkoutUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ outcome: 'success' }),
    redirect: 'manual',
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  if (res.status !== 303) throw new Error(`checkout ${checkoutUrl} answered ${res.status}: ${text.slice(0, 300)}`);
}

/** `n` subscriptions created and authorised with at most `concurrency` in flight; answers their ids. */
export async function seedActiveSubscriptions(
  baseUrl: string,
  key: string,
  planId: string,
  n: number,
  concurrency: number,
  progress?: (done: number) => void,
): Promise<string[]> {
  let done = 0;
  return mapLimit(
    Array.from({ length: n }, (_, i) => i),
    concurrency,
    async () => {
      const sub = await createSubscription(baseUrl, key, planId);
      await completeCheckout(sub.checkout_url);
      if (++done % 1000 === 0) progress?.(done);
      return sub.id;
    },
  );
}

/**
 * A merchant of its own for a subscription bench (INR, no rate limit to speak of), its test mode connected to the
 * sandbox, a monthly plan (`name`) whose price one create has registered at the gateway (that subscription is left in
 * status created). Answers the merchant, its test key and the plan id.
 */
export async function subscriptionMerchant(
  baseUrl: string,
  adminToken: string,
  name: string,
): Promise<{ merchant: BenchMerchant; key: string; planId: string }> {
  const merchant = await createMerchant(baseUrl, adminToken, {
    name: `${name} merchant`,
    reporting_currency: 'INR',
    rate_limit_per_second: 1_000_000,
  });
  const key = merchant.keys.test;
  await connectSandbox(baseUrl, key);
  const planId = await seedRecurringPlan(baseUrl, key, name);
  await createSubscription(baseUrl, key, planId);
  return { merchant, key, planId };
}

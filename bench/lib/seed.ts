import { mapLimit, requestJson } from './http';

export interface CatalogShape {
  products: number;
  plansPerProduct: number;
  /** Each plan gets one default price per currency; the first currency is the merchant's reporting currency. */
  currencies: string[];
}

export interface BenchMerchant {
  id: string;
  keys: { test: string; live: string };
}

export async function createMerchant(
  baseUrl: string,
  adminToken: string,
  body: Record<string, unknown>,
): Promise<BenchMerchant> {
  const r = await requestJson(`${baseUrl}/v1/admin/merchants`, {
    headers: { authorization: `Bearer ${adminToken}` },
    body,
  });
  if (r.status !== 201 || !r.body?.api_keys?.test)
    throw new Error(`POST /v1/admin/merchants answered ${r.status}: ${r.text.slice(0, 500)}`);
  return { id: r.body.id, keys: r.body.api_keys };
}

const FREQUENCIES = ['monthly', 'yearly', 'weekly', 'daily'];

/** Creates the catalog through the REST API, as a merchant would. Returns the product ids. */
export async function seedCatalog(baseUrl: string, key: string, shape: CatalogShape): Promise<string[]> {
  const post = async (path: string, body: unknown) => {
    const r = await requestJson(`${baseUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` }, body });
    if (r.status !== 201) throw new Error(`seed: POST /v1${path} answered ${r.status}: ${r.text.slice(0, 500)}`);
    return r.body as { id: string };
  };
  const indices = (n: number) => Array.from({ length: n }, (_, i) => i);
  return mapLimit(indices(shape.products), 4, async (p) => {
    const product = await post('/products', {
      name: `Bench product ${p + 1}`,
      description: `Product ${p + 1} of the benchmark catalog`,
      type: 'subscription',
    });
    for (const i of indices(shape.plansPerProduct)) {
      const plan = await post(`/products/${product.id}/plans`, {
        name: `Plan ${i + 1}`,
        billing_frequency: FREQUENCIES[i % FREQUENCIES.length],
        trial_period_days: 7,
      });
      for (const [c, currency] of shape.currencies.entries()) {
        await post(`/plans/${plan.id}/prices`, { currency, amount: 49_900 + 1000 * i + c, setup_fee: 0 });
      }
    }
    return product.id;
  });
}

/** Payment-creation body used by the seed and by the `POST /v1/payments` scenario. */
export const PAYMENT_BODY = {
  amount: 49_900,
  currency: 'INR',
  customer_email: 'bench@example.com',
  success_url: 'http://127.0.0.1:9/ok?payment={PAYMENT_ID}',
  cancel_url: 'http://127.0.0.1:9/cancel',
};

/** Connects the merchant's test mode to the gateway sandbox's Stripe (a fresh sandbox account). */
export async function connectSandbox(baseUrl: string, key: string): Promise<void> {
  const secret = Math.random().toString(36).slice(2);
  const conn = await requestJson(`${baseUrl}/v1/providers/connections`, {
    headers: { authorization: `Bearer ${key}` },
    body: {
      provider: 'stripe',
      credentials: { secret_key: `sk_test_bench${secret}`, webhook_secret: `whsec_${secret}` },
    },
  });
  if (conn.status !== 201)
    throw new Error(`seed: POST /v1/providers/connections answered ${conn.status}: ${conn.text.slice(0, 500)}`);
}

/** Connects the merchant to the gateway sandbox (Stripe-compatible) and creates one payment to read back. */
export async function seedPayments(baseUrl: string, key: string): Promise<string> {
  await connectSandbox(baseUrl, key);
  const payment = await requestJson(`${baseUrl}/v1/payments`, {
    headers: { authorization: `Bearer ${key}` },
    body: PAYMENT_BODY,
  });
  if (payment.status !== 201)
    throw new Error(`seed: POST /v1/payments answered ${payment.status}: ${payment.text.slice(0, 500)}`);
  return payment.body.id as string;
}

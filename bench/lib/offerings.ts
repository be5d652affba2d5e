import { requestJson } from './http';

/**
 * The resolve bench's storefront, for the merchant whose 10,000 customers and 20,000 subscriptions the entitlement
 * bench stored (lib/entitlements.ts): three products (each a monthly and a yearly plan, INR and USD prices), three
 * packages (monthly: products 1 and 2; annual: 2 and 3; lifetime: 3), the current offering with all three and a
 * paywall, two more offerings for the arms of a running experiment that targets `country` IN or BR 50/50, each with its
 * paywall. Made through the REST API, as a merchant would.
 */

export interface ResolveBench {
  key: string;
  customerIds: string[];
  currentOfferingId: string;
  experimentId: string;
  /** The offerings of the experiment's arms. */
  armOfferingIds: string[];
}

/** The countries requests carry, in turn: two of three match the experiment's targeting. */
export const RESOLVE_COUNTRIES = ['IN', 'US', 'BR'];

/** The body of the i-th resolve request: the i-th customer in turn, its country in turn. */
export function resolveBody(
  bench: ResolveBench,
  i: number,
): { customer_id: string; attributes: Record<string, unknown> } {
  return {
    customer_id: bench.customerIds[i % bench.customerIds.length],
    attributes: {
      country: RESOLVE_COUNTRIES[i % RESOLVE_COUNTRIES.length],
      platform: ['ios', 'android'][i % 2],
      app_version: 42,
    },
  };
}

export async function seedResolveBench(serviceUrl: string, key: string, customerIds: string[]): Promise<ResolveBench> {
  const post = async (path: string, body: unknown) => {
    const r = await requestJson(`${serviceUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` }, body });
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`seed: POST /v1${path} answered ${r.status}: ${r.text.slice(0, 500)}`);
    return r.body as { id: string; [k: string]: any };
  };
  const products: string[] = [];
  for (const name of ['Basic', 'Pro', 'Lifetime']) {
    const product = await post('/products', {
      name: `Resolve ${name}`,
      description: `${name} tier`,
      type: 'subscription',
    });
    for (const [plan, frequency, amount] of [
      ['Monthly', 'monthly', 49_900],
      ['Yearly', 'yearly', 499_000],
    ] as const) {
      const p = await post(`/products/${product.id}/plans`, {
        name: plan,
        billing_frequency: frequency,
        trial_period_days: 7,
      });
      await post(`/plans/${p.id}/prices`, { currency: 'INR', amount });
      await post(`/plans/${p.id}/prices`, { currency: 'USD', amount: Math.round(amount / 80) });
    }
    products.push(product.id);
  }
  const packages: string[] = [];
  for (const [lookupKey, linked] of [
    ['$rc_monthly', [0, 1]],
    ['$rc_annual', [1, 2]],
    ['$rc_lifetime', [2]],
  ] as const) {
    const pkg = await post('/packages', { lookup_key: `resolve${lookupKey}`, name: lookupKey.slice(4) });
    await post(`/packages/${pkg.id}/products`, { product_ids: linked.map((i) => products[i]) });
    packages.push(pkg.id);
  }
  const offering = async (lookupKey: string, order: number[], template: string, isCurrent = false) => {
    const o = await post('/offerings', {
      lookup_key: lookupKey,
      name: lookupKey,
      is_current: isCurrent,
      metadata: { source: 'bench' },
    });
    for (const i of order) await post(`/offerings/${o.id}/packages`, { package_id: packages[i] });
    await post('/paywalls', {
      name: `${lookupKey} paywall`,
      offering_id: o.id,
      template,
      config: {
        title: 'Go premium',
        subtitle: 'Cancel any time',
        colors: { accent: '#6b4eff', background: '#ffffff' },
        features: ['No ads', 'Offline', 'Family sharing'],
      },
    });
    return o.id;
  };
  const currentOfferingId = await offering('resolve_default', [0, 1, 2], 'simple', true);
  const control = await offering('resolve_control', [0, 1], 'feature_comparison');
  const annualFirst = await offering('resolve_annual_first', [1, 0, 2], 'sliding_cards');
  const experiment = await post('/experiments', {
    name: 'Annual first',
    targeting: { country: ['IN', 'BR'] },
    variants: [
      { key: 'control', offering_id: control, traffic_percent: 50, is_control: true },
      { key: 'annual_first', offering_id: annualFirst, traffic_percent: 50 },
    ],
  });
  await post(`/experiments/${experiment.id}/start`, {});
  return { key, customerIds, currentOfferingId, experimentId: experiment.id, armOfferingIds: [control, annualFirst] };
}

/**
 * Tenancy: a record belongs to one merchant and one mode. Any other key (another merchant, or the same merchant's
 * other mode) gets 404 resource_not_found for its id, indistinguishable from an id that does not exist, and never
 * sees it in a list. Driven by the route table, so a new route with `{id}` fails here until it has a case.
 */
import { routes } from '../../rest-shim/routes';
import { TestMerchant, Client_, useHarness, submitCheckout } from '../harness';
import { errorFingerprint, gqlErrorFingerprint, gqlRequest, unknownId } from '../harness/http';

const h = useHarness();
let a: TestMerchant;
let b: TestMerchant;

/** Merchant A's test-mode records, by the first path segment of the routes that take their id. */
const A: Record<string, string> = {};
/** A second set, for the control requests through A's own key (writes would otherwise change the records above). */
const A2: Record<string, string> = {};
/** Records of the other tenants, so their lists are not trivially empty. */
const other: { bTest: string[]; aLive: string[]; bFamily: string } = { bTest: [], aLive: [], bFamily: '' };

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
  A['product-families'] = (await a.test.post('/product-families', { name: 'A family' })).body.id;
  A.products = (
    await a.test.post('/products', {
      name: 'A product',
      type: 'subscription',
      product_family_id: A['product-families'],
    })
  ).body.id;
  A.plans = (
    await a.test.post(`/products/${A.products}/plans`, { name: 'A plan', billing_frequency: 'monthly' })
  ).body.id;
  A.prices = (await a.test.post(`/plans/${A.plans}/prices`, { currency: 'INR', amount: 1000 })).body.id;
  for (const v of Object.values(A)) expect(v).toMatch(/^[0-9a-f-]{36}$/);
  A2['product-families'] = (await a.test.post('/product-families', { name: 'A family 2' })).body.id;
  A2.products = (await a.test.post('/products', { name: 'A product 2', type: 'subscription' })).body.id;
  A2.plans = (
    await a.test.post(`/products/${A2.products}/plans`, { name: 'A plan 2', billing_frequency: 'monthly' })
  ).body.id;
  A2.prices = (await a.test.post(`/plans/${A2.plans}/prices`, { currency: 'INR', amount: 2000 })).body.id;

  // Gateway connections (sandbox credentials), a payment and its customer.
  A.providers = (await a.test.post('/providers/connections', { provider: 'stripe', credentials: STRIPE_TEST })).body.id;
  A2.providers = (
    await a.test.post('/providers/connections', { provider: 'razorpay', credentials: RAZORPAY_TEST })
  ).body.id;
  const pay = (email: string) =>
    a.test.post('/payments', {
      amount: 5000,
      currency: 'INR',
      customer_email: email,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
  A.payments = (await pay('a1@example.com')).body.id;
  A2.payments = (await pay('a2@example.com')).body.id;
  const subscribe = (email: string, set: Record<string, string>) =>
    a.test.post('/subscriptions', {
      plan_id: set.plans,
      price_id: set.prices,
      customer_email: email,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
  A.subscriptions = (await subscribe('a1@example.com', A)).body.id;
  A2.subscriptions = (await subscribe('a2@example.com', A2)).body.id;
  // Paid payments have invoices.
  for (const [set, email] of [
    [A, 'a3@example.com'],
    [A2, 'a4@example.com'],
  ] as const) {
    const payment = (await pay(email)).body;
    expect((await submitCheckout(payment.checkout_url)).status).toBe(303);
    set.invoices = (await a.test.get(`/invoices?customer_id=${payment.customer_id}`)).body.data[0]?.id;
  }
  const customers = (await a.test.get('/customers?limit=100')).body.data as any[];
  A.customers = customers.find((c) => c.email === 'a1@example.com')?.id;
  A2.customers = customers.find((c) => c.email === 'a2@example.com')?.id;
  for (const set of [A, A2])
    for (const [k, v] of Object.entries(set)) expect([k, v]).toEqual([k, expect.stringMatching(/^[0-9a-f-]{36}$/)]);

  // Webhook endpoints and a delivery to each (trigger-test aimed at one endpoint).
  for (const set of [A, A2]) {
    set['webhooks/endpoints'] = (
      await a.test.post('/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', mode: 'test' })
    ).body.id;
    set['webhooks/deliveries'] = (
      await a.test.post('/webhooks/trigger-test', { endpoint_id: set['webhooks/endpoints'] })
    ).body.deliveries[0].id;
  }

  // Coupons (codes are per tenant: B and A's live mode may use the same code).
  A.coupons = (await a.test.post('/coupons', { code: 'TENANCY1', percent_off: 10, duration: 'once' })).body.id;
  A2.coupons = (await a.test.post('/coupons', { code: 'TENANCY2', percent_off: 10, duration: 'once' })).body.id;

  // Entitlements.
  A.entitlements = (await a.test.post('/entitlements', { lookup_key: 'a_gate', name: 'A gate' })).body.id;
  A2.entitlements = (await a.test.post('/entitlements', { lookup_key: 'a_gate_2', name: 'A gate 2' })).body.id;

  // Experiments: a draft of each set, on an offering of A's (the control starts, then stops A2's).
  for (const [set, n] of [
    [A, 1],
    [A2, 2],
  ] as const) {
    const offeringId = (await a.test.post('/offerings', { lookup_key: `exp-offer-${n}`, name: 'A offering' })).body.id;
    set.experiments = (
      await a.test.post('/experiments', {
        name: 'A experiment',
        variants: [
          { key: 'a', offering_id: offeringId, traffic_percent: 50, is_control: true },
          { key: 'b', offering_id: offeringId, traffic_percent: 50 },
        ],
      })
    ).body.id;
  }

  // Offerings, packages and paywalls.
  for (const [set, n] of [
    [A, 1],
    [A2, 2],
  ] as const) {
    set.offerings = (await a.test.post('/offerings', { lookup_key: `a_offering_${n}`, name: 'A offering' })).body.id;
    set.packages = (await a.test.post('/packages', { lookup_key: `a_package_${n}`, name: 'A package' })).body.id;
    set.paywalls = (
      await a.test.post('/paywalls', { name: 'A paywall', offering_id: set.offerings, template: 'simple' })
    ).body.id;
  }

  other.bFamily = (await b.test.post('/product-families', { name: 'B family' })).body.id;
  other.bTest.push((await b.test.post('/products', { name: 'B product', type: 'one_time' })).body.id);
  other.aLive.push((await a.live.post('/products', { name: 'A live product', type: 'one_time' })).body.id);
});

const STRIPE_TEST = { secret_key: `sk_test_${'s'.repeat(24)}`, webhook_secret: `whsec_${'w'.repeat(24)}` };
const RAZORPAY_TEST = { key_id: `rzp_test_${'k'.repeat(14)}`, key_secret: 'secret', webhook_secret: 'whsecret' };

/**
 * One case per route with a path id: a valid request (so only the id can make it fail) and how to check that
 * merchant A's record was left alone. The record used is chosen by the path's first segment.
 */
const CASES: Record<string, { body?: Record<string, unknown>; own?: [number, string] }> = {
  'get /product-families/{id}': {},
  'get /products/{id}': {},
  'post /products/{id}': { body: { name: 'Stolen', status: 'inactive' } },
  'post /products/{id}/plans': { body: { name: 'Intruder plan', billing_frequency: 'monthly' } },
  'get /plans/{id}': {},
  'post /plans/{id}/prices': { body: { currency: 'INR', amount: 1, is_default: true } },
  'post /plans/{id}/usage-rates': { body: { event_type: 'intruder_calls', currency: 'INR', unit_amount_decimal: '1' } },
  // A list envelope, no id of its own: found for its owner.
  'get /plans/{id}/usage-rates': { own: [200, undefined as unknown as string] },
  'get /prices/{id}': {},
  'delete /providers/connections/{id}': {},
  'get /payments/{id}': {},
  // A pending payment cannot be refunded: for its owner that is a 409, which proves the record was found.
  'post /payments/{id}/refund': { body: { amount: 100 }, own: [409, 'payment_not_refundable'] },
  'get /customers/{id}': {},
  'post /customers/{id}': { body: { name: 'Stolen', email: 'stolen@example.com' } },
  'get /subscriptions/{id}': {},
  'get /offerings/{id}': {},
  'post /offerings/{id}/packages': {
    get body() {
      return { package_id: A.packages, position: 0 };
    },
  },
  'post /offerings/{id}/make-current': {},
  'get /packages/{id}': {},
  'post /packages/{id}/products': {
    get body() {
      return { product_ids: [A.products] };
    },
  },
  'get /paywalls/{id}': {},
  'get /entitlements/{id}': {},
  'post /entitlements/{id}/products': {
    get body() {
      return { product_ids: [A.products] };
    },
  },
  'get /experiments/{id}': {},
  'post /experiments/{id}': { body: { name: 'Stolen' } },
  'post /experiments/{id}/start': {},
  'post /experiments/{id}/stop': {}, // after the control's start above: A2's experiment is running
  // Results carry experiment_id, not id: found for its owner.
  'get /experiments/{id}/results': { own: [200, undefined as unknown as string] },
  // A bare array: found for its owner, no id of its own.
  'get /subscriptions/{id}/events': { own: [200, undefined as unknown as string] },
  // A subscription whose checkout is still open can be neither paused nor resumed: a 409 proves it was found.
  'post /subscriptions/{id}/pause': { own: [409, 'invalid_state_transition'] },
  'post /subscriptions/{id}/resume': { own: [409, 'invalid_state_transition'] },
  'post /subscriptions/{id}/cancel': {},
  // After the control's cancel above, A2's subscription has ended: 409 for its owner.
  'post /subscriptions/{id}/change-plan': {
    body: { plan_id: '00000000-0000-7000-8000-000000000000' },
    own: [409, 'invalid_state_transition'],
  },
  'post /subscriptions/{id}/change-plan/preview': {
    body: { plan_id: '00000000-0000-7000-8000-000000000000' },
    own: [409, 'invalid_state_transition'],
  },
  'post /subscriptions/{id}/mandate-setup': {
    body: { success_url: 'https://shop.example/account' },
    own: [409, 'invalid_state_transition'],
  },
  // Nothing scheduled on A2's ended subscription: a 409 proves it was found.
  'delete /subscriptions/{id}/scheduled-change': { own: [409, 'invalid_state_transition'] },
  'delete /subscriptions/{id}/scheduled-cancellation': { own: [409, 'invalid_state_transition'] },
  'get /invoices/{id}': {},
  // A PDF, not JSON: found for its owner.
  'get /invoices/{id}/pdf': { own: [200, undefined as unknown as string] },
  // Not an e-invoice: refused for its owner, unknown to everyone else.
  'post /invoices/{id}/e-invoice/retry': { own: [409, 'invalid_state_transition'] },
  'post /invoices/{id}/e-invoice/cancel': { body: { reason: 'duplicate' }, own: [409, 'e_invoice_not_cancellable'] },
  'get /webhooks/endpoints/{id}': {},
  'post /webhooks/endpoints/{id}/toggle': { body: { enabled: true } },
  'post /webhooks/endpoints/{id}/roll-secret': {},
  'get /webhooks/deliveries/{id}': {},
  'post /webhooks/deliveries/{id}/retry': {},
  'delete /webhooks/endpoints/{id}': {}, // after the other endpoint routes in the table: the control deletes A2's
  'get /coupons/{id}': {},
};

// Merchant routes: an operator route names any merchant by id on purpose (test/cli/cadence.test.ts).
const idRoutes = routes.filter((r) => r.path.includes('{id}') && r.auth !== 'admin');

function call(client: Client_, method: string, path: string, body?: Record<string, unknown>) {
  return method === 'get'
    ? client.get(path)
    : method === 'delete'
      ? client.delete(path)
      : client.post(path, body ?? {});
}

/** Merchant A's record for a route: `/plans/{id}/prices` -> A's plan. */
function recordFor(path: string, set = A): string {
  const parts = path.split('/');
  const kind = set[`${parts[1]}/${parts[2]}`] ? `${parts[1]}/${parts[2]}` : parts[1]; // `/webhooks/endpoints/{id}`
  const id = set[kind];
  if (!id) throw new Error(`tenancy.test.ts: no record of merchant A for "${kind}": add one in beforeAll`);
  return id;
}

describe('the route table', () => {
  it('has a tenancy case for every route with an {id}', () => {
    // A route listed here needs an entry in CASES (and a record of merchant A for its first path segment).
    const missing = idRoutes.map((r) => `${r.method} ${r.path}`).filter((k) => !(k in CASES));
    expect(missing).toEqual([]);
    // and the cases are real routes (a renamed route must not leave a dead case behind)
    const known = new Set(idRoutes.map((r) => `${r.method} ${r.path}`));
    expect(Object.keys(CASES).filter((k) => !known.has(k))).toEqual([]);
    expect(idRoutes.length).toBeGreaterThanOrEqual(7);
  });
});

describe.each(idRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s', (_name, route) => {
  const kase = () => CASES[`${route.method} ${route.path}`];

  it("works for merchant A's own key (control: the request itself is valid)", async () => {
    const id = recordFor(route.path, A2);
    const r = await call(a.test, route.method, route.path.replace('{id}', id), kase()?.body);
    const own = kase()?.own;
    if (own) {
      expect([r.status, r.body.error?.code]).toEqual(own);
    } else {
      expect(r.status).toBe(route.status ?? 200);
      if (route.method !== 'post') expect(r.body.id).toBe(id);
    }
  });

  it.each([
    ['another merchant', () => b.test],
    ["the same merchant's live key", () => a.live],
    ["another merchant's live key", () => b.live],
  ])('answers 404 to %s, exactly like an unknown id', async (_who, client) => {
    const id = recordFor(route.path);
    const ghost = unknownId();
    const theirs = await call(client(), route.method, route.path.replace('{id}', id), kase()?.body);
    const none = await call(client(), route.method, route.path.replace('{id}', ghost), kase()?.body);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
    expect(theirs.body.error.request_id).toBe(theirs.headers.get('request-id'));
    expect(errorFingerprint(theirs, id)).toEqual(errorFingerprint(none, ghost));
    // nothing in the answer is about the record itself
    expect(theirs.text).not.toContain('A product');
    expect(theirs.text).not.toContain('A plan');
  });
});

describe("writes through another tenant's id change nothing", () => {
  it("keeps A's product, plans and prices as they were", async () => {
    const product = await a.test.get(`/products/${A.products}`);
    expect(product.status).toBe(200);
    expect(product.body).toMatchObject({ name: 'A product', status: 'active', livemode: false });
    expect(product.body.plans.map((p: any) => p.id)).toEqual([A.plans]);
    const plan = await a.test.get(`/plans/${A.plans}`);
    expect(plan.body.prices.map((p: any) => p.id)).toEqual([A.prices]);
    expect(plan.body.default_price.id).toBe(A.prices);
    // and nothing was created in the intruders' own catalogs either
    for (const c of [b.test, a.live, b.live]) {
      const list = await c.get('/products?limit=100');
      for (const p of list.body.data) expect(p.plans.map((x: any) => x.name)).not.toContain('Intruder plan');
    }
  });

  it("refuses A's family as product_family_id of B's product", async () => {
    const r = await b.test.post('/products', { name: 'x', type: 'one_time', product_family_id: A['product-families'] });
    const ghost = unknownId();
    const none = await b.test.post('/products', { name: 'x', type: 'one_time', product_family_id: ghost });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 'resource_not_found', param: 'product_family_id' });
    expect(errorFingerprint(r, A['product-families'])).toEqual(errorFingerprint(none, ghost));
    const live = await a.live.post('/products', {
      name: 'x',
      type: 'one_time',
      product_family_id: A['product-families'],
    });
    expect(live.status).toBe(404);
  });
});

describe('lists', () => {
  const listRoutes = routes.filter((r) => r.method === 'get' && !r.path.includes('{') && r.tag === 'Catalog');

  it('covers every catalog list route', () => {
    expect(listRoutes.map((r) => r.path).sort()).toEqual(['/product-families', '/products']);
  });

  it.each(listRoutes.map((r) => [r.path]))('%s shows each tenant only its own records', async (path) => {
    const own = async (c: Client_) => {
      const r = await c.get(`${path}?limit=100`);
      expect(r.status).toBe(200);
      expect(r.body.has_more).toBe(false);
      return r.body.data as any[];
    };
    const aTest = await own(a.test);
    const aLive = await own(a.live);
    const bTest = await own(b.test);
    const bLive = await own(b.live);
    const ids = (rows: any[]) => rows.map((x) => x.id);
    const aTestId = path === '/products' ? A.products : A['product-families'];
    expect(ids(aTest)).toContain(aTestId);
    expect(ids(aTest)).toContain(path === '/products' ? A2.products : A2['product-families']);
    for (const rows of [aLive, bTest, bLive]) expect(ids(rows)).not.toContain(aTestId);
    // every record in every list is the caller's mode, and the four lists are disjoint
    expect(aTest.every((x) => x.livemode === false)).toBe(true);
    expect(aLive.every((x) => x.livemode === true)).toBe(true);
    expect(bTest.every((x) => x.livemode === false)).toBe(true);
    const all = [...ids(aTest), ...ids(aLive), ...ids(bTest), ...ids(bLive)];
    expect(new Set(all).size).toBe(all.length);
    if (path === '/products') {
      expect(ids(aLive)).toEqual(other.aLive);
      expect(ids(bTest)).toEqual(other.bTest);
      expect(ids(bLive)).toEqual([]);
    } else {
      expect(ids(bTest)).toEqual([other.bFamily]);
      expect(ids(aLive)).toEqual([]);
    }
  });

  // (GET /test-clock is no list: it answers live keys 400 test_mode_only, see test/test-clock/test-clock.test.ts)
  // (GET /usage/summary needs a subscription_id: see 'usage' below)
  it.each(
    routes
      .filter(
        (r) =>
          r.method === 'get' &&
          !r.path.includes('{') &&
          r.auth !== 'admin' &&
          r.path !== '/test-clock' &&
          r.path !== '/usage/summary',
      )
      .map((r) => [r.path]),
  )("GET %s never shows merchant A's test records to another key", async (path) => {
    const mine = await a.test.get(path);
    expect(mine.status).toBe(200);
    const ownIds = Object.values(A).filter((id) => mine.text.includes(id));
    for (const c of [b.test, b.live, a.live]) {
      const r = await c.get(path);
      expect(r.status).toBe(200);
      for (const id of Object.values(A)) expect(r.text).not.toContain(id);
    }
    // the list is not trivially empty for its owner (a check that can fail)
    if (['/products', '/product-families', '/payments', '/customers', '/providers/connections'].includes(path)) {
      expect(ownIds.length).toBeGreaterThan(0);
    }
  });

  it('filters do not widen the scope', async () => {
    const r = await b.test.get('/products?status=active&type=subscription&limit=100');
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.id)).not.toContain(A.products);
    expect(r.body.data).toEqual([]);
  });
});

describe('GraphQL', () => {
  const ONE: Record<string, [string, string]> = {
    product: ['products', '{ id name plans { id prices { id } } }'],
    plan: ['plans', '{ id name prices { id } }'],
    price: ['prices', '{ id amount }'],
    productFamily: ['product-families', '{ id name }'],
  };

  it.each(Object.keys(ONE))('%s(id) of another tenant is not found, exactly like an unknown id', async (field) => {
    const [kind, sel] = ONE[field];
    const id = A[kind];
    const q = `query($id: ID!) { ${field}(id: $id) ${sel} }`;
    const mine = await gqlRequest(h.app.url, a.keys.test, q, { id });
    expect(mine.body.errors).toBeUndefined();
    expect(mine.body.data[field].id).toBe(id);
    for (const key of [b.keys.test, a.keys.live, b.keys.live]) {
      const theirs = await gqlRequest(h.app.url, key, q, { id });
      const ghost = unknownId();
      const none = await gqlRequest(h.app.url, key, q, { id: ghost });
      expect(theirs.body.errors?.[0]?.extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
      expect(theirs.body.data ?? null).toBeNull();
      expect(gqlErrorFingerprint(theirs, id)).toEqual(gqlErrorFingerprint(none, ghost));
    }
  });

  it("products and productFamilies list only the caller's records", async () => {
    const q =
      '{ products(first: 100) { totalCount edges { node { id livemode } } } productFamilies(first: 100) { totalCount edges { node { id } } } }';
    const seen = async (key: string) => {
      const r = await gqlRequest(h.app.url, key, q);
      expect(r.body.errors).toBeUndefined();
      const d = r.body.data;
      expect(d.products.totalCount).toBe(d.products.edges.length);
      expect(d.productFamilies.totalCount).toBe(d.productFamilies.edges.length);
      return {
        products: d.products.edges.map((e: any) => e.node.id),
        families: d.productFamilies.edges.map((e: any) => e.node.id),
      };
    };
    expect(await seen(a.keys.test)).toEqual({
      products: [A2.products, A.products],
      families: [A2['product-families'], A['product-families']],
    });
    expect(await seen(a.keys.live)).toEqual({ products: other.aLive, families: [] });
    expect(await seen(b.keys.test)).toEqual({ products: other.bTest, families: [other.bFamily] });
    expect(await seen(b.keys.live)).toEqual({ products: [], families: [] });
  });

  it("mutations on another tenant's records are not found and change nothing", async () => {
    const mutations: [string, Record<string, unknown>][] = [
      ['mutation($id: ID!) { updateProduct(id: $id, input: { name: "Stolen" }) { id } }', { id: A.products }],
      [
        'mutation($id: ID!) { createPlan(productId: $id, input: { name: "X", billingFrequency: MONTHLY }) { id } }',
        { id: A.products },
      ],
      [
        'mutation($id: ID!) { createPrice(planId: $id, input: { currency: "INR", amount: 5 }) { id } }',
        { id: A.plans },
      ],
    ];
    for (const [q, vars] of mutations) {
      for (const key of [b.keys.test, a.keys.live]) {
        const r = await gqlRequest(h.app.url, key, q, vars);
        expect(r.body.errors?.[0]?.extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
      }
    }
    const r = await a.test.gql('query($id: ID!) { product(id: $id) { name plans { id prices { id } } } }', {
      id: A.products,
    });
    expect(r.data).toEqual({ product: { name: 'A product', plans: [{ id: A.plans, prices: [{ id: A.prices }] }] } });
  });
});

describe('usage', () => {
  const ghostSub = () => unknownId();
  let active: string;
  beforeAll(async () => {
    // An active subscription of A's (Stripe is connected in test mode) with one event.
    const sub = (
      await a.test.post('/subscriptions', {
        plan_id: A.plans,
        price_id: A.prices,
        customer_email: 'usage@example.com',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
      })
    ).body;
    expect((await submitCheckout(sub.checkout_url)).status).toBe(303);
    active = sub.id;
    expect(
      (await a.test.post('/usage/events', { subscription_id: active, event_type: 'calls', quantity: 1, unit: 'u' }))
        .status,
    ).toBe(201);
  });

  const event = (id: string) => ({ subscription_id: id, event_type: 'calls', quantity: 5, unit: 'u' });

  it.each([
    ['another merchant', () => b.test],
    ["the same merchant's live key", () => a.live],
    ["another merchant's live key", () => b.live],
  ])(
    "%s cannot report against A's subscription or read its usage: 404, exactly like an unknown id",
    async (_who, client) => {
      const c = client();
      for (const [path, body, param] of [
        ['/usage/events', event, 'subscription_id'],
        ['/usage/events/batch', (id: string) => ({ events: [event(id)] }), 'events[0].subscription_id'],
      ] as const) {
        const ghost = ghostSub();
        const theirs = await c.post(path, body(active));
        const none = await c.post(path, body(ghost));
        expect(theirs.status).toBe(404);
        expect(theirs.body.error).toMatchObject({ code: 'resource_not_found', param });
        expect(errorFingerprint(theirs, active)).toEqual(errorFingerprint(none, ghost));
      }
      const ghost = ghostSub();
      const read = await c.get(`/usage/summary?subscription_id=${active}`);
      const none = await c.get(`/usage/summary?subscription_id=${ghost}`);
      expect(read.status).toBe(404);
      expect(errorFingerprint(read, active)).toEqual(errorFingerprint(none, ghost));
      const q = 'query($id: ID!) { usageSummary(subscriptionId: $id) { aggregations { totalQuantityDecimal } } }';
      const gql = await gqlRequest(h.app.url, c.key, q, { id: active });
      expect(gql.body.errors?.[0]?.extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
    },
  );

  it("A's usage is as A reported it, nothing added by the others", async () => {
    const r = await a.test.get(`/usage/summary?subscription_id=${active}`);
    expect(r.status).toBe(200);
    expect(r.body.aggregations.map((x: any) => [x.event_type, x.total_quantity_decimal])).toEqual([['calls', '1']]);
  });
});

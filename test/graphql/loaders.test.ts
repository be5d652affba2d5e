/**
 * Nested fields resolve through per-request loaders (docs/api.md): 100 products x 3 plans x 2 prices take a
 * handful of SQL statements on both transports, and the answer is complete.
 */
import { make, Mode } from '../../src/core/entity';
import { BillingFrequency, Plan, Price, Product, ProductType } from '../../src/modules/catalog/catalog.entities';
import { TestMerchant, useHarness } from '../harness';
import { connect, paymentBody } from '../payments/helpers';

const h = useHarness();
let m: TestMerchant;
const productIds: string[] = [];

beforeAll(async () => {
  m = await h.merchant({ reporting_currency: 'INR' });
  // Seeded through the ORM (fast); REST creates a few more below so both paths are represented.
  const em = h.app.orm.em.fork();
  const tenant = { merchantId: m.id, mode: Mode.TEST };
  for (let i = 0; i < 100; i++) {
    const p = make(Product, { ...tenant, name: `Product ${i}`, type: ProductType.SUBSCRIPTION });
    em.persist(p);
    productIds.push(p.id);
    for (let j = 0; j < 3; j++) {
      const plan = make(Plan, {
        ...tenant,
        productId: p.id,
        name: `Plan ${i}.${j}`,
        billingFrequency: BillingFrequency.MONTHLY,
      });
      em.persist(plan);
      em.persist(
        make(Price, {
          ...tenant,
          planId: plan.id,
          currency: 'INR',
          amount: 1000 * (j + 1),
          setupFee: 0,
          isDefault: true,
          providerPriceIds: {},
        }),
      );
      em.persist(
        make(Price, {
          ...tenant,
          planId: plan.id,
          currency: 'USD',
          amount: 10 * (j + 1),
          setupFee: 0,
          isDefault: true,
          providerPriceIds: {},
        }),
      );
    }
  }
  await em.flush();
  // Noise in another merchant and mode: must neither appear nor cost statements.
  const other = await h.merchant();
  await Promise.all(
    Array.from({ length: 5 }, (_, i) => other.test.post('/products', { name: `O${i}`, type: 'one_time' })),
  );
  await m.live.post('/products', { name: 'live', type: 'one_time' });
  // Warm the key cache so authentication is not counted.
  expect((await m.test.get('/products?limit=1')).status).toBe(200);
  expect((await m.test.gql('{ merchant { id } }')).data.merchant.id).toBe(m.id);
});

/**
 * A catalog write, so the next REST read is computed afresh rather than served from a read cache (a cached answer
 * costs one version check and proves nothing about the loaders).
 */
const freshReads = async () => expect((await m.test.post('/product-families', { name: 'bump' })).status).toBe(201);

/** Runs `fn` and returns how many SQL statements the service sent meanwhile. */
async function statements<T>(fn: () => Promise<T>): Promise<[number, T]> {
  h.app.sql.reset();
  const result = await fn();
  return [h.app.sql.count, result];
}

describe('100 products x 3 plans x 2 prices', () => {
  it('GET /v1/products?limit=100: products, plans, default prices, usage rates (+ at most a cache-version check), all there', async () => {
    await freshReads();
    const [n, r] = await statements(() => m.test.get('/products?limit=100'));
    expect(r.status).toBe(200);
    expect(r.body.data.map((p: any) => p.id)).toEqual([...productIds].reverse());
    expect(r.body.has_more).toBe(false);
    for (const p of r.body.data) {
      expect(p.plans).toHaveLength(3);
      for (const [j, plan] of p.plans.entries()) {
        expect(plan.product_id).toBe(p.id);
        // default_price: the reporting currency's default
        expect(plan.default_price).toMatchObject({
          currency: 'INR',
          amount: 1000 * (j + 1),
          plan_id: plan.id,
          is_default: true,
        });
        expect(plan.usage_rates).toEqual([]);
      }
    }
    expect(n).toBeLessThanOrEqual(5);
  });

  it('the equivalent GraphQL query with every price and totalCount: 5 statements (+ a version check), all there', async () => {
    await freshReads();
    const q = `{ products(first: 100) { totalCount pageInfo { hasNextPage }
      edges { node { id plans { id productId prices { id planId currency amount } defaultPrice { id currency } } } } } }`;
    const [n, r] = await statements(() => m.test.gql(q));
    expect(r.errors).toBeUndefined();
    const conn = r.data.products;
    expect(conn.totalCount).toBe(100);
    expect(conn.pageInfo.hasNextPage).toBe(false);
    expect(conn.edges).toHaveLength(100);
    let prices = 0;
    for (const { node } of conn.edges) {
      expect(node.plans).toHaveLength(3);
      for (const plan of node.plans) {
        expect(plan.productId).toBe(node.id);
        expect(plan.prices.map((p: any) => p.currency)).toEqual(['INR', 'USD']);
        for (const p of plan.prices) expect(p.planId).toBe(plan.id);
        expect(plan.defaultPrice.currency).toBe('INR');
        prices += plan.prices.length;
      }
    }
    expect(prices).toBe(600);
    // products page, count, plans, prices, default prices (+ at most a cache-version check)
    expect(n).toBeLessThanOrEqual(6);
  });

  it('does not grow with the page size', async () => {
    await freshReads();
    const [small] = await statements(() => m.test.get('/products?limit=5'));
    await freshReads();
    const [large] = await statements(() => m.test.get('/products?limit=100'));
    expect(large).toBe(small);
    await freshReads();
    const [one] = await statements(() => m.test.get(`/products/${productIds[0]}`));
    expect(one).toBeLessThanOrEqual(5); // product, plans, default prices, usage rates, version
  });

  it('two aliased lists batch per level, not per row', async () => {
    const q = `{ a: products(first: 50) { edges { node { plans { prices { id } } } } }
                 b: products(first: 100) { edges { node { plans { prices { id } } } } } }`;
    await freshReads();
    const [n, r] = await statements(() => m.test.gql(q));
    expect(r.errors).toBeUndefined();
    expect(r.data.a.edges).toHaveLength(50);
    expect(r.data.b.edges).toHaveLength(100);
    // two pages, then per level one batch (4 when both pages resolve in the same tick, at most 6 when not),
    // + at most a cache-version check
    expect(n).toBeLessThanOrEqual(7);
  });

  it('loaders are per request: a price added between requests is seen by the next one', async () => {
    const plan = (await m.test.get(`/products/${productIds[0]}`)).body.plans[0];
    const added = await m.test.post(`/plans/${plan.id}/prices`, { currency: 'EUR', amount: 7 });
    expect(added.status).toBe(201);
    const r = await m.test.gql(`{ products(first: 100) { edges { node { id plans { id prices { id } } } } } }`);
    const node = r.data.products.edges.find((e: any) => e.node.id === productIds[0]).node;
    expect(node.plans.find((p: any) => p.id === plan.id).prices.map((p: any) => p.id)).toContain(added.body.id);
  });
});

// The payment hot paths have a statement budget (bench/README.md): a regression here costs throughput.
describe('payment statements', () => {
  it('POST /v1/payments: 4 statements with an Idempotency-Key, 2 without; GET /v1/payments/{id}: 1', async () => {
    await connect(m.test, 'stripe');
    await m.test.post('/payments', paymentBody()); // warm: adapter and prepared statements
    // claim the key (with the test clock), read the connection, write customer + payment, store the answer
    const [withKey, created] = await statements(() =>
      m.test.post('/payments', paymentBody(), { 'Idempotency-Key': `k-${Date.now()}` }),
    );
    expect(created.status).toBe(201);
    expect(withKey).toBe(4);
    const [withoutKey, again] = await statements(() => m.test.post('/payments', paymentBody()));
    expect(again.status).toBe(201);
    expect(withoutKey).toBe(2);
    const [reads, got] = await statements(() => m.test.get(`/payments/${created.body.id}`));
    expect(got.body.id).toBe(created.body.id);
    expect(reads).toBe(1);
  });
});

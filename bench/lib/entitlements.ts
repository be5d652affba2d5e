import { Client } from 'pg';
import { requestJson } from './http';
import { connectSandbox, createMerchant } from './seed';

/**
 * The entitlement evaluation bench's data: a merchant of its own with three subscription products, three
 * entitlements linked to them through the REST API (`pro` <- A, B; `premium` <- B; `analytics` <- C), then
 * `customers` customers and `subscriptions` subscriptions written straight into the bench database by SQL (creating
 * them through checkouts would take minutes): each customer has subscriptions/customers of them, over the three
 * products, in a spread of statuses (half active, 15% trialing, the rest paused, past_due, halted or cancelled).
 */

export interface EntitlementBench {
  key: string;
  customerIds: string[];
}

export async function seedEntitlementBench(
  serviceUrl: string,
  databaseUrl: string,
  adminToken: string,
  shape: { customers: number; subscriptions: number },
): Promise<EntitlementBench> {
  const merchant = await createMerchant(serviceUrl, adminToken, {
    name: 'Bench entitlements merchant',
    reporting_currency: 'INR',
    rate_limit_per_second: 1_000_000,
  });
  const key = merchant.keys.test;
  const post = async (path: string, body: unknown) => {
    const r = await requestJson(`${serviceUrl}/v1${path}`, { headers: { authorization: `Bearer ${key}` }, body });
    if (r.status !== 201 && r.status !== 200)
      throw new Error(`seed: POST /v1${path} answered ${r.status}: ${r.text.slice(0, 500)}`);
    return r.body as { id: string };
  };
  await connectSandbox(serviceUrl, key);
  const connections = await requestJson(`${serviceUrl}/v1/providers/connections`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const connectionId = connections.body?.data?.[0]?.id as string;
  const catalog: { product: string; plan: string; price: string }[] = [];
  for (const name of ['A', 'B', 'C']) {
    const product = await post('/products', { name: `Bench product ${name}`, type: 'subscription' });
    const plan = await post(`/products/${product.id}/plans`, { name: 'Monthly', billing_frequency: 'monthly' });
    const price = await post(`/plans/${plan.id}/prices`, { currency: 'INR', amount: 49_900, is_default: true });
    catalog.push({ product: product.id, plan: plan.id, price: price.id });
  }
  const [a, b, c] = catalog.map((x) => x.product);
  for (const [lookupKey, products] of [
    ['pro', [a, b]],
    ['premium', [b]],
    ['analytics', [c]],
  ] as const) {
    const e = await post('/entitlements', { lookup_key: lookupKey, name: lookupKey });
    await post(`/entitlements/${e.id}/products`, { product_ids: products });
  }

  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    await db.query('begin');
    const { rows } = await db.query<{ id: string }>(
      `insert into customers (id, created_at, updated_at, merchant_id, mode, email, name)
       select gen_random_uuid(), now(), now(), $1, 'test', 'bench-ent-' || i || '@example.com', 'Bench ' || i
       from generate_series(1, $2::int) as i
       returning id`,
      [merchant.id, shape.customers],
    );
    const customerIds = rows.map((r) => r.id);
    // Subscription n belongs to customer n % customers, to product n % 3; its status by n % 20.
    await db.query(
      `with cust as (select id, row_number() over (order by id) - 1 as k from unnest($2::uuid[]) as id),
       cat as (select * from unnest($3::uuid[], $4::uuid[], $5::uuid[]) with ordinality as t(product_id, plan_id, price_id, k)),
       n as (select i, i % $6::int as k, (i % 3) + 1 as p,
               case when i % 20 < 10 then 'active' when i % 20 < 13 then 'trialing' when i % 20 < 15 then 'paused'
                    when i % 20 < 17 then 'past_due' when i % 20 < 19 then 'cancelled' else 'halted' end as status,
               now() - ((i % 28) || ' days')::interval as period_start
             from generate_series(0, $7::int - 1) as i)
       insert into subscriptions (id, created_at, updated_at, merchant_id, mode, customer_id, product_id, plan_id, price_id,
         status, currency, amount, setup_fee, billing_frequency, billing_interval, trial_period_days, trial_end_action,
         provider, connection_id, success_url, cancel_url, cancel_at_period_end, anchor_cycle, cycles_completed, metadata,
         retry_attempt, credit_balance, current_period_start, current_period_end, trial_start, trial_end, billing_anchor)
       select gen_random_uuid(), now(), now(), $1, 'test', cust.id, cat.product_id, cat.plan_id, cat.price_id,
         n.status, 'INR', 49900, 0, 'monthly', 1, case when n.status = 'trialing' then 7 else 0 end, 'start_subscription',
         'stripe', $8::uuid, 'http://127.0.0.1:9/ok', 'http://127.0.0.1:9/no', false, 0,
         case when n.status = 'trialing' then 0 else 1 end, '{}'::jsonb, 0, 0,
         n.period_start,
         case when n.status = 'trialing' then n.period_start + interval '7 days' else n.period_start + interval '1 month' end,
         case when n.status = 'trialing' then n.period_start end,
         case when n.status = 'trialing' then n.period_start + interval '7 days' end,
         n.period_start
       from n join cust on cust.k = n.k join cat on cat.k = n.p`,
      [
        merchant.id,
        `{${customerIds.join(',')}}`,
        `{${catalog.map((x) => x.product).join(',')}}`,
        `{${catalog.map((x) => x.plan).join(',')}}`,
        `{${catalog.map((x) => x.price).join(',')}}`,
        shape.customers,
        shape.subscriptions,
        connectionId,
      ],
    );
    await db.query('commit');
    // As autovacuum would have by the time a real merchant has this much data: the planner knows the tables.
    await db.query('analyze customers; analyze subscriptions; analyze entitlement_products; analyze entitlements');
    return { key, customerIds };
  } catch (err) {
    await db.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await db.end();
  }
}

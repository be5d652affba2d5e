import crypto from 'node:crypto';
import { execute, GraphQLSchema, parse } from 'graphql';
import type { MikroORM } from '@mikro-orm/postgresql';
import { createContext } from '../src/core/context';
import { Mode } from '../src/core/entity';
import { logger } from '../src/core/logger';
import type { Services } from '../src/services';
import type { DemoRef } from './examples';

/** The demo merchant /docs tries the API as (docs/api.md "Trying the API in /docs"): its test key is pre-filled. */
export interface DocsDemo {
  merchantId: string;
  testKey: string;
}

const PAGE = 'first: 20';
/** The demo merchant's newest objects of each kind the examples name (test mode), in one read. */
const DEMO_QUERY = parse(`{
  productFamilies(first: 1) { edges { node { id } } }
  products(${PAGE}) { edges { node { id plans { id defaultPrice { id } } } } }
  customers(first: 1) { edges { node { id } } }
  payments(${PAGE}, status: SUCCEEDED) { edges { node { id amountTotal amountRefunded } } }
  subscriptions(${PAGE}) { edges { node { id status planId productId } } }
  providerConnections(${PAGE}) { edges { node { id isDefault } } }
  webhookEndpoints(first: 1) { edges { node { id } } }
  webhookDeliveries(first: 1) { edges { node { id } } }
  experiments(${PAGE}) { edges { node { id status } } }
  offerings(first: 1) { edges { node { id } } }
  packages(first: 1) { edges { node { id } } }
  paywalls(first: 1) { edges { node { id } } }
  entitlements(first: 1) { edges { node { id } } }
  coupons(first: 1) { edges { node { id code } } }
  invoices(first: 1) { edges { node { id } } }
}`);

type Nodes<T> = { edges: { node: T }[] };
interface DemoData {
  productFamilies: Nodes<{ id: string }>;
  products: Nodes<{ id: string; plans: { id: string; defaultPrice: { id: string } | null }[] }>;
  customers: Nodes<{ id: string }>;
  payments: Nodes<{ id: string; amountTotal: number; amountRefunded: number }>;
  subscriptions: Nodes<{ id: string; status: string; planId: string; productId: string }>;
  providerConnections: Nodes<{ id: string; isDefault: boolean }>;
  webhookEndpoints: Nodes<{ id: string }>;
  webhookDeliveries: Nodes<{ id: string }>;
  experiments: Nodes<{ id: string; status: string }>;
  offerings: Nodes<{ id: string }>;
  packages: Nodes<{ id: string }>;
  paywalls: Nodes<{ id: string }>;
  entitlements: Nodes<{ id: string }>;
  coupons: Nodes<{ id: string; code: string }>;
  invoices: Nodes<{ id: string }>;
}

const nodes = <T>(c: Nodes<T>): T[] => c.edges.map((e) => e.node);

/**
 * The values of the examples' demo references (rest-shim/examples.ts) for the demo merchant now: read through the
 * GraphQL schema as that merchant in test mode. A kind the merchant has none of is left out (the fixed example id
 * stays).
 */
export async function demoExampleValues(
  schema: GraphQLSchema,
  orm: MikroORM,
  services: Services,
  demo: DocsDemo,
): Promise<Partial<Record<DemoRef, string>>> {
  const contextValue = createContext({
    em: orm.em as never,
    principal: { kind: 'merchant', merchantId: demo.merchantId, mode: Mode.TEST, apiKeyId: 'docs' },
    requestId: `docs_${crypto.randomBytes(6).toString('hex')}`,
    log: logger,
    services,
  });
  const result = await execute({ schema, document: DEMO_QUERY, contextValue });
  if (result.errors?.length) throw result.errors[0];
  const d = result.data as unknown as DemoData;
  const out: Partial<Record<DemoRef, string>> = {};
  const set = (ref: DemoRef, value: string | undefined) => {
    if (value !== undefined) out[ref] = value;
  };
  // A product's plans come oldest first: reversed, the newest plan of the newest product leads.
  const plans = nodes(d.products).flatMap((p) => [...p.plans].reverse().map((pl) => ({ p, pl })));
  const priced = plans.filter((x) => x.pl.defaultPrice);
  const subscription = nodes(d.subscriptions).find((s) => s.status === 'ACTIVE' || s.status === 'PAUSED');
  const samePlans = priced.filter((x) => x.p.id === subscription?.productId && x.pl.id !== subscription?.planId);
  set('product_family', nodes(d.productFamilies)[0]?.id);
  set('product', nodes(d.products)[0]?.id);
  set('plan', priced[0]?.pl.id);
  set('new_plan', plans[0]?.pl.id);
  set('price', priced[0]?.pl.defaultPrice?.id);
  set('other_plan', (samePlans[0] ?? priced[0])?.pl.id);
  set('customer', nodes(d.customers)[0]?.id);
  set('payment', nodes(d.payments).find((p) => p.amountRefunded < p.amountTotal)?.id);
  set('subscription', subscription?.id);
  set('connection', nodes(d.providerConnections).find((c) => !c.isDefault)?.id);
  set('webhook_endpoint', nodes(d.webhookEndpoints)[0]?.id);
  set('webhook_delivery', nodes(d.webhookDeliveries)[0]?.id);
  set('experiment', nodes(d.experiments).find((e) => e.status === 'DRAFT' || e.status === 'RUNNING')?.id);
  set('offering', nodes(d.offerings)[0]?.id);
  set('package', nodes(d.packages)[0]?.id);
  set('paywall', nodes(d.paywalls)[0]?.id);
  set('entitlement', nodes(d.entitlements)[0]?.id);
  set('coupon', nodes(d.coupons)[0]?.id);
  set('coupon_code', nodes(d.coupons)[0]?.code);
  set('invoice', nodes(d.invoices)[0]?.id);
  set('merchant', demo.merchantId);
  return out;
}

import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createContext, Ctx, tenantEntityManager } from '../../src/core/context';
import { make, Mode } from '../../src/core/entity';
import { logger } from '../../src/core/logger';
import { Customer } from '../../src/modules/customers/customer.entities';
import type { Client_, TestMerchant } from '../harness/app';
import type { Harness } from '../harness';

/** Shared by the experiment tests: offerings to point variants at, customers, experiments, and bucketing by hand. */

const rnd = (n = 4) => crypto.randomBytes(n).toString('hex');

export async function ok(p: Promise<{ status: number; text: string; body: any }>, status = 200): Promise<any> {
  const r = await p;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

/** An offering of the client's merchant and mode (the offerings module's API). */
export async function offering(c: Client_, extra: Record<string, unknown> = {}): Promise<string> {
  return (await ok(c.post('/offerings', { lookup_key: `offer_${rnd()}`, name: 'Offer', ...extra }), 201)).id;
}

/** Customers of a merchant's mode, written directly (the API makes customers only through payments and subscriptions). */
export async function customers(h: Harness, m: TestMerchant, n: number, mode = Mode.TEST): Promise<string[]> {
  const em = tenantEntityManager(h.app.orm.em as unknown as EntityManager, { merchantId: m.id, mode });
  const rows = Array.from({ length: n }, (_, i) => make(Customer, { email: `visitor-${i}-${rnd(6)}@example.com` }));
  em.persist(rows);
  await em.flush();
  return rows.map((c) => c.id);
}

/** A two-arm experiment body: control `a` and treatment `b` on the given offerings. */
export function twoArms(
  control: string,
  treatment: string,
  over: Record<string, unknown> = {},
  split: [number, number] = [50, 50],
) {
  return {
    name: `Paywall test ${rnd()}`,
    targeting: {},
    variants: [
      { key: 'a', name: 'Control', offering_id: control, traffic_percent: split[0], is_control: true },
      { key: 'b', name: 'Annual first', offering_id: treatment, traffic_percent: split[1] },
    ],
    ...over,
  };
}

/** Creates and starts an experiment; answers it as started. */
export async function running(c: Client_, body: Record<string, unknown>): Promise<any> {
  const e = await ok(c.post('/experiments', body), 201);
  return ok(c.post(`/experiments/${e.id}/start`));
}

/** The API document's steps 1-3, literally: the whole digest as one BigInt, mod 100. */
export function expectedBucket(experimentId: string, customerId: string): number {
  const hex = crypto.createHash('sha256').update(`${experimentId}:${customerId}`).digest('hex');
  return Number(BigInt(`0x${hex}`) % 100n);
}

/** Step 4 by hand: the experiment's variants sorted by id, cumulative traffic ranges. */
export function expectedVariant(
  experiment: { id: string; variants: { id: string; traffic_percent: number }[] },
  customerId: string,
) {
  const bucket = expectedBucket(experiment.id, customerId);
  const sorted = [...experiment.variants].sort((a, b) => (a.id < b.id ? -1 : 1));
  let from = 0;
  for (const v of sorted) {
    if (bucket < from + v.traffic_percent) return v;
    from += v.traffic_percent;
  }
  throw new Error('traffic does not cover the bucket');
}

/** POST /offerings/resolve: answers its `experiment` part (null: not in an experiment). */
export async function resolve(c: Client_, customerId: string, attributes: Record<string, unknown> = {}) {
  const body = await ok(c.post('/offerings/resolve', { customer_id: customerId, attributes }));
  return body.experiment as { experiment_id: string; variant_id: string; variant_key: string } | null;
}

/** A request context of a merchant's mode, for calling a service as a resolver would. */
export function serviceCtx(h: Harness, m: TestMerchant, mode = Mode.TEST): Ctx {
  return createContext({
    em: h.app.orm.em as unknown as EntityManager,
    principal: { kind: 'merchant', merchantId: m.id, mode, apiKeyId: 'test' },
    requestId: `test-${rnd()}`,
    log: logger,
    services: h.app.app.services,
  });
}

/** Rows of the service's database (test fixtures and checks). */
export function sql<T = any>(h: Harness, text: string, params: unknown[] = []): Promise<T[]> {
  return h.app.orm.em.getConnection().execute<T[]>(text, params);
}

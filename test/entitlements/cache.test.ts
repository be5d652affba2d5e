import { Client } from 'pg';
import { Client_, eventually, TestMerchant, useHarness } from '../harness';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan, startSecondApp } from '../subscriptions/helpers';
import type { RunningApp } from '../../src/app';
import { EntitlementCache, ENTRY_OVERHEAD_BYTES } from '../../src/modules/entitlements/entitlement.cache';
import { createEntitlement, entitlementsOf, keysOf, link } from './helpers';

/**
 * The evaluation cache (src/modules/entitlements/entitlement.cache.ts) with two service processes on one database
 * (docs/operations.md): an answer cached in one is never served after a change committed through the other, also when
 * the NOTIFY has not arrived (or never does); NOTIFYs evict; a lost LISTEN connection clears; the cache is bounded.
 */

const h = useHarness();
let m: TestMerchant;
let second: RunningApp & { close(): Promise<void> };
/** The merchant's test key on the second process. */
let other: Client_;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
  second = await startSecondApp(h.app);
  other = new Client_(second.url, m.keys.test);
});
afterAll(async () => {
  await second?.close();
});

const cacheOf = (app: RunningApp) => app.services.entitlements.cache;

/** A customer holding gate `key` through an active subscription, read once through each process (both cache it). */
async function heldInBoth() {
  const catalog = await recurringPlan(m.test);
  const e = await createEntitlement(m.test);
  await link(m.test, e.id, [catalog.product.id]);
  const { subscription } = await authorise(m.test, await createSubscription(m.test, catalog.plan.id));
  for (const c of [m.test, other]) {
    expect(await keysOf(c, subscription.customer_id)).toEqual([e.lookup_key]);
    expect(await keysOf(c, subscription.customer_id)).toEqual([e.lookup_key]); // the second read is a hit
  }
  return { ...catalog, entitlement: e, subscription };
}

describe('two processes', () => {
  it('serves cached answers while nothing changes', async () => {
    const { subscription } = await heldInBoth();
    const hits = cacheOf(second).stats.hits;
    await entitlementsOf(other, subscription.customer_id);
    expect(cacheOf(second).stats.hits).toBe(hits + 1);
  });

  it('never answers from the cache after a transition committed elsewhere, even when no NOTIFY reaches the reader', async () => {
    const { subscription, entitlement } = await heldInBoth();
    // The second process stops hearing NOTIFYs: only the stamp check in the evaluation statement can keep it right.
    await cacheOf(second).stop();
    try {
      const evictions = cacheOf(second).stats.evictions;
      expect((await ok(m.test.post(`/subscriptions/${subscription.id}/pause`))).status).toBe('paused');
      expect(await keysOf(other, subscription.customer_id)).toEqual([]);
      expect((await ok(m.test.post(`/subscriptions/${subscription.id}/resume`))).status).toBe('active');
      expect(await keysOf(other, subscription.customer_id)).toEqual([entitlement.lookup_key]);
      // A link change made through the first process shows at once in the second too.
      const extra = await createEntitlement(m.test, { lookup_key: `zz_${entitlement.lookup_key}` });
      await link(m.test, extra.id, [subscription.product_id]);
      expect(await keysOf(other, subscription.customer_id)).toEqual([entitlement.lookup_key, extra.lookup_key]);
      expect(cacheOf(second).stats.evictions).toBe(evictions); // nothing was evicted: the stamps decided
    } finally {
      await second.services.entitlements.listen(second.listener);
    }
  });

  it('reads right after each change through the other process, change after change', async () => {
    const { subscription, entitlement } = await heldInBoth();
    for (let i = 0; i < 5; i++) {
      await ok(m.test.post(`/subscriptions/${subscription.id}/pause`));
      expect(await keysOf(other, subscription.customer_id)).toEqual([]);
      await ok(other.post(`/subscriptions/${subscription.id}/resume`));
      expect(await keysOf(m.test, subscription.customer_id)).toEqual([entitlement.lookup_key]);
      expect(await keysOf(other, subscription.customer_id)).toEqual([entitlement.lookup_key]);
    }
  });

  it("evicts on the subscription's NOTIFY in the other process, and every entry of the tenant on a link change", async () => {
    const { subscription } = await heldInBoth();
    const cache = cacheOf(second);
    const key = `${m.id}:test:${subscription.customer_id}`;
    expect(cache.stampOf(key)).not.toBeNull();
    await ok(m.test.post(`/subscriptions/${subscription.id}/pause`));
    await eventually(() => cache.stampOf(key) === null, 10_000, 'the NOTIFY to evict the entry');

    const again = await heldInBoth();
    const key2 = `${m.id}:test:${again.subscription.customer_id}`;
    expect(cache.stampOf(key2)).not.toBeNull();
    const unrelated = await recurringPlan(m.test);
    const e = await createEntitlement(m.test);
    await link(m.test, e.id, [unrelated.product.id]);
    await eventually(() => cache.stampOf(key2) === null, 10_000, 'the link NOTIFY to evict the tenant');
  });

  it('clears the cache once a lost LISTEN connection is back (NOTIFYs sent meanwhile are lost)', async () => {
    const { subscription } = await heldInBoth();
    const cache = cacheOf(second);
    expect(cache.size).toBeGreaterThan(0);
    const clears = cache.stats.clears;
    const admin = new Client({ connectionString: process.env.TEST_PG_ADMIN_URL });
    await admin.connect();
    try {
      const db = new URL(h.app.databaseUrl).pathname.slice(1);
      await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'cadence-listener'",
        [db],
      );
    } finally {
      await admin.end();
    }
    await eventually(
      () => cache.stats.clears > clears && second.listener.ready,
      25_000,
      'the listener to come back and clear',
    );
    expect(cache.size).toBe(0);
    expect((await entitlementsOf(other, subscription.customer_id)).entitlements).toHaveLength(1);
  });
});

describe('the bound', () => {
  const answer = (i: number) =>
    JSON.stringify([
      { entitlement_id: `e${i}`, lookup_key: 'pro', name: 'Pro', subscription_ids: [`s${i}`], expires_at_ms: 1 },
    ]);

  it('holds at most its budget in bytes, dropping the least recently used, and forgets their subscriptions', () => {
    const budget = 64 * 1024;
    const cache = new EntitlementCache(budget);
    for (let i = 0; i < 5000; i++) cache.set(`m:test:c${i}`, `1:${i}`, answer(i), [`s${i}`]);
    expect(cache.bytes).toBeLessThanOrEqual(budget);
    expect(cache.size).toBeGreaterThan(50);
    expect(cache.size).toBeLessThan(5000);
    expect(cache.stampOf('m:test:c0')).toBeNull(); // the oldest went first
    expect(cache.take('m:test:c4999', '1:4999')).toBe(answer(4999));
    expect(cache.take('m:test:c4999', '2:4999')).toBeUndefined(); // another stamp: not this answer
    // The subscription index holds only entries still cached.
    expect((cache as any).bySubscription.size).toBe(cache.size);
    cache.subscriptionChanged('m', 'test', 's4999');
    expect(cache.stampOf('m:test:c4999')).toBeNull();
  });

  it('keeps no answer larger than an eighth of the budget, and nothing when off', () => {
    const small = new EntitlementCache(8 * 1024);
    small.set('m:test:big', '1:x', 'x'.repeat(2000), []);
    expect(small.stampOf('m:test:big')).toBeNull();
    small.set('m:test:ok', '1:x', 'x'.repeat(1024 - ENTRY_OVERHEAD_BYTES - 40), []);
    expect(small.stampOf('m:test:ok')).toBe('1:x');
    const off = new EntitlementCache(0);
    off.set('m:test:c', '1:x', answer(1), ['s1']);
    expect([off.enabled, off.size, off.stampOf('m:test:c')]).toEqual([false, 0, null]);
  });

  it('weighs names beyond Latin-1 at two bytes a character', () => {
    const cache = new EntitlementCache(1024 * 1024);
    cache.set('m:test:a', '1:a', 'a'.repeat(1000), []);
    const latin = cache.bytes;
    cache.clear();
    cache.set('m:test:a', '1:a', 'ा'.repeat(1000), []);
    expect(cache.bytes - latin).toBe(1000);
  });
});

describe('with the cache off', () => {
  it('answers the same, always evaluated afresh', async () => {
    const off = await startSecondApp(h.app, { entitlementCacheBytes: 0 });
    try {
      const { subscription, entitlement } = await heldInBoth();
      const c = new Client_(off.url, m.keys.test);
      expect(await keysOf(c, subscription.customer_id)).toEqual([entitlement.lookup_key]);
      await ok(m.test.post(`/subscriptions/${subscription.id}/pause`));
      expect(await keysOf(c, subscription.customer_id)).toEqual([]);
      expect(cacheOf(off).size).toBe(0);
    } finally {
      await off.close();
    }
  });
});

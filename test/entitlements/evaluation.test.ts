import { TestMerchant, useHarness } from '../harness';
import { errorFingerprint, unknownId } from '../harness/http';
import { connect } from '../payments/helpers';
import { after, authorise, createSubscription, ok, recurringPlan } from '../subscriptions/helpers';
import { createEntitlement, CUSTOMER_ENTITLEMENTS, entitlementsOf, gqlAsRest, keysOf, link } from './helpers';

/**
 * `GET /subscriptions/customer/{customer_id}/entitlements` and GraphQL `customerEntitlements` (docs/growth.md): a gate
 * is held through `active` and `trialing` subscriptions only (not created, paused, past_due, halted or ended), with
 * `expires_at` the current period end (the trial end while trialing), followed through the lifecycle on the test
 * clock with the gateway sandbox; every answer is read through both transports and must agree.
 */

const h = useHarness();
const DAY = 86_400;
let m: TestMerchant;

beforeAll(async () => {
  m = await h.merchant();
  await connect(m.test, 'stripe');
});

/** REST's answer, after checking GraphQL answers the same thing. */
async function evaluation(customerId: string) {
  const rest = await entitlementsOf(m.test, customerId);
  const gql = await m.test.gql(CUSTOMER_ENTITLEMENTS, { id: customerId });
  expect(gql.errors).toBeUndefined();
  expect(gqlAsRest(gql.data.customerEntitlements)).toEqual(rest);
  return rest;
}

/** A plan whose product is linked to a fresh entitlement `key` (plan fields overridable). */
async function gatedPlan(key: string, plan: Record<string, unknown> = {}) {
  const catalog = await recurringPlan(m.test, plan);
  const e = await createEntitlement(m.test, { lookup_key: key, name: key.toUpperCase() });
  await link(m.test, e.id, [catalog.product.id]);
  return { ...catalog, entitlement: e };
}

const get = (id: string) => ok(m.test.get(`/subscriptions/${id}`));

describe('what a customer holds', () => {
  it('nothing before the checkout completes; the gate with its subscription and period end once active', async () => {
    const { plan, entitlement } = await gatedPlan(`basic_${Date.now()}`);
    const created = await createSubscription(m.test, plan.id);
    expect(await evaluation(created.customer_id)).toEqual({ customer_id: created.customer_id, entitlements: [] });
    const { subscription: active } = await authorise(m.test, created);
    expect(await evaluation(active.customer_id)).toEqual({
      customer_id: active.customer_id,
      entitlements: [
        {
          entitlement_id: entitlement.id,
          lookup_key: entitlement.lookup_key,
          name: entitlement.name,
          subscription_ids: [active.id],
          expires_at: active.current_period_end,
        },
      ],
    });
  });

  it('several subscriptions granting one gate: all their ids, expires_at the latest; gates sorted by lookup_key', async () => {
    const email = `many-${Date.now()}@example.com`;
    const monthly = await gatedPlan(`zeta_${Date.now()}`);
    const yearly = await recurringPlan(m.test, { billing_frequency: 'yearly' });
    // The yearly product grants zeta too, and alpha.
    await link(m.test, monthly.entitlement.id, [yearly.product.id]);
    const alpha = await createEntitlement(m.test, { lookup_key: `alpha_${Date.now()}` });
    await link(m.test, alpha.id, [yearly.product.id]);
    const { subscription: s1 } = await authorise(
      m.test,
      await createSubscription(m.test, monthly.plan.id, { customer_email: email }),
    );
    const { subscription: s2 } = await authorise(
      m.test,
      await createSubscription(m.test, yearly.plan.id, { customer_email: email }),
    );
    expect(s2.customer_id).toBe(s1.customer_id);
    const got = await evaluation(s1.customer_id);
    expect(got.entitlements.map((e: any) => [e.lookup_key, e.subscription_ids, e.expires_at])).toEqual([
      [alpha.lookup_key, [s2.id], s2.current_period_end],
      [monthly.entitlement.lookup_key, [s1.id, s2.id].sort(), s2.current_period_end],
    ]);
    expect(new Date(s2.current_period_end) > new Date(s1.current_period_end)).toBe(true);
  });

  it('a link made after the subscription started grants at once; an unlinked product grants nothing', async () => {
    const plain = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plain.plan.id));
    expect((await evaluation(subscription.customer_id)).entitlements).toEqual([]);
    const e = await createEntitlement(m.test);
    await link(m.test, e.id, [plain.product.id]);
    expect(await keysOf(m.test, subscription.customer_id)).toEqual([e.lookup_key]);
  });
});

describe('through the lifecycle', () => {
  it('trialing (expires at the trial end), then active (the period end), paused (none), resumed', async () => {
    const { plan, entitlement } = await gatedPlan(`trial_${Date.now()}`, { trial_period_days: 7 });
    const { subscription: trialing } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(trialing.status).toBe('trialing');
    let got = await evaluation(trialing.customer_id);
    expect(got.entitlements).toEqual([
      expect.objectContaining({
        lookup_key: entitlement.lookup_key,
        subscription_ids: [trialing.id],
        expires_at: trialing.trial_end,
      }),
    ]);

    await h.clock.advance(m, after(trialing.trial_end));
    const active = await get(trialing.id);
    expect(active.status).toBe('active');
    got = await evaluation(active.customer_id);
    expect(got.entitlements[0].expires_at).toBe(active.current_period_end);
    expect(active.current_period_end).not.toBe(trialing.trial_end);

    expect((await ok(m.test.post(`/subscriptions/${active.id}/pause`))).status).toBe('paused');
    expect((await evaluation(active.customer_id)).entitlements).toEqual([]);
    expect((await ok(m.test.post(`/subscriptions/${active.id}/resume`))).status).toBe('active');
    expect(await keysOf(m.test, active.customer_id)).toEqual([entitlement.lookup_key]);
  });

  it('cancel at period end: held until the period ends, then gone; cancelled now: gone at once', async () => {
    const { plan, entitlement } = await gatedPlan(`cape_${Date.now()}`);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const pending = await ok(m.test.post(`/subscriptions/${subscription.id}/cancel`, { cancel_at_period_end: true }));
    expect(pending).toMatchObject({ status: 'active', cancel_at_period_end: true });
    expect((await evaluation(subscription.customer_id)).entitlements).toEqual([
      expect.objectContaining({ lookup_key: entitlement.lookup_key, expires_at: subscription.current_period_end }),
    ]);
    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() - 60_000));
    expect(await keysOf(m.test, subscription.customer_id)).toEqual([entitlement.lookup_key]);
    await h.clock.advance(m, after(subscription.current_period_end));
    expect((await get(subscription.id)).status).toBe('cancelled');
    expect((await evaluation(subscription.customer_id)).entitlements).toEqual([]);

    const { subscription: other } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(await keysOf(m.test, other.customer_id)).toEqual([entitlement.lookup_key]);
    expect((await ok(m.test.post(`/subscriptions/${other.id}/cancel`))).status).toBe('cancelled');
    expect(await keysOf(m.test, other.customer_id)).toEqual([]);
  });

  it('past_due after a failed renewal (none), halted when the retries fail (none)', async () => {
    const { plan, entitlement } = await gatedPlan(`dunning_${Date.now()}`);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: '4000000000000341',
    });
    expect(await keysOf(m.test, subscription.customer_id)).toEqual([entitlement.lookup_key]);
    await h.clock.advance(m, after(subscription.current_period_end));
    expect((await get(subscription.id)).status).toBe('past_due');
    expect((await evaluation(subscription.customer_id)).entitlements).toEqual([]);
    await h.clock.advance(m, 6 * DAY);
    expect((await get(subscription.id)).status).toBe('halted');
    expect((await evaluation(subscription.customer_id)).entitlements).toEqual([]);
  });

  it('a hard decline halts at once: the gate goes with it; a successful retry brings it back', async () => {
    const { plan, entitlement } = await gatedPlan(`hard_${Date.now()}`);
    const { subscription: stolen } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: '4000000000009979',
    });
    const { subscription: flaky } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: '4000000000000119',
    });
    for (const s of [stolen, flaky]) expect(await keysOf(m.test, s.customer_id)).toEqual([entitlement.lookup_key]);
    await h.clock.advance(m, after(stolen.current_period_end));
    expect((await get(stolen.id)).status).toBe('halted');
    expect(await keysOf(m.test, stolen.customer_id)).toEqual([]);
    expect((await get(flaky.id)).status).toBe('past_due');
    expect(await keysOf(m.test, flaky.customer_id)).toEqual([]);
    await h.clock.advance(m, 1 * DAY + 60);
    const recovered = await get(flaky.id);
    expect(recovered.status).toBe('active');
    expect((await evaluation(flaky.customer_id)).entitlements).toEqual([
      expect.objectContaining({
        lookup_key: entitlement.lookup_key,
        subscription_ids: [flaky.id],
        expires_at: recovered.current_period_end,
      }),
    ]);
  });

  it("a plan change to another product moves the customer to that product's gates", async () => {
    const from = await gatedPlan(`from_${Date.now()}`);
    const to = await gatedPlan(`to_${Date.now()}`);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, from.plan.id));
    expect(await keysOf(m.test, subscription.customer_id)).toEqual([from.entitlement.lookup_key]);
    const changed = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: to.plan.id }));
    expect(changed.subscription.product_id).toBe(to.product.id);
    expect(await keysOf(m.test, subscription.customer_id)).toEqual([to.entitlement.lookup_key]);
  });
});

describe('tenancy and errors', () => {
  it("answers 404 for another merchant's or mode's customer, exactly like an unknown or malformed id", async () => {
    const { plan } = await gatedPlan(`tenancy_${Date.now()}`);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect((await entitlementsOf(m.test, subscription.customer_id)).entitlements).toHaveLength(1);
    const b = await h.merchant();
    for (const c of [b.test, b.live, m.live]) {
      const theirs = await c.get(`/subscriptions/customer/${subscription.customer_id}/entitlements`);
      const ghost = unknownId();
      const none = await c.get(`/subscriptions/customer/${ghost}/entitlements`);
      expect(theirs.status).toBe(404);
      expect(theirs.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'resource_not_found',
        param: 'customer_id',
      });
      expect(errorFingerprint(theirs, subscription.customer_id)).toEqual(errorFingerprint(none, ghost));
      expect(theirs.text).not.toContain(subscription.id);
      const gql = await c.gql(CUSTOMER_ENTITLEMENTS, { id: subscription.customer_id });
      expect(gql.errors![0].extensions).toMatchObject({ code: 'resource_not_found', http: { status: 404 } });
      expect(gql.data).toBeNull();
    }
    const malformed = await m.test.get('/subscriptions/customer/not-a-customer/entitlements');
    expect(malformed.status).toBe(404);
    expect(malformed.body.error).toMatchObject({ code: 'resource_not_found', param: 'customer_id' });
    const long = await m.test.get(`/subscriptions/customer/${'x'.repeat(2000)}/entitlements`);
    expect(long.status).toBe(404);
    // An upper-case spelling of the id is the same customer.
    expect((await entitlementsOf(m.test, subscription.customer_id.toUpperCase())).customer_id).toBe(
      subscription.customer_id,
    );
  });

  it("does not grant through another tenant's links: a live-mode link of the same product id cannot exist", async () => {
    const { product } = await recurringPlan(m.test);
    const e = await createEntitlement(m.live);
    const r = await m.live.post(`/entitlements/${e.id}/products`, { product_ids: [product.id] });
    expect(r.status).toBe(404);
    expect(r.body.error.param).toBe('product_ids[0]');
  });
});

describe('one statement', () => {
  it('evaluates a customer in one SQL statement, cached or not', async () => {
    const { plan } = await gatedPlan(`stmt_${Date.now()}`);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const pool = h.app.app.services.plainPool;
    const seen: string[] = [];
    const original = pool.query.bind(pool);
    (pool as any).query = (config: any, values?: unknown[]) => {
      seen.push(typeof config === 'string' ? config : config.text);
      return original(config, values);
    };
    try {
      for (let i = 0; i < 3; i++) {
        h.app.sql.reset();
        seen.length = 0;
        await entitlementsOf(m.test, subscription.customer_id);
        // The key's own lookup (api_keys, then its merchant) runs when its 5-second cache has run out, as on a busy
        // machine between two rounds: that is the request's authentication, not the evaluation.
        const others = h.app.sql.texts.filter((s) => !/from "(api_keys|merchants)"/.test(s));
        expect([seen.filter((s) => /entitlement_products/.test(s)).length, others]).toEqual([1, []]);
      }
    } finally {
      (pool as any).query = original;
    }
  });
});

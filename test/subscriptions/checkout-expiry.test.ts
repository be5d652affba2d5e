import { Mode } from '../../src/core/entity';
import { useHarness } from '../harness';
import { submitCheckout } from '../harness/checkout';
import { createCoupon } from '../coupons/helpers';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { after, authorise, createSubscription, events, ok, recurringPlan, subscriptionBody, trail } from './helpers';

/**
 * Abandoned checkouts (docs/subscriptions.md): a hosted mandate checkout nobody completes is ended by the scheduler
 * SUBSCRIPTION_CHECKOUT_EXPIRY_SECONDS (24 h) after creation, on the merchant's (test) clock: expired at the gateway,
 * the subscription `created -> cancelled` (checkout_failed by scheduler), its coupon redemption given back. A completed
 * checkout is untouched, and the expired checkout's URL no longer completes (the sandbox answers 409: the session is
 * expired / the Razorpay subscription cancelled).
 */

const h = useHarness();
jest.setTimeout(120_000);

const DAY_MS = 86_400_000;
const sql = <T = any>(text: string, params: unknown[] = []) => h.app.orm.em.getConnection().execute<T[]>(text, params);
const gatewayStatus = async (id: string) =>
  (await sql<{ status: string }>("select data->>'status' as status from sandbox_objects where id = ?", [id]))[0]
    ?.status;

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  async function setup() {
    const m = await h.merchant();
    await connect(m.test, provider);
    const { plan } = await recurringPlan(m.test);
    return { m, plan };
  }

  it('left at checkout: still created just before 24 h, cancelled by the scheduler after; the coupon is redeemable again; the URL no longer completes', async () => {
    const { m, plan } = await setup();
    const coupon = await createCoupon(m.test, { max_redemptions: 1 });
    const sub = await createSubscription(m.test, plan.id, { coupon_code: coupon.code });
    expect((await m.test.post('/subscriptions', subscriptionBody(plan.id, { coupon_code: coupon.code }))).status).toBe(
      400,
    );

    await h.clock.advance(m, after(sub.created_at, DAY_MS - 60_000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('created');
    expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(1);

    await h.clock.advance(m, after(sub.created_at, DAY_MS + 1000));
    const ended = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(ended.status).toBe('cancelled');
    expect(await trail(m.test, sub.id)).toEqual([
      'none>created:subscription.created:api',
      'created>cancelled:subscription.cancelled:scheduler',
    ]);
    expect((await events(m.test, sub.id))[1].metadata_json).toEqual({ reason: 'checkout_expired' });

    expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(0);
    const again = await createSubscription(m.test, plan.id, { coupon_code: coupon.code });
    expect(again.coupon_id).toBe(coupon.id);

    // The gateway's checkout is over: its page refuses, and nothing brings the subscription back.
    expect(await gatewayStatus(sub.checkout_session_id)).toBe(provider === 'stripe' ? 'expired' : 'cancelled');
    // Razorpay's page is closed (409); the sandbox's expired Stripe session sends the visitor to the cancel URL.
    const visit = await submitCheckout(sub.checkout_url, { outcome: 'success' });
    if (provider === 'stripe') expect([visit.status, visit.location]).toEqual([303, sub.cancel_url]);
    else expect(visit.status).toBe(409);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('cancelled');
    expect((await trail(m.test, sub.id)).length).toBe(2);
  });

  it('a completed checkout is unaffected by the expiry', async () => {
    const { m, plan } = await setup();
    const coupon = await createCoupon(m.test, { max_redemptions: 1 });
    const sub = await createSubscription(m.test, plan.id, { coupon_code: coupon.code });
    expect((await authorise(m.test, sub)).subscription.status).toBe('active');
    await h.clock.advance(m, after(sub.created_at, DAY_MS + 1000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    expect((await trail(m.test, sub.id)).some((t) => t.endsWith(':scheduler'))).toBe(false);
    expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(1);
  });

  it('the expiry run by several processes at once: one cancellation, one release', async () => {
    const { m, plan } = await setup();
    const coupon = await createCoupon(m.test, { max_redemptions: 1 });
    const sub = await createSubscription(m.test, plan.id, { coupon_code: coupon.code });
    const tenant = { merchantId: m.id, mode: Mode.TEST };
    const at = after(sub.created_at, DAY_MS + 1000);
    const ran = await Promise.all(
      Array.from({ length: 6 }, () => h.app.app.services.scheduler.runAction(tenant, sub.id, at)),
    );
    expect(ran.filter(Boolean).length).toBe(1);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('cancelled');
    expect((await trail(m.test, sub.id)).filter((t) => t.includes('>cancelled:'))).toEqual([
      'created>cancelled:subscription.cancelled:scheduler',
    ]);
    expect((await ok(m.test.get(`/coupons/${coupon.id}`))).times_redeemed).toBe(0);
    const rows = await sql<{ status: string }>('select status from coupon_redemptions where subscription_id = ?', [
      sub.id,
    ]);
    expect(rows).toEqual([{ status: 'released' }]);
  });
});

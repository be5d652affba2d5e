import fc from 'fast-check';
import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { prorate } from '../../src/money';
import { authorise, createSubscription, invoicesOf, ok, outboxTypesOf, recurringPlan, trail } from './helpers';

/**
 * Change plan (docs/subscriptions.md) through both gateways: proration over the seconds left, computed here from the
 * test-clock instant the test sets; adjustment invoice or credit note (applied to the next renewal); another cadence;
 * trials; proration_behavior none; the refusals; and a gateway that refuses the change (nothing changes locally).
 */

const h = useHarness();
jest.setTimeout(60_000);
const DAY = 86_400_000;

/** round(a x r / T), half away from zero, exactly (amounts and seconds are non-negative here). */
const share = (a: number, r: number, T: number) => Number((2n * BigInt(a) * BigInt(r) + BigInt(T)) / (2n * BigInt(T)));

/**
 * The proration the service must answer for a change made at `at` (the test clock was just moved there; the request
 * runs a moment later, so r may be a few seconds less): finds the r that explains both amounts, or fails.
 */
function expectProration(
  p: any,
  o: { old: number; neu: number; start: string; end: string; at: Date; sameCadence: boolean },
): number {
  const start = new Date(o.start).getTime();
  const end = new Date(o.end).getTime();
  const T = Math.floor((end - start) / 1000);
  const rMax = Math.floor((end - o.at.getTime()) / 1000);
  const fits = (r: number) =>
    p.credit_amount === share(o.old, r, T) && p.debit_amount === (o.sameCadence ? share(o.neu, r, T) : o.neu);
  const r = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((d) => rMax - d).find(fits);
  if (r === undefined) {
    throw new Error(
      `proration ${JSON.stringify(p)} does not fit old=${o.old} new=${o.neu} T=${T} r<=${rMax} (expected about credit ${share(o.old, rMax, T)})`,
    );
  }
  expect(p.net_amount).toBe(p.debit_amount - p.credit_amount);
  return r;
}

async function otherPlan(m: TestMerchant, plan: Record<string, unknown>, amount: number) {
  return recurringPlan(m.test, plan, { amount });
}

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
  });

  /** An active subscription on a 49900 monthly plan, the clock moved to `daysIn` days into its period. */
  async function activeAt(daysIn: number) {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(subscription.status).toBe('active');
    const at = await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + daysIn * DAY));
    return { plan, subscription, at };
  }

  it('upgrade mid-period, same cadence: prorated adjustment invoice, period kept, new price registered', async () => {
    const { subscription, at } = await activeAt(10);
    const up = await otherPlan(m, { name: 'Monthly Plus' }, 99900);
    expect(up.price.provider_price_ids).toEqual({});
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    expectProration(r.proration, {
      old: 49900,
      neu: 99900,
      start: subscription.current_period_start,
      end: subscription.current_period_end,
      at,
      sameCadence: true,
    });
    expect(r.proration.net_amount).toBeGreaterThan(0);
    expect(r.proration.currency).toBe('INR');
    expect(r.credit_note).toBeNull();
    expect(r.invoice).toMatchObject({
      object: 'invoice',
      type: 'invoice',
      billing_reason: 'subscription_update',
      status: 'open',
      subscription_id: subscription.id,
      subtotal: r.proration.net_amount,
      total: r.proration.net_amount,
      amount_due: r.proration.net_amount,
    });
    expect(r.invoice.line_items[0]).toMatchObject({ proration: true, amount: r.proration.net_amount });
    expect(r.subscription).toMatchObject({
      plan_id: up.plan.id,
      price_id: up.price.id,
      amount: 99900,
      status: 'active',
      current_period_start: subscription.current_period_start,
      current_period_end: subscription.current_period_end,
    });
    expect((await ok(m.test.get(`/prices/${up.price.id}`))).provider_price_ids[provider]).toEqual(expect.any(String));
    const t = await trail(m.test, subscription.id);
    expect(t.at(-1)).toBe('active>active:subscription.plan_changed:api');
    const ev = (await ok(m.test.get(`/subscriptions/${subscription.id}/events`))).at(-1);
    expect(ev.metadata_json).toMatchObject({ to_plan_id: up.plan.id, to_price_id: up.price.id });
  });

  it('downgrade mid-period: credit note with positive amounts, taken off the next renewal', async () => {
    const { subscription, at } = await activeAt(25);
    const down = await otherPlan(m, { name: 'Monthly Lite' }, 19900);
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: down.plan.id }));
    expectProration(r.proration, {
      old: 49900,
      neu: 19900,
      start: subscription.current_period_start,
      end: subscription.current_period_end,
      at,
      sameCadence: true,
    });
    const credit = -r.proration.net_amount;
    expect(credit).toBeGreaterThan(0);
    expect(r.invoice).toBeNull();
    expect(r.credit_note).toMatchObject({
      type: 'credit_note',
      billing_reason: 'subscription_update',
      status: 'issued',
      subtotal: credit,
      total: credit,
    });
    expect(r.credit_note.number).toMatch(/^TCN-/);
    for (const l of r.credit_note.line_items) expect(l.amount).toBeGreaterThan(0);

    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000));
    const renewed = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(renewed.cycles_completed).toBe(2);
    const invoices = (await invoicesOf(m.test, subscription.id)).filter((i) => i.type === 'invoice');
    const cycle = invoices.filter((i) => i.billing_reason === 'subscription_cycle');
    expect(cycle).toHaveLength(1);
    // The credit is taken off what the renewal asks: paid = total - credit (amount_due is what is still owed: 0).
    expect(cycle[0]).toMatchObject({
      status: 'paid',
      subtotal: 19900,
      total: 19900,
      credit_applied: credit,
      amount_paid: 19900 - credit,
      amount_due: 0,
    });
    // The gateway charged the renewal's whole total: the credit went back to the customer as a refund on that charge,
    // so what was collected is amount_paid.
    const refunds = await h.app.orm.em
      .getConnection()
      .execute<{ amount: string }[]>(
        `select data->>'amount' as amount from sandbox_objects where type = 'refund' and created_at > now() - interval '1 minute'`,
      );
    expect(refunds.map((x) => Number(x.amount))).toContain(credit);
    // Its refund event is known as that return: the renewal's payment stays as collected (amount_paid), with no refund
    // and no second credit note for the same credit.
    await h.app.app.sandbox!.sandbox.settle();
    const payment = await ok(m.test.get(`/payments/${cycle[0].payment_id}`));
    expect(payment).toMatchObject({ status: 'succeeded', amount_total: 19900 - credit, amount_refunded: 0 });
    const [{ n }] = await h.app.orm.em
      .getConnection()
      .execute<{ n: string }[]>('select count(*) as n from refunds where payment_id = ?', [payment.id]);
    expect(Number(n)).toBe(0);
    const notes = (await ok(m.test.get(`/invoices?type=credit_note&subscription_id=${subscription.id}`))).data;
    expect(notes.map((x: any) => x.billing_reason)).toEqual(['subscription_update']);
    // What the customer paid: the first period, then the renewal less its credit (counted once).
    const customer = await ok(m.test.get(`/customers/${subscription.customer_id}`));
    expect(customer.lifetime_revenue).toEqual([{ currency: 'INR', amount: 49900 + 19900 - credit }]);
    // Used up: the renewal after it is due in full.
    await h.clock.advance(m, new Date(new Date(renewed.current_period_end).getTime() + 1000));
    const next = (await invoicesOf(m.test, subscription.id)).filter((i) => i.billing_reason === 'subscription_cycle');
    expect(next).toHaveLength(2);
    expect(next[1]).toMatchObject({ total: 19900, credit_applied: 0, amount_paid: 19900 });
  });

  it('monthly -> yearly: credit of the unused part, the yearly price in full, a new period from now', async () => {
    const { subscription, at } = await activeAt(12);
    const yearly = await otherPlan(m, { name: 'Yearly', billing_frequency: 'yearly' }, 499000);
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: yearly.plan.id }));
    expectProration(r.proration, {
      old: 49900,
      neu: 499000,
      start: subscription.current_period_start,
      end: subscription.current_period_end,
      at,
      sameCadence: false,
    });
    expect(r.invoice).toMatchObject({
      type: 'invoice',
      billing_reason: 'subscription_update',
      total: r.proration.net_amount,
    });
    const start = new Date(r.subscription.current_period_start);
    expect(Math.abs(start.getTime() - at.getTime())).toBeLessThan(10_000);
    const end = new Date(start);
    end.setUTCFullYear(end.getUTCFullYear() + 1);
    expect(r.subscription.current_period_end).toBe(end.toISOString());
    expect(r.subscription).toMatchObject({ amount: 499000, status: 'active' });
    // The old monthly period's end passes without a renewal: the yearly period runs.
    const before = await invoicesOf(m.test, subscription.id);
    await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + DAY));
    const still = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(still).toMatchObject({
      status: 'active',
      current_period_start: r.subscription.current_period_start,
      current_period_end: r.subscription.current_period_end,
    });
    // No renewal invoice (the adjustment itself is collected meanwhile: paid 24 hours after its notice on Stripe).
    expect((await invoicesOf(m.test, subscription.id)).map((i) => i.id)).toEqual(before.map((i) => i.id));
  });

  it('in a trial: no proration, the plan changes', async () => {
    const { plan } = await recurringPlan(m.test, { trial_period_days: 14 });
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(subscription.status).toBe('trialing');
    const up = await otherPlan(m, { name: 'Plus', trial_period_days: 14 }, 99900);
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    expect(r).toMatchObject({ proration: null, invoice: null, credit_note: null });
    expect(r.subscription).toMatchObject({
      status: 'trialing',
      plan_id: up.plan.id,
      amount: 99900,
      trial_end: subscription.trial_end,
    });
    expect(await invoicesOf(m.test, subscription.id)).toEqual([]);
    expect((await trail(m.test, subscription.id)).at(-1)).toBe('trialing>trialing:subscription.plan_changed:api');
  });

  it('proration_behavior none: no proration, no invoice', async () => {
    const { subscription } = await activeAt(5);
    const up = await otherPlan(m, {}, 79900);
    const before = await invoicesOf(m.test, subscription.id);
    const r = await ok(
      m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id, proration_behavior: 'none' }),
    );
    expect(r).toMatchObject({ proration: null, invoice: null, credit_note: null });
    expect(r.subscription).toMatchObject({ amount: 79900, current_period_end: subscription.current_period_end });
    expect(await invoicesOf(m.test, subscription.id)).toEqual(before);
  });

  it('changing back to an earlier price reaches the gateway again (one gateway call per command)', async () => {
    const { plan, subscription } = await activeAt(3);
    const other = await otherPlan(m, {}, 59900);
    /** The gateway price (Stripe) or plan (Razorpay) the gateway's subscription is on now. */
    const atGateway = async () => {
      const [row] = await h.app.orm.em
        .getConnection()
        .execute<{ price: string }[]>(
          `select coalesce(data->'items'->'data'->0->'price'->>'id', data->>'plan_id') as price from sandbox_objects where id = ?`,
          [subscription.provider_subscription_id],
        );
      return row.price;
    };
    const gatewayId = async (planId: string) =>
      Object.values((await ok(m.test.get(`/plans/${planId}`))).default_price.provider_price_ids)[0];
    for (const target of [other.plan.id, plan.id, other.plan.id]) {
      await ok(
        m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: target, proration_behavior: 'none' }),
      );
      expect(await atGateway()).toBe(await gatewayId(target));
    }
  });

  it('plan_unchanged 400; from paused 409; nothing changes', async () => {
    const { plan, subscription } = await activeAt(1);
    const same = await m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: plan.id });
    expect(same.status).toBe(400);
    expect(same.body.error).toMatchObject({ code: 'plan_unchanged', type: 'invalid_request_error' });
    await ok(m.test.post(`/subscriptions/${subscription.id}/pause`));
    const trailBefore = await trail(m.test, subscription.id);
    const up = await otherPlan(m, {}, 99900);
    const paused = await m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id });
    expect(paused.status).toBe(409);
    expect(paused.body.error.code).toBe('invalid_state_transition');
    expect(await trail(m.test, subscription.id)).toEqual(trailBefore);
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).plan_id).toBe(plan.id);
  });
});

describe('razorpay UPI: the gateway refuses the plan change', () => {
  it('502 gateway_rejected, and nothing changed locally', async () => {
    const m = await h.merchant();
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      method: 'upi',
      vpa: 'asha@okaxis',
    });
    expect(subscription.status).toBe('active');
    const before = {
      sub: subscription,
      trail: await trail(m.test, subscription.id),
      invoices: await invoicesOf(m.test, subscription.id),
    };
    const up = await otherPlan(m, {}, 99900);
    const r = await m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ type: 'gateway_error', code: 'gateway_rejected' });
    expect(r.body.error.message).toMatch(/UPI/);
    // (updated_at moves: the command's claim was taken and released.)
    const { updated_at: _u, ...now } = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    const { updated_at: _b, ...was } = before.sub;
    expect(now).toEqual(was);
    expect(await trail(m.test, subscription.id)).toEqual(before.trail);
    expect(await invoicesOf(m.test, subscription.id)).toEqual(before.invoices);
    // The claim was released: another command goes through.
    expect((await ok(m.test.post(`/subscriptions/${subscription.id}/pause`))).status).toBe('paused');
  });
});

describe('prorate: credit and debit reconcile (property)', () => {
  it('same cadence: net = round(new r/T) - round(old r/T), within one subunit of (new - old) r / T; ends exact', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2040, 0, 1) }),
        fc.integer({ min: 1, max: 400 * 86_400 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (oldAmount, newAmount, startMs, T, frac, sameCadence) => {
          const periodStart = new Date(Math.floor(startMs / 1000) * 1000);
          const periodEnd = new Date(periodStart.getTime() + T * 1000);
          const r = Math.round(T * frac);
          const at = new Date(periodEnd.getTime() - r * 1000);
          const p = prorate({ oldAmount, newAmount, periodStart, periodEnd, at, sameCadence });
          expect(p.credit).toBe(share(oldAmount, r, T));
          expect(p.debit).toBe(sameCadence ? share(newAmount, r, T) : newAmount);
          expect(p.net).toBe(p.debit - p.credit);
          expect(p.restartsPeriod).toBe(!sameCadence);
          // Each side rounds once: the net is within one subunit of the exact difference.
          if (sameCadence) expect(Math.abs(p.net * T - (newAmount - oldAmount) * r)).toBeLessThanOrEqual(T);
          if (r === T) expect(p.credit).toBe(oldAmount);
          if (r === 0) expect(p.credit).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe.each(PROVIDERS)('%s: the adjustment invoice is collected from the mandate', (provider: ProviderName) => {
  it("stripe: announced, paid 24 hours later (a paid manual invoice at the gateway); razorpay: an add-on, paid by the next cycle's charge", async () => {
    const m = await h.merchant();
    await connect(m.test, provider);
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(subscription.status).toBe('active');
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 10 * DAY));
    const up = await otherPlan(m, { name: 'Monthly Max' }, 99900);
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    const net = r.proration.net_amount;
    expect(net).toBeGreaterThan(0);
    let invoice = await ok(m.test.get(`/invoices/${r.invoice.id}`));
    const providerSub =
      subscription.provider_subscription_id ??
      (await ok(m.test.get(`/subscriptions/${subscription.id}`))).provider_subscription_id;
    expect(providerSub).toEqual(expect.any(String));
    const sql = h.app.orm.em.getConnection();
    if (provider === 'stripe') {
      // An INR mandate debit (docs/india.md): announced now, charged no earlier than 24 hours later.
      expect(invoice).toMatchObject({ status: 'open', amount_due: net });
      const [held] = (await ok(m.test.get(`/gateway-commands?subscription_id=${subscription.id}`))).data;
      expect(held).toMatchObject({ action: 'collect_invoice', status: 'pending', attempts: 0 });
      expect(new Date(held.not_before).getTime()).toBe(new Date(invoice.issued_at).getTime() + DAY);
      await h.clock.advance(m, 23 * 3600);
      expect((await ok(m.test.get(`/invoices/${r.invoice.id}`))).status).toBe('open');
      await h.clock.advance(m, 3600 + 60);
      invoice = await ok(m.test.get(`/invoices/${r.invoice.id}`));
      expect(invoice).toMatchObject({ status: 'paid', amount_due: 0, amount_paid: net });
      expect(invoice.paid_at).toBeTruthy();
      const paid = await sql.execute<{ amount: string; status: string }[]>(
        `select data->>'amount_paid' as amount, data->>'status' as status from sandbox_objects
          where provider = 'stripe' and type = 'invoice' and data->>'billing_reason' = 'manual'
            and data->'parent'->'subscription_details'->>'subscription' = ?`,
        [providerSub],
      );
      expect(paid).toEqual([{ amount: String(net), status: 'paid' }]);
      // The gateway's invoice.paid for it is no renewal: the subscription's period and cycle count stay.
      expect(await ok(m.test.get(`/subscriptions/${subscription.id}`))).toMatchObject({
        status: 'active',
        cycles_completed: subscription.cycles_completed,
        current_period_end: subscription.current_period_end,
      });
      expect((await invoicesOf(m.test, subscription.id)).map((i) => `${i.billing_reason}:${i.status}`)).toEqual([
        'subscription_create:paid',
        'subscription_update:paid',
      ]);
    } else {
      expect(invoice).toMatchObject({ status: 'open', amount_due: net, amount_paid: 0 });
      const addons = await sql.execute<{ amount: string; quantity: string }[]>(
        `select data->'item'->>'amount' as amount, data->>'quantity' as quantity from sandbox_objects
          where provider = 'razorpay' and type = 'addon' and data->>'subscription_id' = ?`,
        [providerSub],
      );
      expect(addons).toEqual([{ amount: String(net), quantity: '1' }]);
      // The next cycle's charge carries it: the renewal invoice is paid its own total, the adjustment its own, once.
      await h.clock.advance(m, new Date(new Date(subscription.current_period_end).getTime() + 1000));
      const all = await invoicesOf(m.test, subscription.id);
      expect(all.map((i) => `${i.billing_reason}:${i.status}`)).toEqual([
        'subscription_create:paid',
        'subscription_update:paid',
        'subscription_cycle:paid',
      ]);
      expect(all[1]).toMatchObject({ id: invoice.id, amount_paid: net, amount_due: 0 });
      expect(all[2]).toMatchObject({ total: 99900, amount_paid: 99900 });
      const charged = await sql.execute<{ amount: string }[]>(
        `select data->>'amount' as amount from sandbox_objects
          where provider = 'razorpay' and type = 'payment' and data->'notes'->>'subscription_id' = ? and data->>'status' = 'captured' order by created_at`,
        [subscription.id],
      );
      expect(charged.map((c) => Number(c.amount)).filter((a) => a > 0)).toEqual([49900, 99900 + net]);
      const paidEvents = (await outboxTypesOf(h.app, m.id, subscription.id)).filter((t) => t === 'invoice.paid');
      expect(paidEvents).toHaveLength(3);
    }
  });
});

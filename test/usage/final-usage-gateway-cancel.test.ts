import crypto from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import { tenantEntityManager } from '../../src/core/context';
import { Mode } from '../../src/core/entity';
import { BillingSubscription } from '../../src/modules/subscriptions/subscription.entities';
import { billFinalUsage } from '../../src/modules/subscriptions/usage.billing';
import { TestMerchant, useHarness } from '../harness';
import { connect, Connected, postEvent, PROVIDERS, ProviderName, signedHeaders } from '../payments/helpers';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  gatewayCancellation,
  invoicesOf,
  ok,
  sandboxEventsAbout,
  trail,
} from '../subscriptions/helpers';
import { meteredPlan, razorpayAddonAmounts, unbilled, usageInvoices } from './helpers';

/**
 * A subscription cancelled at its period end ends by whichever comes first: the scheduler's PERIOD_END_CANCEL or the
 * gateway's cancellation webhook (in live mode the gateway often wins). Either way the last period's usage is billed in
 * arrears exactly once (usage.billing.ts). An immediate cancellation at the gateway and a trial's end bill no usage.
 *
 * The gateway is made to win by moving the scheduler's action 30 s past the period end: the test clock then runs the
 * sandbox's period end (and delivers its webhook) first, as a scheduler running late would see it.
 *
 * Merchant GSTIN state 29, customer state 29: 400 calls x 0.25 = 100; CGST = SGST = round(9) = 9; total 118.
 */

const h = useHarness();
jest.setTimeout(120_000);
const GSTIN = '29ABCDE1234F1ZW';
const sql = () => h.app.orm.em.getConnection();
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  let metered: { plan: any };

  beforeAll(async () => {
    m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    conn = await connect(m.test, provider);
    metered = await meteredPlan(m);
  });

  const get = (id: string) => ok(m.test.get(`/subscriptions/${id}`));

  async function reportCalls(subscriptionId: string, quantity: number): Promise<void> {
    const r = await m.test.post('/usage/events/batch', {
      events: [{ subscription_id: subscriptionId, event_type: 'api_calls', quantity, unit: 'call' }],
    });
    if (r.status !== 201) throw new Error(`usage batch answered ${r.status}: ${r.text}`);
  }

  /** The scheduler's next action of a subscription (not in the API). */
  async function scheduled(subscriptionId: string): Promise<string | null> {
    const [row] = await sql().execute<{ next_action: string | null }[]>(
      'select next_action from subscriptions where id = ?',
      [subscriptionId],
    );
    return row.next_action;
  }

  /** The scheduler runs late: its action (period end or trial end) moves 30 s past the gateway's. */
  async function delayScheduler(subscriptionId: string, action: string): Promise<void> {
    const rows = await sql().execute(
      `update subscriptions set next_action_at = next_action_at + interval '30 seconds' where id = ? and next_action = ? returning id`,
      [subscriptionId, action],
    );
    expect(rows).toHaveLength(1);
  }

  /** What must not change once the subscription has ended: it, its trail and its invoices. */
  async function snapshot(id: string) {
    const { updated_at: _u, ...sub } = await get(id);
    return {
      sub,
      trail: await trail(m.test, id),
      invoices: await invoicesOf(m.test, id),
      unbilled: await unbilled(h.app, id),
    };
  }

  it('the gateway reports the period-end cancellation first: the last period is billed once, and neither the scheduler nor a repeat bills it again', async () => {
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, metered.plan.id, { customer_state_code: '29' }),
    );
    expect(sub.status).toBe('active');
    await reportCalls(sub.id, 400);
    expect(await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`))).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
    });
    await delayScheduler(sub.id, 'period_end_cancel');

    // Up to 1 s past the period end: the gateway's end is due, the (late) scheduler's is not.
    await h.clock.advance(m, after(sub.current_period_end));
    const ended = await get(sub.id);
    expect(ended).toMatchObject({ status: 'cancelled', cycles_completed: 1 });
    expect(await scheduled(sub.id)).toBeNull();
    expect(new Date(ended.ended_at).getTime()).toBeGreaterThanOrEqual(new Date(sub.current_period_end).getTime());
    expect(await trail(m.test, sub.id)).toEqual([
      'none>created:subscription.created:api',
      'created>active:subscription.activated:webhook',
      'active>cancelled:subscription.cancelled:webhook',
    ]);

    const usage = await usageInvoices(m.test, sub.id);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({
      billing_reason: 'subscription_cycle',
      subtotal: 100,
      cgst_amount: 9,
      sgst_amount: 9,
      igst_amount: 0,
      total: 118,
      period_start: sub.current_period_start,
      period_end: sub.current_period_end,
    });
    expect(usage[0].line_items.map((l: any) => [l.description, l.amount])).toEqual([
      ['Usage: api_calls (400 call x ₹0.0025)', 100],
    ]);
    if (provider === 'stripe') {
      // Announced, and charged from the mandate 24 hours later (docs/india.md).
      expect(usage[0]).toMatchObject({ status: 'open', amount_due: 118 });
      await h.clock.advance(m, 24 * 3600 + 60);
      expect(await ok(m.test.get(`/invoices/${usage[0].id}`))).toMatchObject({
        status: 'paid',
        amount_paid: 118,
        amount_due: 0,
      });
    } else {
      // No later charge can carry an add-on (usage.billing.ts): left open for the merchant, and no add-on made.
      expect(usage[0]).toMatchObject({ status: 'open', amount_paid: 0, amount_due: 118 });
      expect(await razorpayAddonAmounts(h.app, ended.provider_subscription_id)).toEqual([]);
    }
    const paid = sum((await invoicesOf(m.test, sub.id)).map((i) => i.amount_paid));
    expect(await collectedAt(h.app, provider, ended)).toBe(paid);
    expect(await unbilled(h.app, sub.id)).toBe('0');
    const settled = await snapshot(sub.id);

    // The scheduler comes later, its action still armed (as if the cancellation had not cleared it): it runs, and
    // finds the subscription ended.
    await sql().execute(
      `update subscriptions set next_action = 'period_end_cancel', next_action_at = current_period_end where id = ?`,
      [sub.id],
    );
    await h.clock.advance(m, 60);
    expect(await scheduled(sub.id)).toBeNull(); // it ran
    expect(await snapshot(sub.id)).toEqual(settled);

    // The gateway says it again, under another event id (not a duplicate): nothing more.
    const cancelEvent = (await sandboxEventsAbout(h.app, ended)).filter(
      (e) => e.type === (provider === 'stripe' ? 'customer.subscription.deleted' : 'subscription.cancelled'),
    );
    expect(cancelEvent).toHaveLength(1);
    expect(cancelEvent[0].delivered).toBe(true);
    const again = withNewId(provider, cancelEvent[0].body);
    const r = await postEvent(conn.connection.webhook_url, {
      payload: again.body,
      headers: signedHeaders(provider, conn.webhookSecret, again.body, again.id),
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ received: true, duplicate: false });
    expect(await snapshot(sub.id)).toEqual(settled);

    // A second final close finds every usage row marked billed by the first: nothing to invoice.
    const service = h.app.app.services.subscriptions;
    const em = tenantEntityManager(service.root, { merchantId: m.id, mode: Mode.TEST });
    const second = await em.transactional(async (tx) => {
      const locked = await tx.findOneOrFail(
        BillingSubscription,
        { id: sub.id },
        { lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      return billFinalUsage(service.change(tx, locked), service, new Date());
    });
    expect(second).toBeNull();
    expect(await snapshot(sub.id)).toEqual(settled);
  });

  it('the scheduler first, the gateway after: the same single usage invoice', async () => {
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, metered.plan.id, { customer_state_code: '29' }),
    );
    await reportCalls(sub.id, 400);
    await ok(m.test.post(`/subscriptions/${sub.id}/cancel?cancel_at_period_end=true`));
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await trail(m.test, sub.id)).at(-1)).toBe('active>cancelled:subscription.cancelled:scheduler');
    const usage = await usageInvoices(m.test, sub.id);
    expect(usage.map((i) => i.total)).toEqual([118]);
    // The gateway's own period end was reported too (same instant, after the scheduler) and changed nothing.
    const ended = await get(sub.id);
    const reported = (await sandboxEventsAbout(h.app, ended)).filter(
      (e) => e.type === (provider === 'stripe' ? 'customer.subscription.deleted' : 'subscription.cancelled'),
    );
    expect(reported.map((e) => e.delivered)).toEqual([true]);
    expect(await usageInvoices(m.test, sub.id)).toEqual(usage);
    expect(await unbilled(h.app, sub.id)).toBe('0');
  });

  it('the end of a max_cycles term reported by the gateway first: completed by the scheduler, the last period billed once', async () => {
    const { plan } = await meteredPlan(m, { name: 'API one cycle', max_cycles: 1 });
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '29' }),
    );
    expect(sub).toMatchObject({ status: 'active', cycles_completed: 1, max_cycles: 1 });
    await reportCalls(sub.id, 400);
    await delayScheduler(sub.id, 'complete');
    // The gateway's end of the term is due at the period end; the scheduler's 30 s later.
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await get(sub.id)).status).toBe('active');
    await h.clock.advance(m, 60);
    expect(await get(sub.id)).toMatchObject({ status: 'completed', cycles_completed: 1 });
    expect((await trail(m.test, sub.id)).at(-1)).toBe('active>completed:subscription.completed:scheduler');
    expect((await usageInvoices(m.test, sub.id)).map((i) => i.total)).toEqual([118]);
    expect(await unbilled(h.app, sub.id)).toBe('0');
    if (provider === 'stripe') {
      // Stripe was told to end the term and reported it (customer.subscription.deleted) before the scheduler ran.
      const ended = await get(sub.id);
      const reported = (await sandboxEventsAbout(h.app, ended)).filter(
        (e) => e.type === 'customer.subscription.deleted',
      );
      expect(reported.map((e) => e.delivered)).toEqual([true]);
    }
  });

  it('a trial cancelled at its end, reported by the gateway first: no usage billed', async () => {
    const { plan } = await meteredPlan(m, { trial_period_days: 7 });
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '29' }),
    );
    expect(sub.status).toBe('trialing');
    await reportCalls(sub.id, 400);
    expect(await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }))).toMatchObject({
      status: 'trialing',
      cancel_at_period_end: true,
    });
    await delayScheduler(sub.id, (await scheduled(sub.id))!);
    await h.clock.advance(m, after(sub.trial_end));
    expect(await get(sub.id)).toMatchObject({ status: 'cancelled', cycles_completed: 0 });
    expect((await trail(m.test, sub.id)).at(-1)).toBe('trialing>cancelled:subscription.cancelled:webhook');
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
    expect(await unbilled(h.app, sub.id)).toBe('400'); // not even closed: the trial's end closes no usage
    await h.clock.advance(m, 60);
    expect(await invoicesOf(m.test, sub.id)).toEqual([]);
  });

  it('cancelled now at the gateway: nothing billed for the unfinished period', async () => {
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, metered.plan.id, { customer_state_code: '29' }),
    );
    await reportCalls(sub.id, 400);
    expect((await postEvent(conn.connection.webhook_url, gatewayCancellation(provider, conn, sub))).status).toBe(200);
    expect((await trail(m.test, sub.id)).at(-1)).toBe('active>cancelled:subscription.cancelled:webhook');
    expect(await usageInvoices(m.test, sub.id)).toEqual([]);
    expect(await unbilled(h.app, sub.id)).toBe('400');
  });
});

/** A stored event's body with a new event id (as a gateway re-sending it under another id would). */
function withNewId(provider: ProviderName, body: string): { id: string; body: string } {
  if (provider === 'razorpay') return { id: `evt_${crypto.randomBytes(7).toString('hex')}`, body };
  const id = `evt_${crypto.randomBytes(12).toString('hex')}`;
  return { id, body: JSON.stringify({ ...JSON.parse(body), id }) };
}

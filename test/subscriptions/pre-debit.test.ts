import { Mode } from '../../src/core/entity';
import { PRE_DEBIT_LEAD_HOURS } from '../../src/modules/subscriptions/pre-debit';
import { noticesDue } from '../../src/modules/subscriptions/subscription.store';
import { TestMerchant, useHarness } from '../harness';
import { connect, outbox, PROVIDERS, ProviderName } from '../payments/helpers';
import { after, authorise, createSubscription, invoicesOf, ok, recurringPlan } from './helpers';

/**
 * Pre-debit notices (docs/india.md): every renewal debit of an INR mandate is announced by `invoice.upcoming` (the
 * draft invoice, with amount_due and next_payment_attempt) 48 hours ahead, so at least 24 hours before the gateway
 * debits; once per debit, on the test clock, on both gateways. None for a subscription ending at the period's end.
 */
const h = useHarness();
jest.setTimeout(120_000);
const HOUR = 3_600_000;

const upcoming = async (m: TestMerchant, subscriptionId: string) =>
  (await outbox(h.app, m.id, 'invoice.upcoming'))
    .map((e) => e.payload)
    .filter((p) => p.data.object.subscription_id === subscriptionId);

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
  });

  async function subscribed(form: Record<string, string> = {}) {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '27' }),
      { outcome: 'success', ...form },
    );
    expect(subscription.status).toBe('active');
    return subscription;
  }

  it('announces each renewal 48 h ahead with the draft invoice; the gateway debits no sooner than 24 h after', async () => {
    const sub = await subscribed();
    const end = new Date(sub.current_period_end).getTime();
    await h.clock.advance(m, new Date(end - 48 * HOUR - 60_000));
    expect(await upcoming(m, sub.id)).toEqual([]);
    await h.clock.advance(m, new Date(end - 48 * HOUR + 1000));
    const [notice] = await upcoming(m, sub.id);
    // ₹499.00 to a customer in another state: 18% IGST.
    expect(notice).toMatchObject({
      type: 'invoice.upcoming',
      data: {
        object: {
          object: 'invoice',
          status: 'draft',
          id: null,
          billing_reason: 'subscription_cycle',
          customer_id: sub.customer_id,
          subscription_id: sub.id,
          currency: 'INR',
          subtotal: 49900,
          igst_amount: 8982,
          cgst_amount: 0,
          tax_amount: 8982,
          total: 58882,
          amount_due: 58882,
          debit_amount: 58882,
          carried_invoice_ids: [],
          next_payment_attempt: new Date(end).toISOString(),
        },
      },
    });
    const sentAt = new Date(notice.created_at).getTime();
    expect(end - sentAt).toBeGreaterThanOrEqual(24 * HOUR);

    // The renewal: the gateway debits at the period's end, what was announced.
    await h.clock.advance(m, after(sub.current_period_end));
    const renewal = (await invoicesOf(m.test, sub.id)).find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(renewal).toMatchObject({ status: 'paid', total: 58882, amount_paid: 58882 });
    expect(new Date(renewal.issued_at).getTime() - sentAt).toBeGreaterThanOrEqual(24 * HOUR);
    expect(await upcoming(m, sub.id)).toHaveLength(1);

    // The next period's notice, once.
    const next = await ok(m.test.get(`/subscriptions/${sub.id}`));
    await h.clock.advance(m, new Date(new Date(next.current_period_end).getTime() - 47 * HOUR));
    const notices = await upcoming(m, sub.id);
    expect(notices.map((n) => n.data.object.next_payment_attempt)).toEqual([
      new Date(end).toISOString(),
      new Date(next.current_period_end).toISOString(),
    ]);
  });

  it('announces each dunning retry with the open invoice, at least 24 h before it', async () => {
    // This card pays the first period and declines every renewal and retry.
    const sub = await subscribed({ card_number: '4000000000000341' });
    const end = new Date(sub.current_period_end).getTime();
    await h.clock.advance(m, after(sub.current_period_end));
    const open = (await invoicesOf(m.test, sub.id)).find((i: any) => i.billing_reason === 'subscription_cycle');
    expect(open.status).toBe('open');
    const retries = async () => (await upcoming(m, sub.id)).filter((n) => n.data.object.id === open.id);
    const [first] = await retries();
    expect(first.data.object).toMatchObject({ id: open.id, status: 'open', amount_due: open.amount_due });
    const firstAt = new Date(first.data.object.next_payment_attempt).getTime();
    expect(firstAt - new Date(first.created_at).getTime()).toBeGreaterThanOrEqual(24 * HOUR);
    // Nothing is tried before it; then the retry fails and the next one is announced two days ahead.
    await h.clock.advance(m, new Date(firstAt - 60_000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).retry_attempt).toBe(0);
    await h.clock.advance(m, new Date(firstAt + 1000));
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).retry_attempt).toBe(1);
    const both = await retries();
    expect(both).toHaveLength(2);
    const secondAt = new Date(both[1].data.object.next_payment_attempt).getTime();
    expect(secondAt - new Date(both[1].created_at).getTime()).toBeGreaterThanOrEqual(24 * HOUR);
    expect(secondAt).toBeGreaterThan(end + 2 * 24 * HOUR);
  });

  it("announces what the renewal debits: a plan change's add-on carried by it too (Razorpay)", async () => {
    const sub = await subscribed();
    await h.clock.advance(m, new Date(new Date(sub.current_period_start).getTime() + 10 * 24 * HOUR));
    const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99_900 });
    const r = await ok(m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: up.plan.id }));
    await h.clock.advance(m, new Date(new Date(sub.current_period_end).getTime() - 47 * HOUR));
    const notices = await upcoming(m, sub.id);
    const notice = notices.find((n) => n.data.object.status === 'draft');
    const o = notice.data.object;
    // The renewal bills the new plan: ₹999.00 + 18% IGST.
    expect(o.amount_due).toBe(117882);
    if (provider === 'razorpay') {
      const adjustment = await ok(m.test.get(`/invoices/${r.invoice.id}`));
      expect(adjustment.status).toBe('open');
      expect(o.carried_invoice_ids).toEqual([adjustment.id]);
      expect(o.debit_amount).toBe(117882 + adjustment.amount_due);
    } else {
      expect(o).toMatchObject({ carried_invoice_ids: [], debit_amount: 117882 });
      // Stripe charges the adjustment on its own: announced with the change, for 24 hours later.
      const collection = notices.find((n) => n.data.object.id === r.invoice.id).data.object;
      expect(collection.number).toBe(r.invoice.number);
      expect(collection.amount_due).toBe(r.invoice.amount_due);
      expect(new Date(collection.next_payment_attempt).getTime()).toBe(
        new Date(r.invoice.issued_at).getTime() + 24 * HOUR,
      );
    }
    const g = await m.test.gql('query($id: ID!) { subscription(id: $id) { upcomingDebit { amountDue } } }', {
      id: sub.id,
    });
    expect(g.data.subscription.upcomingDebit.amountDue).toBe(o.debit_amount);
  });

  it('a tax-inclusive price: the notice announces exactly the price, its GST contained', async () => {
    const { plan } = await recurringPlan(m.test, { name: 'Inclusive' }, { tax_behavior: 'inclusive' });
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '27' }),
    );
    await h.clock.advance(m, new Date(new Date(sub.current_period_end).getTime() - 47 * HOUR));
    const [notice] = await upcoming(m, sub.id);
    // ₹499.00 including 18% IGST: 49900 - round(49900 x 10000 / 11800) = 7612.
    expect(notice.data.object).toMatchObject({ total: 49900, igst_amount: 7612, subtotal: 42288, debit_amount: 49900 });
  });

  it('no notice for a subscription that ends at the period end', async () => {
    const sub = await subscribed();
    await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }));
    await h.clock.advance(m, new Date(new Date(sub.current_period_end).getTime() - HOUR));
    expect(await upcoming(m, sub.id)).toEqual([]);
  });

  it('autopay analytics count the notices sent, by kind and currency', async () => {
    const own = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(own.test, provider);
    const { plan } = await recurringPlan(own.test);
    const { subscription: sub } = await authorise(own.test, await createSubscription(own.test, plan.id), {
      outcome: 'success',
      card_number: '4000000000000341',
    });
    await h.clock.advance(own, after(sub.current_period_end)); // the renewal's notice, its failure, retry 1's notice
    const counts = async (query: string) =>
      (await ok(own.test.get(`/analytics/autopay${query}`))).pre_debit_notices as Record<string, number>;
    expect(await counts('')).toEqual({ sent: 2, renewals: 1, retries: 1, collections: 0, declined: 0 });
    expect(await counts('?currency=INR')).toEqual({ sent: 2, renewals: 1, retries: 1, collections: 0, declined: 0 });
    expect(await counts('?currency=USD')).toEqual({ sent: 0, renewals: 0, retries: 0, collections: 0, declined: 0 });
  });

  async function portalToken(customerId: string): Promise<string> {
    const s = await ok(
      m.test.post('/portal/sessions', { customer_id: customerId, return_url: 'https://shop.example' }),
      201,
    );
    return decodeURIComponent(new URL(s.url).hash.slice(1));
  }
  const DECLINE = 'mutation($id: ID!) { portalDeclineDebit(subscriptionId: $id) { id status } }';

  it('the customer declines the announced debit in the portal: paused before it, nothing debited, counted', async () => {
    const sub = await subscribed();
    const token = await portalToken(sub.customer_id);
    // Nothing announced yet: nothing to decline.
    const early = await h.graphql(token, DECLINE, { id: sub.id });
    expect(early.body.errors[0].extensions).toMatchObject({ code: 'no_announced_debit' });
    const end = new Date(sub.current_period_end).getTime();
    await h.clock.advance(m, new Date(end - 47 * HOUR));
    const [notice] = await upcoming(m, sub.id);
    expect(notice).toBeDefined();
    const declined = await h.graphql(token, DECLINE, { id: sub.id });
    expect(declined.body.errors).toBeUndefined();
    expect(declined.body.data.portalDeclineDebit).toEqual({ id: sub.id, status: 'PAUSED' });
    const events = await ok(m.test.get(`/subscriptions/${sub.id}/events`));
    expect(events.at(-1)).toMatchObject({
      event_type: 'subscription.paused',
      from_state: 'active',
      to_state: 'paused',
      metadata_json: { reason: 'debit_declined', debit_at: new Date(end).toISOString() },
    });
    const g = await m.test.gql('query($id: ID!) { subscription(id: $id) { upcomingDebit { debitAt } } }', {
      id: sub.id,
    });
    expect(g.data.subscription.upcomingDebit).toBeNull();
    // Declined once: a second decline finds nothing announced.
    const again = await h.graphql(token, DECLINE, { id: sub.id });
    expect(again.body.errors[0].extensions).toMatchObject({ code: 'no_announced_debit' });

    // The period ends: no debit, no renewal invoice.
    await h.clock.advance(m, after(sub.current_period_end));
    expect((await invoicesOf(m.test, sub.id)).filter((i: any) => i.billing_reason === 'subscription_cycle')).toEqual(
      [],
    );
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('paused');
    const counts = (await ok(m.test.get('/analytics/autopay'))).pre_debit_notices;
    expect(counts.declined).toBeGreaterThanOrEqual(1);
  });

  it("a customer declines only its own subscription's debit", async () => {
    const mine = await subscribed();
    const theirs = await subscribed();
    await h.clock.advance(m, new Date(new Date(theirs.current_period_end).getTime() - 47 * HOUR));
    const token = await portalToken(mine.customer_id);
    const r = await h.graphql(token, DECLINE, { id: theirs.id });
    expect(r.body.errors[0].extensions).toMatchObject({ code: 'resource_not_found' });
    expect((await ok(m.test.get(`/subscriptions/${theirs.id}`))).status).toBe('active');
  });

  it('a renewal announced late (a cancellation withdrawn 10 h before the end) is debited 24 h after its notice (Stripe)', async () => {
    const sub = await subscribed();
    const end = new Date(sub.current_period_end).getTime();
    await ok(m.test.post(`/subscriptions/${sub.id}/cancel`, { cancel_at_period_end: true }));
    await h.clock.advance(m, new Date(end - 10 * HOUR));
    expect(await upcoming(m, sub.id)).toEqual([]);
    await ok(m.test.delete(`/subscriptions/${sub.id}/scheduled-cancellation`));
    await h.clock.advance(m, new Date(end - 10 * HOUR + 60_000));
    const [notice] = await upcoming(m, sub.id);
    const sentAt = new Date(notice.created_at).getTime();
    expect(end - sentAt).toBeLessThan(24 * HOUR);
    const commands = async () =>
      (await ok(m.test.get(`/gateway-commands?subscription_id=${sub.id}`))).data.filter((c: any) =>
        c.action.endsWith('_renewal'),
      );
    const renewal = async () =>
      (await invoicesOf(m.test, sub.id)).find((i: any) => i.billing_reason === 'subscription_cycle');
    if (provider === 'razorpay') {
      // Razorpay debits a mandate only after its own pre-debit notification: nothing is held here.
      expect(notice.data.object.next_payment_attempt).toBe(new Date(end).toISOString());
      expect(await commands()).toEqual([]);
      return;
    }
    const heldUntil = sentAt + 24 * HOUR;
    expect(new Date(notice.data.object.next_payment_attempt).getTime()).toBe(heldUntil);
    expect(await commands()).toHaveLength(2);
    // Announced but unmarked (as a notice written before the mark existed), sent again: the notice's unique key keeps
    // the first, and nothing of a new notice is written, neither its event nor the hold's commands.
    await h.app.app.services.plainPool.query('update subscriptions set noticed_debit_at = null where id = $1', [
      sub.id,
    ]);
    const tenant = { merchantId: m.id, mode: Mode.TEST };
    expect(await h.app.app.services.scheduler.notices.send(tenant, sub.id, new Date(sentAt + 60_000))).toBe(false);
    expect(await upcoming(m, sub.id)).toHaveLength(1);
    expect(await commands()).toHaveLength(2);
    // The period ends: the gateway renews it but keeps the invoice a draft, debiting nothing.
    await h.clock.advance(m, after(sub.current_period_end));
    expect(await renewal()).toBeUndefined();
    const drafts = await h.app.orm.em.getConnection().execute<{ n: number }[]>(
      `select count(*)::int as n from sandbox_objects where provider = 'stripe' and type = 'invoice'
         and data->'parent'->'subscription_details'->>'subscription' = ? and data->>'status' = 'draft'`,
      [sub.provider_subscription_id],
    );
    expect(drafts[0].n).toBe(1);
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({
      status: 'active',
      current_period_end: sub.current_period_end,
    });
    await h.clock.advance(m, new Date(heldUntil - 60_000));
    expect(await renewal()).toBeUndefined();
    // 24 hours after the notice: debited, the period billed as the gateway counts it.
    await h.clock.advance(m, new Date(heldUntil + 1000));
    const paid = await renewal();
    expect(paid).toMatchObject({ status: 'paid', total: 58882, amount_paid: 58882 });
    expect(new Date(paid.issued_at).getTime()).toBeGreaterThanOrEqual(heldUntil);
    expect(new Date(paid.period_start).getTime()).toBe(end);
    expect((await commands()).map((c: any) => [c.action, c.status]).sort()).toEqual([
      ['hold_renewal', 'succeeded'],
      ['release_renewal', 'succeeded'],
    ]);
    // The next renewal is announced 48 hours ahead as usual and debited at its period's end: the hold is over.
    const next = await ok(m.test.get(`/subscriptions/${sub.id}`));
    expect(new Date(next.current_period_start).getTime()).toBe(end);
    await h.clock.advance(m, after(next.current_period_end));
    const notices = await upcoming(m, sub.id);
    expect(notices.at(-1).data.object.next_payment_attempt).toBe(next.current_period_end);
    const cycles = (await invoicesOf(m.test, sub.id)).filter((i: any) => i.billing_reason === 'subscription_cycle');
    expect(cycles.map((i: any) => i.status)).toEqual(['paid', 'paid']);
    expect(await commands()).toHaveLength(2);
  });

  it('sweeps racing each other send one notice', async () => {
    const sub = await subscribed();
    const notices = h.app.app.services.scheduler.notices;
    const at = new Date(new Date(sub.current_period_end).getTime() - 47 * HOUR);
    const tenant = { merchantId: m.id, mode: Mode.TEST };
    const sent = await Promise.all(Array.from({ length: 8 }, () => notices.send(tenant, sub.id, at)));
    expect(sent.filter(Boolean)).toHaveLength(1);
    expect(await upcoming(m, sub.id)).toHaveLength(1);
  });

  it("the due lookup reads the subscription's own mark, set with the notice without moving updated_at", async () => {
    const sub = await subscribed();
    const { notices } = h.app.app.services.scheduler;
    const pool = h.app.app.services.plainPool;
    const at = new Date(new Date(sub.current_period_end).getTime() - 47 * HOUR);
    const tenant = { merchantId: m.id, mode: Mode.TEST };
    const due = async () =>
      (await noticesDue(pool, PRE_DEBIT_LEAD_HOURS, 1000, { merchantId: m.id, at })).map((r) => r.id);
    const mark = async () =>
      (await pool.query('select noticed_debit_at, current_period_end from subscriptions where id = $1', [sub.id]))
        .rows[0];
    expect(await due()).toContain(sub.id);
    expect(await notices.send(tenant, sub.id, at)).toBe(true);
    const marked = await mark();
    expect(marked.noticed_debit_at).toEqual(marked.current_period_end);
    expect(await due()).not.toContain(sub.id);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).updated_at).toBe(sub.updated_at);
    // Sent but unmarked (as a notice written before the mark existed): due again to the lookup, never sent twice,
    // and marked by the attempt, so the lookup does not find it again.
    await pool.query('update subscriptions set noticed_debit_at = null where id = $1', [sub.id]);
    expect(await due()).toContain(sub.id);
    expect(await notices.send(tenant, sub.id, at)).toBe(false);
    expect(await due()).not.toContain(sub.id);
    expect(await upcoming(m, sub.id)).toHaveLength(1);
  });
});

describe('a test-clock advance with more notices due than one transaction sends', () => {
  it('sends every one once, in batches of one pass over the due subscriptions', async () => {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, 'stripe');
    const { plan } = await recurringPlan(m.test);
    const ids: string[] = [];
    let last = 0;
    for (let i = 0; i < 130; i++) {
      const { subscription } = await authorise(
        m.test,
        await createSubscription(m.test, plan.id, { customer_state_code: '27' }),
        { outcome: 'success' },
      );
      ids.push(subscription.id);
      last = Math.max(last, new Date(subscription.current_period_end).getTime());
    }
    // Every notice due at one instant, as at a month-start: 130 is a batch of 100 and one of 30.
    await h.app.app.services.scheduler.notices.dueWork.runDue(m.id, new Date(last - 47 * HOUR));
    const sent = (await outbox(h.app, m.id, 'invoice.upcoming')).map((e) => e.payload.data.object.subscription_id);
    expect(sent.sort()).toEqual([...ids].sort());
  }, 300_000);
});

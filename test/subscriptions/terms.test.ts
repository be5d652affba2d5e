import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { after, authorise, createSubscription, invoicesOf, ok, recurringPlan, subscriptionBody } from './helpers';

/**
 * Subscription terms through both gateways' sandboxes and the test clock: periods that keep the anchor day
 * (docs/subscriptions.md), trial lengths, the setup fee, one invoice per billed period with its GST heads and
 * sequential numbers, customers' active_subscription_count, the list API's filters and envelope, create validation, and
 * tenancy of lists.
 */

const h = useHarness();
const DAY = 86_400;
const MS_DAY = DAY * 1000;

/** The next Jan 31, 10:00 UTC after the wall clock (the test clock only moves forward). */
function nextJan31(): Date {
  const y = new Date().getUTCFullYear() + 1;
  return new Date(Date.UTC(y, 0, 31, 10, 0, 0));
}
const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const ymd = (iso: string) => iso.slice(0, 10);
const timeOfDay = (iso: string) => iso.slice(10);
/** One calendar month later in UTC, the day clamped to the month's last (docs/subscriptions.md). */
function addMonth(iso: string): string {
  const d = new Date(iso);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth() + 1;
  const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      y,
      mo,
      Math.min(d.getUTCDate(), last),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
      d.getUTCMilliseconds(),
    ),
  ).toISOString();
}

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  async function merchant(): Promise<TestMerchant> {
    const m = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    await connect(m.test, provider);
    return m;
  }
  const get = (m: TestMerchant, id: string) => ok(m.test.get(`/subscriptions/${id}`));

  it('periods keep the anchor day: started Jan 31 bills Feb 28/29, then Mar 31, then Apr 30', async () => {
    const m = await merchant();
    const jan31 = nextJan31();
    await h.clock.advance(m, jan31);
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    const y = jan31.getUTCFullYear();
    const feb = `${y}-02-${isLeap(y) ? 29 : 28}`;
    expect(sub.status).toBe('active');
    expect(ymd(sub.current_period_start)).toBe(`${y}-01-31`);
    expect(ymd(sub.current_period_end)).toBe(feb);
    const tod = timeOfDay(sub.current_period_start);
    expect(timeOfDay(sub.current_period_end)).toBe(tod);

    await h.clock.advance(m, after(sub.current_period_end));
    const second = await get(m, sub.id);
    expect([ymd(second.current_period_start), ymd(second.current_period_end)]).toEqual([feb, `${y}-03-31`]);
    await h.clock.advance(m, after(second.current_period_end));
    const third = await get(m, sub.id);
    expect([ymd(third.current_period_start), ymd(third.current_period_end)]).toEqual([`${y}-03-31`, `${y}-04-30`]);
    expect(timeOfDay(third.current_period_end)).toBe(tod);
    expect(third.cycles_completed).toBe(3);

    const inv = await invoicesOf(m.test, sub.id);
    expect(inv.map((i) => [ymd(i.period_start), ymd(i.period_end)])).toEqual([
      [`${y}-01-31`, feb],
      [feb, `${y}-03-31`],
      [`${y}-03-31`, `${y}-04-30`],
    ]);
  });

  it.each([1, 14, 30])('a %i-day trial lasts exactly that long; the first period starts at its end', async (days) => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test, { trial_period_days: days });
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(sub.status).toBe('trialing');
    expect(new Date(sub.trial_end).getTime() - new Date(sub.trial_start).getTime()).toBe(days * MS_DAY);
    expect([sub.current_period_start, sub.current_period_end]).toEqual([sub.trial_start, sub.trial_end]);
    await h.clock.advance(m, after(sub.trial_end, -60_000));
    expect((await get(m, sub.id)).status).toBe('trialing');
    await h.clock.advance(m, after(sub.trial_end));
    const active = await get(m, sub.id);
    expect(active).toMatchObject({
      status: 'active',
      cycles_completed: 1,
      current_period_start: sub.trial_end,
      trial_end: sub.trial_end,
    });
    expect(active.current_period_end).toBe(addMonth(sub.trial_end));
    const [inv] = await invoicesOf(m.test, sub.id);
    expect(inv).toMatchObject({
      billing_reason: 'subscription_create',
      status: 'paid',
      period_start: sub.trial_end,
      period_end: active.current_period_end,
    });
  });

  it('setup fee on the first invoice only; invoices per billed period; GST for an intra-state and an inter-state customer; numbers sequential', async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test, {}, { setup_fee: 10000 });
    const intra = (await authorise(m.test, await createSubscription(m.test, plan.id, { customer_state_code: '29' })))
      .subscription;
    const inter = (await authorise(m.test, await createSubscription(m.test, plan.id, { customer_state_code: '27' })))
      .subscription;
    expect(intra.setup_fee ?? 10000).toBe(10000);
    await h.clock.advance(m, after(inter.current_period_end));
    for (const [sub, heads] of [
      [intra, { cgst: 1, igst: 0 }],
      [inter, { cgst: 0, igst: 1 }],
    ] as const) {
      const got = await get(m, sub.id);
      expect(got.cycles_completed).toBe(2);
      const [first, second] = await invoicesOf(m.test, sub.id);
      expect(first).toMatchObject({
        type: 'invoice',
        billing_reason: 'subscription_create',
        status: 'paid',
        subtotal: 59900,
        currency: 'INR',
        customer_id: sub.customer_id,
        subscription_id: sub.id,
      });
      expect(first.line_items.map((l: any) => l.amount)).toEqual([49900, 10000]);
      expect(first.line_items[1].description).toMatch(/setup/i);
      expect(second).toMatchObject({
        billing_reason: 'subscription_cycle',
        status: 'paid',
        subtotal: 49900,
        amount_due: 0,
        amount_paid: second.total,
      });
      expect(second.line_items.map((l: any) => l.amount)).toEqual([49900]);
      expect([second.period_start, second.period_end]).toEqual([got.current_period_start, got.current_period_end]);
      // The formulas (docs/invoices-and-gst.md): same state -> CGST = SGST = round(subtotal x 9%); another state ->
      // IGST = round(subtotal x 18%)
      expect(first).toMatchObject({
        cgst_amount: heads.cgst ? 5391 : 0,
        sgst_amount: heads.cgst ? 5391 : 0,
        igst_amount: heads.igst ? 10782 : 0,
        tax_amount: 10782,
        total: 70682,
      });
      expect(second).toMatchObject({
        cgst_amount: heads.cgst ? 4491 : 0,
        sgst_amount: heads.cgst ? 4491 : 0,
        igst_amount: heads.igst ? 8982 : 0,
        tax_amount: 8982,
        total: 58882,
        supplier_gstin: '29ABCDE1234F1ZW',
      });
    }
    // Gap-free and sequential per merchant and mode. Numbers are given as the issuing transactions commit: the two
    // renewals, applied at once, may be numbered in either order of their ids.
    const all = (await ok(m.test.get('/invoices?limit=100'))).data.reverse();
    expect(all).toHaveLength(4);
    const seq = all.map((i: any) => Number(/(\d+)$/.exec(i.number)![1])).sort((a: number, b: number) => a - b);
    expect(seq).toEqual([seq[0], seq[0] + 1, seq[0] + 2, seq[0] + 3]);
    expect(seq[0]).toBe(1);
    expect(new Set(all.map((i: any) => i.number.replace(/\d+$/, ''))).size).toBe(1);
    expect(all[0].number).toMatch(/^T/);
  });

  it("customers' active_subscription_count counts active, trialing and past_due", async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test);
    const { plan: trialPlan } = await recurringPlan(m.test, { trial_period_days: 30 });
    const a = (
      await authorise(m.test, await createSubscription(m.test, plan.id, { customer_email: 'count@example.com' }))
    ).subscription;
    const customerId = a.customer_id;
    const count = async () => (await ok(m.test.get(`/customers/${customerId}`))).active_subscription_count;
    expect(await count()).toBe(1);
    const failing = await createSubscription(m.test, plan.id, { customer_id: customerId, customer_email: undefined });
    await authorise(m.test, failing, { outcome: 'success', card_number: '4000000000000341' });
    await createSubscription(m.test, trialPlan.id, { customer_id: customerId, customer_email: undefined }).then((s) =>
      authorise(m.test, s),
    );
    await createSubscription(m.test, plan.id, { customer_id: customerId, customer_email: undefined }); // created: not counted
    const paused = await createSubscription(m.test, plan.id, {
      customer_id: customerId,
      customer_email: undefined,
    }).then((s) => authorise(m.test, s));
    await ok(m.test.post(`/subscriptions/${paused.subscription.id}/pause`));
    const ended = await createSubscription(m.test, plan.id, {
      customer_id: customerId,
      customer_email: undefined,
    }).then((s) => authorise(m.test, s));
    await ok(m.test.post(`/subscriptions/${ended.subscription.id}/cancel`));
    expect(await count()).toBe(3); // 2 active + 1 trialing
    // Past the failing subscription's own period end (made after a's: on a busy machine, seconds after it).
    await h.clock.advance(m, after((await get(m, failing.id)).current_period_end));
    expect((await get(m, failing.id)).status).toBe('past_due');
    expect(await count()).toBe(3); // active + past_due + trialing
    await ok(m.test.post(`/subscriptions/${failing.id}/cancel`));
    expect(await count()).toBe(2);
    const list = await ok(m.test.get(`/subscriptions?customer_id=${customerId}&limit=100`));
    expect(list.data).toHaveLength(6);
  });

  it('GET /subscriptions: the list envelope, newest first, cursor pages, filters status, customer_id and plan_id', async () => {
    const m = await merchant();
    const { plan: p1 } = await recurringPlan(m.test);
    const { plan: p2 } = await recurringPlan(m.test);
    const s1 = await createSubscription(m.test, p1.id, { customer_email: 'one@example.com' });
    const s2 = await createSubscription(m.test, p2.id, { customer_email: 'one@example.com' });
    const s3 = await createSubscription(m.test, p1.id, { customer_email: 'two@example.com' });
    await authorise(m.test, s2);

    const all = await ok(m.test.get('/subscriptions'));
    expect(all).toEqual({ object: 'list', data: expect.any(Array), has_more: false, next_cursor: null });
    expect(all.data.map((s: any) => s.id)).toEqual([s3.id, s2.id, s1.id]);
    expect(all.data[0].object).toBe('subscription');

    const page1 = await ok(m.test.get('/subscriptions?limit=2'));
    expect(page1.data.map((s: any) => s.id)).toEqual([s3.id, s2.id]);
    expect(page1.has_more).toBe(true);
    expect(typeof page1.next_cursor).toBe('string');
    const page2 = await ok(m.test.get(`/subscriptions?limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`));
    expect(page2).toMatchObject({ has_more: false, next_cursor: null });
    expect(page2.data.map((s: any) => s.id)).toEqual([s1.id]);

    const ids = async (q: string) => (await ok(m.test.get(`/subscriptions?${q}`))).data.map((s: any) => s.id);
    expect(await ids('status=active')).toEqual([s2.id]);
    expect(await ids('status=created')).toEqual([s3.id, s1.id]);
    expect(await ids('status=cancelled')).toEqual([]);
    expect(await ids(`customer_id=${s1.customer_id}`)).toEqual([s2.id, s1.id]);
    expect(await ids(`plan_id=${p1.id}`)).toEqual([s3.id, s1.id]);
    expect(await ids(`plan_id=${p1.id}&customer_id=${s1.customer_id}`)).toEqual([s1.id]);
    expect(await ids(`plan_id=${p2.id}&status=created`)).toEqual([]);

    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=%%%bogus', 'cursor'],
      ['status=sleeping', 'status'],
    ]) {
      const r = await m.test.get(`/subscriptions?${q}`);
      expect([r.status, r.body.error?.type, r.body.error?.param]).toEqual([400, 'invalid_request_error', param]);
    }
  });

  it('create validation: plan_not_recurring, unknown plan, price of another plan, currency without a default, missing customer_email, unknown field', async () => {
    const m = await merchant();
    const { plan } = await recurringPlan(m.test);
    const { plan: other, price: otherPrice } = await recurringPlan(m.test);
    const once = await ok(m.test.post('/products', { name: 'Lifetime', type: 'one_time' }), 201);
    const oncePlan = await ok(m.test.post(`/products/${once.id}/plans`, { name: 'Once' }), 201);
    await ok(m.test.post(`/plans/${oncePlan.id}/prices`, { currency: 'INR', amount: 99900, is_default: true }), 201);

    const cases: [string, Record<string, unknown>, number, string, string | null][] = [
      ['one_time plan', subscriptionBody(oncePlan.id), 400, 'plan_not_recurring', 'plan_id'],
      ['unknown plan', subscriptionBody('0190a6f0-0000-7000-8000-000000000000'), 404, 'resource_not_found', 'plan_id'],
      [
        'price of another plan',
        subscriptionBody(plan.id, { price_id: otherPrice.id }),
        400,
        'parameter_invalid',
        'price_id',
      ],
      [
        'currency without a default price',
        subscriptionBody(plan.id, { currency: 'usd' }),
        400,
        'parameter_invalid',
        'currency',
      ],
      [
        'missing customer_email',
        subscriptionBody(plan.id, { customer_email: undefined }),
        400,
        'parameter_missing',
        'customer_email',
      ],
      ['unknown body field', subscriptionBody(plan.id, { bogus_field: 1 }), 400, 'parameter_unknown', 'bogus_field'],
      ['missing plan_id', subscriptionBody(plan.id, { plan_id: undefined }), 400, 'parameter_missing', 'plan_id'],
      [
        'missing success_url',
        subscriptionBody(plan.id, { success_url: undefined }),
        400,
        'parameter_missing',
        'success_url',
      ],
    ];
    for (const [name, body, status, code, param] of cases) {
      const r = await m.test.post('/subscriptions', JSON.parse(JSON.stringify(body)));
      expect({ name, status: r.status, code: r.body?.error?.code, param: r.body?.error?.param }).toEqual({
        name,
        status,
        code,
        param,
      });
      expect(r.headers.get('request-id')).toBe(r.body.error.request_id);
    }
    // Nothing was made by a refused request.
    expect((await ok(m.test.get('/subscriptions'))).data).toEqual([]);
    expect((await ok(m.test.get('/customers'))).data).toEqual([]);
    // The same requests done right succeed (the refusals were about the field named).
    await createSubscription(m.test, plan.id, { currency: 'inr' });
    const withPrice = await createSubscription(m.test, other.id, { price_id: otherPrice.id });
    expect(withPrice).toMatchObject({ price_id: otherPrice.id, currency: 'INR' });
  });

  it('tenancy: another merchant and the live key never see these subscriptions', async () => {
    const m = await merchant();
    const other = await merchant();
    const { plan } = await recurringPlan(m.test);
    const sub = await createSubscription(m.test, plan.id);
    await authorise(m.test, sub);
    for (const c of [other.test, other.live, m.live]) {
      expect((await c.get(`/subscriptions/${sub.id}`)).status).toBe(404);
      expect((await c.get(`/subscriptions/${sub.id}/events`)).status).toBe(404);
      expect((await c.post(`/subscriptions/${sub.id}/cancel`)).status).toBe(404);
      expect((await c.get('/subscriptions')).body.data).toEqual([]);
      expect((await c.get(`/subscriptions?plan_id=${plan.id}`)).body.data).toEqual([]);
      expect((await c.get(`/invoices?subscription_id=${sub.id}`)).body.data).toEqual([]);
      expect(
        (await c.gql('query($id: ID!) { subscription(id: $id) { id } }', { id: sub.id })).errors![0].extensions.code,
      ).toBe('resource_not_found');
      expect((await c.gql('query { subscriptions { totalCount } }')).data.subscriptions.totalCount).toBe(0);
    }
    // A live key cannot subscribe to a test-mode plan either.
    const live = await m.live.post('/subscriptions', subscriptionBody(plan.id));
    expect(live.status).toBe(404);
    expect((await get(m, sub.id)).status).toBe('active');
  });
});

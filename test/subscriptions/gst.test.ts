import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { gst } from '../../src/money';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  gatewayPriceAmountsOf,
  invoicesOf,
  ok,
  outboxTypesOf,
  recurringPlan,
} from './helpers';

/**
 * Subscriptions collect GST through the gateway (docs/invoices-and-gst.md): the gateways collect what subscription
 * invoices say, GST included, for a merchant with a GSTIN, through both gateways' sandboxes and the test clock. What
 * the customer paid at the gateway (captured charges less refunds, read from the sandbox's own records) must equal the
 * sum of the subscription's invoices' `amount_paid`: first charge with the setup fee, renewals, a plan change's
 * adjustment (Stripe at once; Razorpay as an add-on on the next charge), a credit note taken off a renewal and
 * refunded; for an intra-state and an inter-state customer; and a subscription keeps its tax when the merchant's
 * settings change.
 */

const h = useHarness();
jest.setTimeout(120_000);
const DAY = 86_400_000;
const GSTIN = '29ABCDE1234F1ZW';

/**
 * The total of an invoice of `amount` (tax-exclusive) for a customer in `state` (docs/invoices-and-gst.md), at
 * `rateBps`.
 */
const gross = (amount: number, state: string, rateBps = 1800) =>
  gst({ subtotal: amount, currency: 'INR', rateBps, merchantGstin: GSTIN, merchantState: '29', customerState: state })
    .total;

const sql = () => h.app.orm.em.getConnection();
const collectedAtGateway = (provider: ProviderName, sub: any) => collectedAt(h.app, provider, sub);
const gatewayPriceAmounts = (priceId: string) => gatewayPriceAmountsOf(h.app, priceId);

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const paidOf = async (m: TestMerchant, subId: string) =>
  sum((await invoicesOf(m.test, subId)).map((i) => i.amount_paid));

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  describe.each([
    ['intra', '29'],
    ['inter', '27'],
  ])('%s-state customer', (treatment, state) => {
    let m: TestMerchant;
    beforeAll(async () => {
      m = await h.merchant({ gstin: GSTIN, state_code: '29' });
      await connect(m.test, provider);
    });

    it('registered at amount + GST; the first charge (with the setup fee) and renewals equal the invoices; paid = collected', async () => {
      // 49950: intra and inter GST differ (2 x round(4495.5) = 8992 vs round(8991) = 8991); the fee makes it odd again.
      const { plan, price } = await recurringPlan(m.test, {}, { amount: 49950, setup_fee: 10001 });
      const created = await createSubscription(m.test, plan.id, { customer_state_code: state });
      expect(created).toMatchObject({ amount: 49950, setup_fee: 10001, tax_treatment: treatment, tax_rate_bps: 1800 });
      expect(await gatewayPriceAmounts(price.id)).toEqual([gross(49950, state)]);
      const { subscription } = await authorise(m.test, created);
      expect(subscription.status).toBe('active');

      const [first] = await invoicesOf(m.test, subscription.id);
      expect(first).toMatchObject({
        billing_reason: 'subscription_create',
        status: 'paid',
        subtotal: 59951,
        total: gross(59951, state),
      });
      expect(first.amount_paid).toBe(first.total);
      expect(treatment === 'intra' ? first.cgst_amount : first.igst_amount).toBeGreaterThan(0);
      expect(await collectedAtGateway(provider, subscription)).toBe(first.total);

      await h.clock.advance(m, after(subscription.current_period_end));
      const invoices = await invoicesOf(m.test, subscription.id);
      expect(invoices.map((i) => `${i.billing_reason}:${i.status}`)).toEqual([
        'subscription_create:paid',
        'subscription_cycle:paid',
      ]);
      expect(invoices[1]).toMatchObject({
        subtotal: 49950,
        total: gross(49950, state),
        amount_paid: gross(49950, state),
        amount_due: 0,
      });
      expect(await collectedAtGateway(provider, subscription)).toBe(await paidOf(m, subscription.id));
    });

    it('plan changes: the adjustment total (GST included) collected, a credit note with GST taken off the renewal and refunded; paid = collected', async () => {
      const { plan } = await recurringPlan(m.test);
      const { subscription } = await authorise(
        m.test,
        await createSubscription(m.test, plan.id, { customer_state_code: state }),
      );
      expect(subscription.status).toBe('active');
      const start = new Date(subscription.current_period_start).getTime();

      // Upgrade: the new price is registered at its gross amount; the adjustment invoice carries GST on the net.
      await h.clock.advance(m, new Date(start + 10 * DAY));
      const up = await recurringPlan(m.test, { name: 'Plus' }, { amount: 99900 });
      const r1 = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
      const net = r1.proration.net_amount;
      expect(net).toBeGreaterThan(0);
      expect(r1.invoice).toMatchObject({ subtotal: net, total: gross(net, state), amount_due: gross(net, state) });
      expect(await gatewayPriceAmounts(up.price.id)).toEqual([gross(99900, state)]);
      let adjustment = await ok(m.test.get(`/invoices/${r1.invoice.id}`));
      if (provider === 'stripe') {
        // Announced, and charged from the mandate 24 hours later (docs/india.md).
        expect(adjustment).toMatchObject({ status: 'open', amount_due: adjustment.total });
        await h.clock.advance(m, 24 * 3600 + 60);
        adjustment = await ok(m.test.get(`/invoices/${r1.invoice.id}`));
        expect(adjustment).toMatchObject({ status: 'paid', amount_paid: adjustment.total, amount_due: 0 });
      } else {
        expect(adjustment).toMatchObject({ status: 'open', amount_paid: 0, amount_due: adjustment.total });
        const addons = await sql().execute<{ amount: string }[]>(
          `select data->'item'->>'amount' as amount from sandbox_objects where provider = 'razorpay' and type = 'addon' and data->>'subscription_id' = ?`,
          [subscription.provider_subscription_id],
        );
        expect(addons.map((a) => Number(a.amount))).toEqual([adjustment.total]);
      }

      // Downgrade: a credit note with GST; the subscription holds its total as credit.
      await h.clock.advance(m, new Date(start + 20 * DAY));
      const down = await recurringPlan(m.test, { name: 'Lite' }, { amount: 19900 });
      const r2 = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: down.plan.id }));
      const credit = -r2.proration.net_amount;
      expect(credit).toBeGreaterThan(0);
      expect(r2.credit_note).toMatchObject({ subtotal: credit, total: gross(credit, state), status: 'issued' });
      expect(r2.credit_note.tax_amount).toBeGreaterThan(0);
      expect(r2.subscription.credit_balance).toBe(r2.credit_note.total);

      // The renewal: the gateway charges the new gross price (Razorpay: plus the add-on); the credit is taken off the
      // total and refunded on that charge; the add-on's invoice is paid by it, once.
      await h.clock.advance(m, after(subscription.current_period_end));
      const invoices = await invoicesOf(m.test, subscription.id);
      const cycle = invoices.find((i) => i.billing_reason === 'subscription_cycle');
      const total = gross(19900, state);
      const applied = Math.min(r2.credit_note.total, total);
      expect(cycle).toMatchObject({
        status: 'paid',
        subtotal: 19900,
        total,
        credit_applied: applied,
        amount_paid: total - applied,
        amount_due: 0,
      });
      expect(await ok(m.test.get(`/invoices/${adjustment.id}`))).toMatchObject({
        status: 'paid',
        amount_paid: adjustment.total,
        amount_due: 0,
      });
      const after1 = await ok(m.test.get(`/subscriptions/${subscription.id}`));
      expect(after1.credit_balance).toBe(r2.credit_note.total - applied);
      const events = await outboxTypesOf(h.app, m.id, subscription.id);
      expect(events.filter((t) => t === 'invoice.paid')).toHaveLength(
        invoices.filter((i) => i.type === 'invoice').length,
      );
      expect(await collectedAtGateway(provider, subscription)).toBe(await paidOf(m, subscription.id));
    });
  });

  it("a change of the merchant's tax settings: a subscription keeps its tax (invoices = charges); new ones take the new settings", async () => {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
    const { plan, price } = await recurringPlan(m.test);
    const before = (await authorise(m.test, await createSubscription(m.test, plan.id, { customer_state_code: '27' })))
      .subscription;
    expect(before).toMatchObject({ tax_treatment: 'inter', tax_rate_bps: 1800 });
    await ok(m.test.post('/merchant/tax-settings', { tax_rate_bps: 1200 }));
    const later = (await authorise(m.test, await createSubscription(m.test, plan.id, { customer_state_code: '27' })))
      .subscription;
    expect(later).toMatchObject({ tax_treatment: 'inter', tax_rate_bps: 1200 });
    expect(await gatewayPriceAmounts(price.id)).toEqual(
      [gross(49900, '27', 1200), gross(49900, '27', 1800)].sort((a, b) => a - b),
    );
    // The first registration made for the provider is the price's provider_price_ids entry (docs/subscriptions.md),
    // kept.
    const ids = (await ok(m.test.get(`/prices/${price.id}`))).provider_price_ids;
    expect(Object.keys(ids)).toEqual([provider]);

    await ok(m.test.post('/merchant/tax-settings', { gstin: null }));
    const untaxed = (await authorise(m.test, await createSubscription(m.test, plan.id, { customer_state_code: '27' })))
      .subscription;
    expect(untaxed).toMatchObject({ tax_treatment: 'none', tax_rate_bps: 0 });
    expect((await ok(m.test.get(`/prices/${price.id}`))).provider_price_ids).toEqual(ids);

    await h.clock.advance(m, after(untaxed.current_period_end));
    for (const [sub, rate, taxed] of [
      [before, 1800, true],
      [later, 1200, true],
      [untaxed, 0, false],
    ] as const) {
      const [, renewal] = await invoicesOf(m.test, sub.id);
      const total = taxed ? gross(49900, '27', rate) : 49900;
      expect(renewal).toMatchObject({
        billing_reason: 'subscription_cycle',
        status: 'paid',
        total,
        amount_paid: total,
        tax_rate_bps: rate,
      });
      expect(await collectedAtGateway(provider, sub)).toBe(await paidOf(m, sub.id));
    }
  });
});

describe('razorpay: an add-on carried by a failed renewal follows its dunning', () => {
  async function upgradedThenRenewed(card: string) {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, 'razorpay');
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id), {
      outcome: 'success',
      card_number: card,
    });
    expect(subscription.status).toBe('active');
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 10 * DAY));
    const up = await recurringPlan(m.test, { name: 'Plus' }, { amount: 99900 });
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    await h.clock.advance(m, after(subscription.current_period_end));
    const pastDue = await ok(m.test.get(`/subscriptions/${subscription.id}`));
    expect(pastDue.status).toBe('past_due');
    const renewal = (await invoicesOf(m.test, subscription.id)).find((i) => i.billing_reason === 'subscription_cycle');
    expect(renewal).toMatchObject({ status: 'open', total: gross(99900, '29'), amount_paid: 0 });
    // The failed charge carried the add-on: the adjustment is still open, and follows the renewal's dunning.
    expect(await ok(m.test.get(`/invoices/${r.invoice.id}`))).toMatchObject({ status: 'open', amount_paid: 0 });
    return { m, subscription: pastDue, adjustment: r.invoice, renewal };
  }

  it('a successful retry pays both the renewal and the adjustment (amount_paid = collected)', async () => {
    const { m, subscription, adjustment, renewal } = await upgradedThenRenewed('4000000000000119');
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + DAY + 60_000));
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('active');
    expect(await ok(m.test.get(`/invoices/${renewal.id}`))).toMatchObject({
      status: 'paid',
      amount_paid: renewal.total,
    });
    expect(await ok(m.test.get(`/invoices/${adjustment.id}`))).toMatchObject({
      status: 'paid',
      amount_paid: adjustment.total,
      amount_due: 0,
    });
    expect(await collectedAtGateway('razorpay', subscription)).toBe(await paidOf(m, subscription.id));
  });

  it('when dunning gives up, the adjustment is uncollectible with the renewal', async () => {
    const { m, subscription, adjustment, renewal } = await upgradedThenRenewed('4000000000000341');
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 6 * DAY));
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('halted');
    expect(await ok(m.test.get(`/invoices/${renewal.id}`))).toMatchObject({ status: 'uncollectible', amount_paid: 0 });
    expect(await ok(m.test.get(`/invoices/${adjustment.id}`))).toMatchObject({
      status: 'uncollectible',
      amount_paid: 0,
    });
    expect(await collectedAtGateway('razorpay', subscription)).toBe(await paidOf(m, subscription.id));
  });
});

import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { gst, gstIncluded } from '../../src/money';
import { createCoupon } from '../coupons/helpers';
import {
  after,
  authorise,
  collectedAt,
  createSubscription,
  gatewayPriceAmountsOf,
  invoicesOf,
  ok,
  recurringPlan,
} from './helpers';

/**
 * Tax-inclusive prices (docs/invoices-and-gst.md, "Tax-inclusive prices"): a subscription to an inclusive ₹499.00 price
 * has invoices whose total is the price's amount exactly and whose GST heads (CGST = SGST intra-state, IGST
 * inter-state) are contained in it; the gateway is registered at, and charges, exactly that amount, through both
 * gateways' sandboxes and the test clock. An exclusive price beside it keeps adding GST on top.
 */

const h = useHarness();
jest.setTimeout(120_000);
const GSTIN = '29ABCDE1234F1ZW';

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  describe.each([
    ['intra', '29'],
    ['inter', '27'],
  ] as const)('%s-state customer', (treatment, state) => {
    let m: TestMerchant;
    beforeAll(async () => {
      m = await h.merchant({ gstin: GSTIN, state_code: '29' });
      await connect(m.test, provider);
    });

    it('an inclusive ₹499.00 price: invoices total 49900 with exact heads, and the gateway charges 49900', async () => {
      const { plan, price } = await recurringPlan(m.test, {}, { amount: 49900, tax_behavior: 'inclusive' });
      expect(price).toMatchObject({ amount: 49900, tax_behavior: 'inclusive' });
      const created = await createSubscription(m.test, plan.id, { customer_state_code: state });
      expect(created).toMatchObject({ amount: 49900, tax_treatment: treatment, tax_behavior: 'inclusive' });
      // Registered at the price itself: no GST on top.
      expect(await gatewayPriceAmountsOf(h.app, price.id)).toEqual([49900]);
      const { subscription } = await authorise(m.test, created);
      expect(subscription.status).toBe('active');

      const heads = gstIncluded(49900, treatment, 1800);
      const expected =
        treatment === 'intra'
          ? { cgst_amount: 3806, sgst_amount: 3806, igst_amount: 0 }
          : { cgst_amount: 0, sgst_amount: 0, igst_amount: 7612 };
      expect(heads).toMatchObject({ cgst: expected.cgst_amount, igst: expected.igst_amount, tax: 7612 });
      const [first] = await invoicesOf(m.test, subscription.id);
      expect(first).toMatchObject({
        billing_reason: 'subscription_create',
        status: 'paid',
        total: 49900,
        tax_amount: 7612,
        subtotal: 49900 - 7612,
        amount_paid: 49900,
        ...expected,
      });
      expect(first.cgst_amount + first.sgst_amount + first.igst_amount).toBe(first.tax_amount);
      // The lines show their taxable values: they sum to the subtotal, and their heads to the invoice's.
      expect(sum(first.line_items.map((l: any) => l.amount))).toBe(first.subtotal);
      expect(sum(first.line_items.map((l: any) => l.cgst_amount + l.sgst_amount + l.igst_amount))).toBe(7612);
      expect(await collectedAt(h.app, provider, subscription)).toBe(49900);

      await h.clock.advance(m, after(subscription.current_period_end));
      const invoices = await invoicesOf(m.test, subscription.id);
      expect(invoices.map((i) => `${i.billing_reason}:${i.status}`)).toEqual([
        'subscription_create:paid',
        'subscription_cycle:paid',
      ]);
      expect(invoices[1]).toMatchObject({
        total: 49900,
        subtotal: 42288,
        amount_paid: 49900,
        amount_due: 0,
        ...expected,
      });
      expect(await collectedAt(h.app, provider, subscription)).toBe(2 * 49900);
    });

    it('an inclusive price with a setup fee: the first invoice totals amount + fee, the first charge equals it', async () => {
      const { plan } = await recurringPlan(m.test, {}, { amount: 49900, setup_fee: 10001, tax_behavior: 'inclusive' });
      const { subscription } = await authorise(
        m.test,
        await createSubscription(m.test, plan.id, { customer_state_code: state }),
      );
      const [first] = await invoicesOf(m.test, subscription.id);
      const heads = gstIncluded(59901, treatment, 1800);
      expect(first).toMatchObject({
        total: 59901,
        subtotal: 59901 - heads.tax,
        cgst_amount: heads.cgst,
        sgst_amount: heads.sgst,
        igst_amount: heads.igst,
      });
      if (treatment === 'intra') expect(first.cgst_amount).toBe(first.sgst_amount);
      expect(await collectedAt(h.app, provider, subscription)).toBe(59901);
    });

    it('a coupon on an inclusive price: discounted periods total price - discount, then the full price; = charged', async () => {
      const { plan, price } = await recurringPlan(m.test, {}, { amount: 49900, tax_behavior: 'inclusive' });
      const coupon = await createCoupon(m.test, { duration: 'once', percent_off: 25 });
      const created = await createSubscription(m.test, plan.id, {
        coupon_code: coupon.code,
        customer_state_code: state,
      });
      const discounted = 49900 - 12475;
      expect(await gatewayPriceAmountsOf(h.app, price.id)).toEqual([discounted]);
      const { subscription } = await authorise(m.test, created);
      const [first] = await invoicesOf(m.test, subscription.id);
      const heads = gstIncluded(discounted, treatment, 1800);
      expect(first).toMatchObject({
        discount_amount: 12475,
        total: discounted,
        subtotal: discounted - heads.tax,
        cgst_amount: heads.cgst,
        igst_amount: heads.igst,
      });
      expect(sum(first.line_items.map((l: any) => l.amount))).toBe(first.subtotal);
      expect(await collectedAt(h.app, provider, subscription)).toBe(discounted);

      await h.clock.advance(m, after(subscription.current_period_end));
      const invoices = await invoicesOf(m.test, subscription.id);
      expect(invoices.map((i) => i.total)).toEqual([discounted, 49900]);
      expect(invoices[1]).toMatchObject({ status: 'paid', subtotal: 42288 });
      expect(await collectedAt(h.app, provider, subscription)).toBe(discounted + 49900);
    });

    it("usage on an inclusive plan is inclusive too: the usage invoice totals the usage's amount exactly", async () => {
      const { plan } = await recurringPlan(m.test, {}, { amount: 49900, tax_behavior: 'inclusive' });
      await ok(
        m.test.post(`/plans/${plan.id}/usage-rates`, {
          event_type: 'api_calls',
          currency: 'INR',
          unit_amount_decimal: '100',
        }),
        201,
      );
      const { subscription } = await authorise(
        m.test,
        await createSubscription(m.test, plan.id, { customer_state_code: state }),
      );
      await ok(
        m.test.post('/usage/events/batch', {
          events: [{ subscription_id: subscription.id, event_type: 'api_calls', quantity: 1234, unit: 'call' }],
        }),
        201,
      );
      await h.clock.advance(m, after(subscription.current_period_end));
      const usage = (await invoicesOf(m.test, subscription.id)).find((i) =>
        i.line_items.some((l: any) => l.description.startsWith('Usage: ')),
      );
      // 1,234 calls at ₹1.00: ₹1,234.00 with its GST contained, as the plan's price has it.
      const heads = gstIncluded(123400, treatment, 1800);
      expect(usage).toMatchObject({
        total: 123400,
        subtotal: 123400 - heads.tax,
        tax_amount: heads.tax,
        cgst_amount: heads.cgst,
        sgst_amount: heads.sgst,
        igst_amount: heads.igst,
      });
      expect(sum(usage.line_items.map((l: any) => l.amount))).toBe(usage.subtotal);
    });

    it('an exclusive price beside it is unchanged: GST on top, the gateway charges amount + GST', async () => {
      const { plan, price } = await recurringPlan(m.test, {}, { amount: 49900 });
      expect(price.tax_behavior).toBe('exclusive');
      const created = await createSubscription(m.test, plan.id, { customer_state_code: state });
      expect(created.tax_behavior).toBe('exclusive');
      const total = gst({
        subtotal: 49900,
        currency: 'INR',
        rateBps: 1800,
        merchantGstin: GSTIN,
        merchantState: '29',
        customerState: state,
      }).total;
      const { subscription } = await authorise(m.test, created);
      const [first] = await invoicesOf(m.test, subscription.id);
      expect(first).toMatchObject({ subtotal: 49900, total });
      expect(await collectedAt(h.app, provider, subscription)).toBe(total);
    });
  });
});

import { TestMerchant, useHarness } from '../harness';
import { connect, PROVIDERS, ProviderName } from '../payments/helpers';
import { createCoupon } from '../coupons/helpers';
import { gstIncluded, gstOn } from '../../src/money';
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
 * Plan changes to and from tax-inclusive prices (docs/invoices-and-gst.md, "Tax-inclusive prices"), through both
 * gateways' sandboxes and the test clock, for an intra-state and an inter-state customer. Yearly plans changed half-way
 * through the period: the few seconds between the clock's move and the request move the proration by far less than a
 * paisa, so the figures below are exact. Each side is prorated with its own price's tax behaviour: an inclusive side
 * counts its prorated amount as it is (GST contained), an exclusive one adds GST on top; the document is the net, its
 * GST contained. The preview answers what the change bills; the subscription, its renewal and the gateway follow the
 * new price's tax behaviour; what the customer paid at the gateway equals the invoices' amount_paid.
 */

const h = useHarness();
jest.setTimeout(180_000);
const GSTIN = '29ABCDE1234F1ZW';

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

/** An active yearly subscription on `price`, the clock moved to the middle of its period. */
async function halfway(
  m: TestMerchant,
  price: Record<string, unknown>,
  state: string,
  extra: Record<string, unknown> = {},
) {
  const { plan } = await recurringPlan(m.test, { billing_frequency: 'yearly' }, price);
  const { subscription } = await authorise(
    m.test,
    await createSubscription(m.test, plan.id, { customer_state_code: state, ...extra }),
  );
  expect(subscription.status).toBe('active');
  const start = new Date(subscription.current_period_start).getTime();
  const end = new Date(subscription.current_period_end).getTime();
  await h.clock.advance(m, new Date(start + (end - start) / 2));
  return subscription;
}

/** The preview, then the change; both answer the same figures. */
async function previewThenChange(m: TestMerchant, subId: string, planId: string) {
  const preview = await ok(m.test.post(`/subscriptions/${subId}/change-plan/preview`, { plan_id: planId }));
  const changed = await ok(m.test.post(`/subscriptions/${subId}/change-plan`, { plan_id: planId }));
  expect(preview.proration).toEqual(changed.proration);
  expect(preview.tax_behavior).toBe(changed.subscription.tax_behavior);
  const doc = changed.invoice ?? changed.credit_note;
  const sign = changed.invoice ? 1 : -1;
  expect(preview.total).toBe(sign * doc.total);
  expect(preview.tax_amount).toBe(sign * doc.tax_amount);
  // net + tax = total, on the preview and on the document.
  expect(preview.proration.net_amount + preview.tax_amount).toBe(preview.total);
  expect(doc.subtotal + doc.tax_amount).toBe(doc.total);
  expect(doc.cgst_amount + doc.sgst_amount + doc.igst_amount).toBe(doc.tax_amount);
  expect(sum(doc.line_items.map((l: any) => l.amount))).toBe(doc.subtotal);
  expect(sum(doc.line_items.map((l: any) => l.cgst_amount + l.sgst_amount + l.igst_amount))).toBe(doc.tax_amount);
  return { preview, changed, doc };
}

/** The renewal after the change: the new price billed as its tax behaviour says; paid = collected at the gateway. */
async function renewal(m: TestMerchant, provider: ProviderName, sub: any) {
  await h.clock.advance(m, after(sub.current_period_end));
  const invoices = await invoicesOf(m.test, sub.id);
  const cycle = invoices.find((i) => i.billing_reason === 'subscription_cycle');
  expect(cycle).toBeDefined();
  expect(invoices.filter((i) => i.type === 'invoice').every((i) => i.status === 'paid')).toBe(true);
  expect(await collectedAt(h.app, provider, sub)).toBe(sum(invoices.map((i) => i.amount_paid)));
  return cycle;
}

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

    it('inclusive ₹1,180.00 -> exclusive ₹2,000.00 half-way: an adjustment invoice of ₹590.00 (= 1,180.00 - 590.00)', async () => {
      const sub = await halfway(m, { amount: 118000, tax_behavior: 'inclusive' }, state);
      const to = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 200000 });
      const { changed, doc } = await previewThenChange(m, sub.id, to.plan.id);
      // Credit: half of 1,180.00 = 590.00, GST contained. Debit: half of 2,000.00 = 1,000.00 + 18% = 1,180.00.
      // Net 590.00, GST contained: intra CGST = SGST = round(59000 x 1800 / 23600) = 4500; inter IGST = 59000 -
      // round(59000 x 10000 / 11800) = 9000. Taxable value 500.00.
      expect(changed.proration).toEqual({
        credit_amount: 59000,
        debit_amount: 100000,
        net_amount: 50000,
        currency: 'INR',
      });
      expect(doc).toMatchObject({
        type: 'invoice',
        total: 59000,
        subtotal: 50000,
        tax_amount: 9000,
        ...(treatment === 'intra'
          ? { cgst_amount: 4500, sgst_amount: 4500, igst_amount: 0 }
          : { cgst_amount: 0, sgst_amount: 0, igst_amount: 9000 }),
      });
      expect(changed.subscription).toMatchObject({ tax_behavior: 'exclusive', amount: 200000 });
      // The exclusive price is registered with its GST on top.
      expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([236000]);
      const cycle = await renewal(m, provider, sub);
      expect(cycle).toMatchObject({ subtotal: 200000, total: 236000, amount_paid: 236000 });
    });

    it('exclusive ₹2,000.00 -> inclusive ₹1,180.00 half-way: a credit note of ₹590.00, taken off the renewal', async () => {
      const sub = await halfway(m, { amount: 200000 }, state);
      const to = await recurringPlan(
        m.test,
        { billing_frequency: 'yearly' },
        { amount: 118000, tax_behavior: 'inclusive' },
      );
      const { preview, changed, doc } = await previewThenChange(m, sub.id, to.plan.id);
      // Credit: 1,000.00 + 18% = 1,180.00. Debit: 590.00, GST contained. Net -590.00: a credit note of 590.00.
      expect(changed.proration).toEqual({
        credit_amount: 100000,
        debit_amount: 59000,
        net_amount: -50000,
        currency: 'INR',
      });
      expect(preview).toMatchObject({ total: -59000, tax_amount: -9000 });
      expect(changed.invoice).toBeNull();
      expect(doc).toMatchObject({
        type: 'credit_note',
        total: 59000,
        subtotal: 50000,
        tax_amount: 9000,
        ...(treatment === 'intra' ? { cgst_amount: 4500, sgst_amount: 4500 } : { igst_amount: 9000 }),
      });
      expect(changed.subscription).toMatchObject({ tax_behavior: 'inclusive', amount: 118000, credit_balance: 59000 });
      // The inclusive price is registered at exactly its amount.
      expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([118000]);
      const cycle = await renewal(m, provider, sub);
      expect(cycle).toMatchObject({ total: 118000, subtotal: 100000, credit_applied: 59000, amount_paid: 59000 });
    });

    it('inclusive ₹1,180.00 -> inclusive ₹4,990.00 half-way: an invoice of exactly 2,495.00 - 590.00 = ₹1,905.00', async () => {
      const sub = await halfway(m, { amount: 118000, tax_behavior: 'inclusive' }, state);
      const to = await recurringPlan(
        m.test,
        { billing_frequency: 'yearly' },
        { amount: 499000, tax_behavior: 'inclusive' },
      );
      const { changed, doc } = await previewThenChange(m, sub.id, to.plan.id);
      // 190500 at 18%, contained: intra each half round(190500 x 1800 / 23600 = 14529.66) = 14530, tax 29060;
      // inter IGST = 190500 - round(190500 x 10000 / 11800 = 161440.68) = 29059.
      const heads =
        treatment === 'intra'
          ? { cgst_amount: 14530, sgst_amount: 14530, igst_amount: 0, tax_amount: 29060, subtotal: 161440 }
          : { cgst_amount: 0, sgst_amount: 0, igst_amount: 29059, tax_amount: 29059, subtotal: 161441 };
      expect(changed.proration).toEqual({
        credit_amount: 59000,
        debit_amount: 249500,
        net_amount: heads.subtotal,
        currency: 'INR',
      });
      expect(doc).toMatchObject({ type: 'invoice', total: 190500, ...heads });
      expect(changed.subscription).toMatchObject({ tax_behavior: 'inclusive', amount: 499000 });
      expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([499000]);
      const cycle = await renewal(m, provider, sub);
      expect(cycle).toMatchObject({ total: 499000, amount_paid: 499000 });
    });
  });

  it('another cadence: monthly inclusive ₹499.00 -> yearly exclusive ₹4,990.00 bills the new year in full, less the credit', async () => {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
    const { plan } = await recurringPlan(m.test, {}, { amount: 49900, tax_behavior: 'inclusive' });
    const { subscription: sub } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '27' }),
    );
    await h.clock.advance(m, new Date(new Date(sub.current_period_start).getTime() + 10 * 86_400_000));
    const to = await recurringPlan(m.test, { billing_frequency: 'yearly' }, { amount: 499000 });
    const { changed, doc } = await previewThenChange(m, sub.id, to.plan.id);
    const credit = changed.proration.credit_amount; // the unused part of 49900, its GST contained
    expect(credit).toBeGreaterThan(0);
    expect(credit).toBeLessThan(49900);
    expect(changed.proration.debit_amount).toBe(499000);
    // The new year with its IGST on top (499000 + 89820), less the credit as it is.
    const total = gstOn(499000, 'inter', 1800).total - credit;
    expect(doc).toMatchObject({ type: 'invoice', total, igst_amount: gstIncluded(total, 'inter', 1800).igst });
    expect(changed.subscription.tax_behavior).toBe('exclusive');
    expect(changed.subscription.current_period_start).not.toBe(sub.current_period_start);
    expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([588820]);
  });

  it('a forever 10% coupon, inclusive -> inclusive: each side discounted, the total exactly their difference', async () => {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
    const coupon = await createCoupon(m.test, { duration: 'forever', percent_off: 10 });
    const sub = await halfway(m, { amount: 118000, tax_behavior: 'inclusive' }, '29', { coupon_code: coupon.code });
    expect((await invoicesOf(m.test, sub.id))[0]).toMatchObject({ total: 106200, discount_amount: 11800 });
    const to = await recurringPlan(
      m.test,
      { billing_frequency: 'yearly' },
      { amount: 499000, tax_behavior: 'inclusive' },
    );
    const { changed, doc } = await previewThenChange(m, sub.id, to.plan.id);
    // Credit: half of 1,062.00 = 531.00; debit: half of 4,491.00 = 2,245.50; net 1,714.50 with its GST contained:
    // each half round(171450 x 1800 / 23600 = 13076.69) = 13077.
    expect(changed.proration).toMatchObject({ credit_amount: 53100, debit_amount: 224550, net_amount: 145296 });
    expect(doc).toMatchObject({
      type: 'invoice',
      total: 171450,
      subtotal: 145296,
      cgst_amount: 13077,
      sgst_amount: 13077,
    });
    // The gateway's new price is the discounted one, GST contained.
    expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([449100]);
    const cycle = await renewal(m, provider, sub);
    expect(cycle).toMatchObject({ total: 449100, discount_amount: 49900, amount_paid: 449100 });
  });

  it('a change at the period end to an inclusive price: no proration, the renewal bills and charges exactly the price', async () => {
    const m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
    const sub = await halfway(m, { amount: 200000 }, '29');
    const to = await recurringPlan(
      m.test,
      { billing_frequency: 'yearly' },
      { amount: 118000, tax_behavior: 'inclusive' },
    );
    const preview = await ok(
      m.test.post(`/subscriptions/${sub.id}/change-plan/preview`, { plan_id: to.plan.id, effective: 'period_end' }),
    );
    expect(preview).toMatchObject({
      proration: null,
      total: 0,
      tax_amount: 0,
      new_amount: 118000,
      tax_behavior: 'inclusive',
    });
    const scheduled = await ok(
      m.test.post(`/subscriptions/${sub.id}/change-plan`, { plan_id: to.plan.id, effective: 'period_end' }),
    );
    expect(scheduled).toMatchObject({ invoice: null, credit_note: null, proration: null });
    expect(scheduled.subscription.tax_behavior).toBe('exclusive');
    expect(await gatewayPriceAmountsOf(h.app, to.price.id)).toEqual([118000]);
    const cycle = await renewal(m, provider, sub);
    expect(cycle).toMatchObject({ total: 118000, subtotal: 100000, cgst_amount: 9000, sgst_amount: 9000 });
    expect(await ok(m.test.get(`/subscriptions/${sub.id}`))).toMatchObject({
      price_id: to.price.id,
      tax_behavior: 'inclusive',
    });
  });
});

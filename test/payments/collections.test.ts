import { TestMerchant, useHarness } from '../harness';
import { v7 as uuidv7 } from 'uuid';
import { createGateway } from '../../src/gateways';
import { Connected, connect, gatewayCharge, outbox, PROVIDERS, ProviderName } from './helpers';
import { after, authorise, createSubscription, invoicesOf, ok, recurringPlan } from '../subscriptions/helpers';

/**
 * Every collection is a payment (docs/durable-work.md, docs/payments.md): a subscription's first charge, renewals and
 * dunning retries and plan-change collections (a Razorpay add-on: its share of the charge that carried it) are
 * payments (`billing_reason`, `subscription_id`) their invoices name, listed with the customer's
 * payments and refundable through POST /payments/{id}/refund, each refund with a credit note against that invoice.
 */
const h = useHarness();
const DAY = 86_400;

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  async function subscribed(card = '4242424242424242') {
    const m: TestMerchant = await h.merchant({ gstin: '29ABCDE1234F1ZW', state_code: '29' });
    const conn: Connected = await connect(m.test, provider);
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(m.test, await createSubscription(m.test, plan.id, { provider }), {
      outcome: 'success',
      card_number: card,
    });
    return { m, subscription, conn };
  }

  it('the first charge and each renewal are payments the invoices name, listed under the customer', async () => {
    const { m, subscription } = await subscribed();
    await h.clock.advance(m, 31 * DAY);
    const invoices = await invoicesOf(m.test, subscription.id);
    expect(invoices.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
    const listed = (await ok(m.test.get(`/payments?customer_id=${subscription.customer_id}`))).data;
    expect(listed).toHaveLength(2);
    for (const [i, reason] of [
      [0, 'subscription_create'],
      [1, 'subscription_cycle'],
    ] as const) {
      const invoice = invoices[i];
      const payment = listed.find((p: any) => p.id === invoice.payment_id);
      expect(payment).toMatchObject({
        object: 'payment',
        status: 'succeeded',
        billing_reason: reason,
        subscription_id: subscription.id,
        customer_id: subscription.customer_id,
        amount_total: invoice.total,
        tax_amount: invoice.tax_amount,
        amount: invoice.total - invoice.tax_amount,
        currency: 'INR',
        provider,
        checkout_url: null,
        amount_refunded: 0,
      });
      expect(payment.provider_payment_id).toBeTruthy();
    }
  });

  it('a renewal refunded in two parts: credit notes against its invoice sum to it, the gateway returned exactly that', async () => {
    const { m, subscription } = await subscribed();
    await h.clock.advance(m, 31 * DAY);
    const renewal = (await invoicesOf(m.test, subscription.id))[1];
    const payment = await ok(m.test.get(`/payments/${renewal.payment_id}`));
    expect(payment.amount_total).toBe(58_882);

    const first = await ok(m.test.post(`/payments/${payment.id}/refund`, { amount: 10_000 }), 201);
    expect(first).toMatchObject({ amount: 10_000, status: 'succeeded' });
    expect(await ok(m.test.get(`/payments/${payment.id}`))).toMatchObject({
      status: 'partially_refunded',
      amount_refunded: 10_000,
    });
    const rest = await ok(m.test.post(`/payments/${payment.id}/refund`, {}), 201);
    expect(rest.amount).toBe(48_882);
    expect(await ok(m.test.get(`/payments/${payment.id}`))).toMatchObject({
      status: 'refunded',
      amount_refunded: 58_882,
    });
    await h.app.app.sandbox!.sandbox.settle();
    expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
      charged: 58_882,
      refunded: 58_882,
    });

    const notes = (await ok(m.test.get(`/invoices?subscription_id=${subscription.id}&type=credit_note`))).data;
    expect(
      notes.map((n: any) => [n.billing_reason, n.related_invoice_id, n.total]).sort((a: any, b: any) => a[2] - b[2]),
    ).toEqual([
      ['refund', renewal.id, 10_000],
      ['refund', renewal.id, 48_882],
    ]);
    // GST reversed per head: the notes' heads sum to the invoice's.
    for (const head of ['cgst_amount', 'sgst_amount', 'subtotal'] as const) {
      expect(notes.reduce((s: number, n: any) => s + n[head], 0)).toBe(renewal[head]);
    }
    expect(await ok(m.test.get(`/invoices/${renewal.id}`))).toMatchObject({ status: 'paid', amount_credited: 58_882 });
    // The first period's payment is untouched; the customer's lifetime revenue counts the first charge only.
    const customer = await ok(m.test.get(`/customers/${subscription.customer_id}`));
    expect(customer.lifetime_revenue).toEqual([{ currency: 'INR', amount: 58_882 }]);
  });

  it('a dunning retry that pays the open invoice is a payment (subscription_retry)', async () => {
    // 4000000000000119: the renewal fails, the first retry succeeds.
    const { m, subscription } = await subscribed('4000000000000119');
    await h.clock.advance(m, after(subscription.current_period_end));
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('past_due');
    await h.clock.advance(m, 2 * DAY);
    expect((await ok(m.test.get(`/subscriptions/${subscription.id}`))).status).toBe('active');
    const renewal = (await invoicesOf(m.test, subscription.id))[1];
    expect(renewal.status).toBe('paid');
    expect(await ok(m.test.get(`/payments/${renewal.payment_id}`))).toMatchObject({
      billing_reason: 'subscription_retry',
      amount_total: renewal.total,
      status: 'succeeded',
    });
    // The invoice.paid event names the payment too.
    const paidEvents = (await outbox(h.app, m.id, 'invoice.paid')).filter(
      (e) => e.payload.data.object.id === renewal.id,
    );
    expect(paidEvents.map((e) => e.payload.data.object.payment_id)).toEqual([renewal.payment_id]);
  });

  it('a plan change collected from the mandate is a payment (subscription_update): at once on Stripe, with the next charge on Razorpay', async () => {
    const { m, subscription } = await subscribed();
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 10 * DAY));
    const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99_900 });
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    let adjustment = await ok(m.test.get(`/invoices/${r.invoice.id}`));
    if (provider === 'stripe') {
      // Announced, and charged from the mandate 24 hours later (docs/india.md).
      expect(adjustment.status).toBe('open');
      await h.clock.advance(m, 24 * 3600 + 60);
      adjustment = await ok(m.test.get(`/invoices/${r.invoice.id}`));
      expect(adjustment.status).toBe('paid');
      expect(await ok(m.test.get(`/payments/${adjustment.payment_id}`))).toMatchObject({
        billing_reason: 'subscription_update',
        amount_total: adjustment.total,
        subscription_id: subscription.id,
        status: 'succeeded',
      });
      const [command] = (await ok(m.test.get(`/gateway-commands?subscription_id=${subscription.id}`))).data;
      expect(command).toMatchObject({
        action: 'collect_invoice',
        status: 'succeeded',
        invoice_id: adjustment.id,
        idempotency_key: `adjust-${adjustment.id}`,
      });
    } else {
      // An add-on the next charge carries: the adjustment invoice is paid with the renewal. The gateway payment is
      // recorded as one payment per invoice it paid, each refundable on its own against that invoice.
      expect(adjustment).toMatchObject({ status: 'open', payment_id: null });
      await h.clock.advance(m, after(subscription.current_period_end));
      const paid = await ok(m.test.get(`/invoices/${adjustment.id}`));
      expect(paid).toMatchObject({ status: 'paid', amount_paid: adjustment.total });
      const renewal = (await invoicesOf(m.test, subscription.id)).find(
        (i: any) => i.billing_reason === 'subscription_cycle',
      );
      const share = await ok(m.test.get(`/payments/${paid.payment_id}`));
      const main = await ok(m.test.get(`/payments/${renewal.payment_id}`));
      expect(share).toMatchObject({
        billing_reason: 'subscription_update',
        amount_total: adjustment.total,
        tax_amount: adjustment.tax_amount,
        status: 'succeeded',
      });
      expect(main).toMatchObject({ billing_reason: 'subscription_cycle', amount_total: renewal.total });
      expect(share.provider_payment_id).toBe(main.provider_payment_id);
      expect(await gatewayCharge(h.app, provider, share.provider_payment_id)).toEqual({
        charged: renewal.total + adjustment.total,
        refunded: 0,
      });

      const refund = await ok(m.test.post(`/payments/${share.id}/refund`, {}), 201);
      expect(refund).toMatchObject({ amount: adjustment.total, status: 'succeeded' });
      await h.app.app.sandbox!.sandbox.settle();
      expect(await gatewayCharge(h.app, provider, share.provider_payment_id)).toEqual({
        charged: renewal.total + adjustment.total,
        refunded: adjustment.total,
      });
      const notes = (await ok(m.test.get(`/invoices?subscription_id=${subscription.id}&type=credit_note`))).data.filter(
        (n: any) => n.billing_reason === 'refund',
      );
      expect(notes.map((n: any) => [n.related_invoice_id, n.total])).toEqual([[adjustment.id, adjustment.total]]);
      expect(await ok(m.test.get(`/payments/${main.id}`))).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    }
  });

  it('a charge refunded whole at the gateway itself: spread over the payments it made, a credit note against each invoice', async () => {
    const { m, subscription, conn } = await subscribed();
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 10 * DAY));
    const up = await recurringPlan(m.test, { name: 'Monthly Plus' }, { amount: 99_900 });
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: up.plan.id }));
    await h.clock.advance(m, after(subscription.current_period_end));
    const invoices = await invoicesOf(m.test, subscription.id);
    // On Razorpay the renewal's charge also pays the plan change's add-on (two payments, one gateway payment id).
    const paidBy = async (invoice: any) => ok(m.test.get(`/payments/${invoice.payment_id}`));
    const renewal = invoices.find((i: any) => i.billing_reason === 'subscription_cycle');
    const payments = [await paidBy(renewal)];
    if (provider === 'razorpay') payments.unshift(await paidBy(await ok(m.test.get(`/invoices/${r.invoice.id}`))));
    const gatewayId = payments[0].provider_payment_id;
    expect(new Set(payments.map((p) => p.provider_payment_id))).toEqual(new Set([gatewayId]));
    const whole = (await gatewayCharge(h.app, provider, gatewayId)).charged;
    expect(whole).toBe(payments.reduce((t, p) => t + p.amount_total, 0));

    // The merchant refunds the whole charge in the gateway's dashboard.
    const gateway = createGateway(provider, conn.credentials as any, { sandboxUrl: h.app.app.sandboxUrl! });
    await gateway.refund({ providerPaymentId: gatewayId, amount: whole, currency: 'INR', idempotencyKey: uuidv7() });
    await h.app.app.sandbox!.sandbox.settle();
    const notes = (await ok(m.test.get(`/invoices?subscription_id=${subscription.id}&type=credit_note`))).data.filter(
      (n: any) => n.billing_reason === 'refund',
    );
    for (const p of payments) {
      expect(await ok(m.test.get(`/payments/${p.id}`))).toMatchObject({
        status: 'refunded',
        amount_refunded: p.amount_total,
      });
      const invoice =
        invoices.find((i: any) => i.payment_id === p.id) ?? (await ok(m.test.get(`/invoices/${r.invoice.id}`)));
      expect(notes.filter((n: any) => n.related_invoice_id === invoice.id).map((n: any) => n.total)).toEqual([
        p.amount_total,
      ]);
    }
    expect(await gatewayCharge(h.app, provider, gatewayId)).toEqual({ charged: whole, refunded: whole });
  });
});

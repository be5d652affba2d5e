import { TestMerchant, useHarness } from '../harness';
import { eventually } from '../harness/wait';
import { connect, createPayment, gatewayCharge, invoiceOf, pay, PROVIDERS } from './helpers';

/**
 * One-time payments collect the GST their invoice shows (docs/payments.md): `amount` stays tax-exclusive, `tax_amount`
 * is fixed at creation, the gateway charges `amount_total`, the invoice's total is that, and refunds are money returned
 * (docs/payments.md): they count against `amount_total`, and the gateway refunds exactly each refund's amount. (Their
 * credit notes: test/invoices/credit-notes.test.ts.)
 */

// A refund the gateway could not take is tried again soon (see "a refund the gateway could not take").
const h = useHarness({ gatewayCommandFirstRetryMs: 200 });

/** Waits for the sandbox's background webhooks (refund events) to be delivered and answered. */
const settle = () => h.app.app.sandbox!.sandbox.settle();

async function refundsAtGateway(paymentId: string) {
  return h.app.orm.em
    .getConnection()
    .execute<{ amount: string; gateway_amount: string; status: string }[]>(
      'select amount, gateway_amount, status from refunds where payment_id = ? order by id',
      [paymentId],
    );
}

describe.each(PROVIDERS)('GST collected through %s', (provider) => {
  let m: TestMerchant; // GSTIN in Karnataka (29), 18%
  let plain: TestMerchant; // no GSTIN

  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW', sac_code: '998314' });
    plain = await h.merchant({ state_code: '29' });
    await connect(m.test, provider);
    await connect(plain.test, provider);
  });

  /** Creates and pays a payment; checks what the gateway took and the invoice against amount_total. */
  async function paidAndInvoiced(client: TestMerchant, body: Record<string, unknown>) {
    const created = await createPayment(client.test, body);
    const { payment } = await pay(client.test, created);
    expect(payment.status).toBe('succeeded');
    const charge = await gatewayCharge(h.app, provider, payment.provider_payment_id);
    expect(charge.charged).toBe(payment.amount_total);
    const invoice = await invoiceOf(client.test, payment);
    expect(invoice).toMatchObject({
      subtotal: payment.amount,
      tax_amount: payment.tax_amount,
      total: payment.amount_total,
      amount_paid: payment.amount_total,
      amount_due: 0,
      status: 'paid',
    });
    return { created, payment, invoice };
  }

  it('intra-state: CGST + SGST on top; the checkout charges amount_total and the invoice totals it', async () => {
    // 10050 x 9% = 904.5 -> 905 each.
    const { created, payment, invoice } = await paidAndInvoiced(m, { amount: 10050, customer_state_code: '29' });
    expect(created).toMatchObject({ amount: 10050, tax_amount: 1810, amount_total: 11860, status: 'pending' });
    expect(payment).toMatchObject({ amount: 10050, tax_amount: 1810, amount_total: 11860, amount_refunded: 0 });
    expect(invoice).toMatchObject({
      cgst_amount: 905,
      sgst_amount: 905,
      igst_amount: 0,
      place_of_supply: '29',
      tax_rate_bps: 1800,
    });
    // The hosted checkout shows what it charges.
    const html = await (await fetch(created.checkout_url)).text();
    expect(html).toContain('₹118.60');
  });

  it('inter-state (customer_state_code): IGST on top', async () => {
    // 10050 x 18% = 1809.
    const { created, invoice } = await paidAndInvoiced(m, { amount: 10050, customer_state_code: '27' });
    expect(created).toMatchObject({ amount: 10050, tax_amount: 1809, amount_total: 11859 });
    expect(invoice).toMatchObject({ cgst_amount: 0, sgst_amount: 0, igst_amount: 1809, place_of_supply: '27' });
  });

  it('customer state unknown: CGST + SGST; a GSTIN alone places the customer in its state', async () => {
    const unknown = await paidAndInvoiced(m, { amount: 10050 });
    expect(unknown.payment).toMatchObject({ tax_amount: 1810, amount_total: 11860 });
    expect(unknown.invoice).toMatchObject({ cgst_amount: 905, place_of_supply: '29' });
    const registered = await paidAndInvoiced(m, { amount: 10050, customer_gstin: '27AAPFU0939F1ZV' });
    expect(registered.payment).toMatchObject({ tax_amount: 1809, amount_total: 11859 });
    expect(registered.invoice).toMatchObject({
      igst_amount: 1809,
      place_of_supply: '27',
      customer_gstin: '27AAPFU0939F1ZV',
    });
  });

  it("a returning customer's recorded state decides when the request names none", async () => {
    const email = `returning-${provider}-${Date.now()}@example.com`;
    await paidAndInvoiced(m, { amount: 1000, customer_email: email, customer_state_code: '27' });
    const again = await paidAndInvoiced(m, { amount: 1000, customer_email: email });
    expect(again.payment).toMatchObject({ tax_amount: 180, amount_total: 1180 });
    expect(again.invoice).toMatchObject({ igst_amount: 180, place_of_supply: '27' });
  });

  it("another merchant's or the other mode's customer with that e-mail decides nothing", async () => {
    const email = `shared-${provider}-${Date.now()}@example.com`;
    await createPayment(m.test, { amount: 1000, customer_email: email, customer_state_code: '27' });
    const other = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
    await connect(other.test, provider);
    expect(await createPayment(other.test, { amount: 1000, customer_email: email })).toMatchObject({
      tax_amount: 180,
      amount_total: 1180,
    });
    await connect(m.live, provider);
    const live = await createPayment(m.live, { amount: 1000, customer_email: email });
    expect(live).toMatchObject({ livemode: true, tax_amount: 180, amount_total: 1180 });
    // Both intra-state (CGST + SGST, 90 each), as for a customer of unknown state; the test-mode customer is inter-state.
    const [otherInv, liveInv] = await Promise.all([
      paidAndInvoiced(other, { amount: 1000, customer_email: email }),
      (async () => {
        const { payment } = await pay(m.live, live);
        return m.live.get(`/invoices?customer_id=${payment.customer_id}`);
      })(),
    ]);
    expect(otherInv.invoice).toMatchObject({ cgst_amount: 90, sgst_amount: 90, igst_amount: 0 });
    expect(liveInv.body.data[0]).toMatchObject({ cgst_amount: 90, sgst_amount: 90, igst_amount: 0, total: 1180 });
  });

  it('non-INR (zero-rated export) and a merchant without a GSTIN: untaxed, the gateway charges amount', async () => {
    const usd = await paidAndInvoiced(m, { amount: 10050, currency: 'USD', customer_state_code: '27' });
    expect(usd.payment).toMatchObject({ currency: 'USD', amount: 10050, tax_amount: 0, amount_total: 10050 });
    expect(usd.invoice).toMatchObject({ tax_amount: 0, total: 10050, tax_rate_bps: 0 });
    const untaxed = await paidAndInvoiced(plain, { amount: 10050, customer_state_code: '29' });
    expect(untaxed.payment).toMatchObject({ tax_amount: 0, amount_total: 10050 });
    expect(untaxed.invoice).toMatchObject({ tax_amount: 0, total: 10050, supplier_gstin: null });
  });

  it('the tax is fixed at creation: a rate changed before the checkout completes does not change the invoice', async () => {
    const other = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
    await connect(other.test, provider);
    const created = await createPayment(other.test, { amount: 10000, customer_state_code: '27' });
    expect(created).toMatchObject({ tax_amount: 1800, amount_total: 11800 });
    const changed = await other.test.post('/merchant/tax-settings', { tax_rate_bps: 1200 });
    expect(changed.status).toBe(200);
    const { payment } = await pay(other.test, created);
    expect((await gatewayCharge(h.app, provider, payment.provider_payment_id)).charged).toBe(11800);
    expect(await invoiceOf(other.test, payment)).toMatchObject({
      igst_amount: 1800,
      total: 11800,
      amount_paid: 11800,
      tax_rate_bps: 1800,
    });
    // A payment created now is taxed at the new rate.
    expect(await createPayment(other.test, { amount: 10000, customer_state_code: '27' })).toMatchObject({
      tax_amount: 1200,
      amount_total: 11200,
    });
  });

  it('GraphQL shows taxAmount and amountTotal; a refund is money returned, refunded as it is at the gateway', async () => {
    const { payment } = await paidAndInvoiced(m, { amount: 10000, customer_state_code: '29' });
    const r = await m.test.gql(
      `mutation($id: ID!) { refundPayment(id: $id, input: { amount: 5900 }) { amount gatewayAmount } }`,
      { id: payment.id },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.refundPayment).toEqual({ amount: 5900, gatewayAmount: 5900 });
    const g = await m.test.gql(
      `query($id: ID!) { payment(id: $id) { amount taxAmount amountTotal amountRefunded refunds { amount gatewayAmount } } }`,
      { id: payment.id },
    );
    expect(g.errors).toBeUndefined();
    expect(g.data.payment).toEqual({
      amount: 10000,
      taxAmount: 1800,
      amountTotal: 11800,
      amountRefunded: 5900,
      refunds: [{ amount: 5900, gatewayAmount: 5900 }],
    });
    // What is left to refund is what is left of amount_total: 5900, not a subunit more.
    const over = await m.test.gql(`mutation($id: ID!) { refundPayment(id: $id, input: { amount: 5901 }) { id } }`, {
      id: payment.id,
    });
    expect(over.errors?.[0].extensions).toMatchObject({ code: 'amount_exceeds_refundable', http: { status: 400 } });
  });

  it('refunds in three parts return exactly amount_total at the gateway', async () => {
    // 10001 x 9% = 900.09 -> 900 each: amount_total 11801.
    const { payment } = await paidAndInvoiced(m, { amount: 10001, customer_state_code: '29' });
    expect(payment).toMatchObject({ tax_amount: 1800, amount_total: 11801 });
    const answers = [];
    for (const amount of [3933, 3934]) answers.push(await m.test.post(`/payments/${payment.id}/refund`, { amount }));
    answers.push(await m.test.post(`/payments/${payment.id}/refund`, {}));
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
    expect(answers.map((a) => [a.body.amount, a.body.gateway_amount])).toEqual([
      [3933, 3933],
      [3934, 3934],
      [3934, 3934],
    ]);
    await settle();
    expect((await m.test.get(`/payments/${payment.id}`)).body).toMatchObject({
      status: 'refunded',
      amount_refunded: 11801,
      amount_total: 11801,
    });
    expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
      charged: 11801,
      refunded: 11801,
    });
  });

  it('a full refund returns exactly amount_total', async () => {
    const { payment } = await paidAndInvoiced(m, { amount: 10050, customer_state_code: '27' });
    const r = await m.test.post(`/payments/${payment.id}/refund`, {});
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ amount: 11859, gateway_amount: 11859 });
    await settle();
    expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
      charged: 11859,
      refunded: 11859,
    });
    expect((await m.test.get(`/payments/${payment.id}`)).body).toMatchObject({
      status: 'refunded',
      amount_refunded: 11859,
    });
  });

  it('an untaxed refund goes to the gateway as it is', async () => {
    const { payment } = await paidAndInvoiced(plain, { amount: 10001 });
    const r = await plain.test.post(`/payments/${payment.id}/refund`, { amount: 3333 });
    expect(r.body).toMatchObject({ amount: 3333, gateway_amount: 3333 });
  });

  it('concurrent partial refunds: the ones that fit add up at the gateway to exactly amount_total', async () => {
    // 10301 x 18% = 1854.18 -> 1854. Refunds are multiples of 500, so what is left of 12155 is at least 155 (Razorpay
    // refunds no less than 100 subunits).
    const { payment } = await paidAndInvoiced(m, { amount: 10301, customer_state_code: '27' });
    const total = payment.amount_total;
    expect(total).toBe(12155);
    const sizes = [1500, 2500, 1000, 3000, 500, 2000, 3500, 1500, 4000, 2500];
    const answers = await Promise.all(sizes.map((amount) => m.test.post(`/payments/${payment.id}/refund`, { amount })));
    const ok = answers.filter((a) => a.status === 201);
    expect(ok.length).toBeGreaterThan(0);
    expect(ok.length).toBeLessThan(sizes.length);
    for (const a of answers.filter((x) => x.status !== 201))
      expect(a.body.error.code).toBe('amount_exceeds_refundable');
    const refunded = ok.reduce((s, a) => s + a.body.amount, 0);
    expect(refunded).toBeLessThanOrEqual(total);
    // What is left, refunded in one go, completes the gateway's refund exactly.
    const rest = await m.test.post(`/payments/${payment.id}/refund`, {});
    expect(rest.status).toBe(201);
    expect(rest.body.amount).toBe(total - refunded);
    await settle();
    const rows = await refundsAtGateway(payment.id);
    expect(rows.every((r) => r.status === 'succeeded' && Number(r.gateway_amount) === Number(r.amount))).toBe(true);
    expect(rows.reduce((s, r) => s + Number(r.amount), 0)).toBe(total);
    expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
      charged: total,
      refunded: total,
    });
    expect((await m.test.get(`/payments/${payment.id}`)).body).toMatchObject({
      status: 'refunded',
      amount_refunded: total,
    });
  });

  describe('a refund the gateway could not take', () => {
    afterEach(() => h.sandbox.start());

    it('stays reserved until it is done: with the later refunds it adds up to exactly amount_total', async () => {
      const { payment } = await paidAndInvoiced(m, { amount: 10001, customer_state_code: '29' });
      expect((await m.test.post(`/payments/${payment.id}/refund`, { amount: 3933 })).status).toBe(201);
      await h.sandbox.stop();
      const down = await m.test.post(`/payments/${payment.id}/refund`, { amount: 3934 });
      expect(down.status).toBe(502);
      expect((await m.test.get(`/payments/${payment.id}`)).body).toMatchObject({ amount_refunded: 3933 + 3934 });
      await h.sandbox.start();
      const rest = await m.test.post(`/payments/${payment.id}/refund`, {});
      expect(rest.body).toMatchObject({ amount: 11801 - 3933 - 3934, gateway_amount: 11801 - 3933 - 3934 });
      // The worker's next attempt does the pending one.
      await eventually(
        async () => (await refundsAtGateway(payment.id)).every((r) => r.status === 'succeeded'),
        15_000,
        'the pending refund done',
      );
      await settle();
      expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
        charged: 11801,
        refunded: 11801,
      });
      const rows = await refundsAtGateway(payment.id);
      expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    });
  });
});

import { TestMerchant, useHarness } from '../harness';
import { connect, countRows, createPayment, gatewayCharge, invoiceOf, pay, paymentBody, PROVIDERS } from './helpers';

/**
 * One-off payments with `tax_behavior: inclusive` (docs/payments.md, docs/invoices-and-gst.md "Tax-inclusive prices"):
 * `amount` contains its GST, the gateway checkout charges exactly `amount` (`amount_total` = amount), and the invoice's
 * total is the amount with its heads contained in it, through both gateways' sandboxes, on both transports. Another
 * value is refused with 400 and changes nothing. The default stays tax-exclusive.
 */

const h = useHarness();
jest.setTimeout(60_000);

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

describe.each(PROVIDERS)('%s', (provider) => {
  let m: TestMerchant; // GSTIN in Karnataka (29), 18%
  beforeAll(async () => {
    m = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
    await connect(m.test, provider);
  });

  /** Creates and pays an inclusive payment of `amount`; the gateway charged exactly it and the invoice totals it. */
  async function paidInclusive(body: Record<string, unknown>) {
    const created = await createPayment(m.test, { tax_behavior: 'inclusive', ...body });
    const { payment } = await pay(m.test, created);
    expect(payment.status).toBe('succeeded');
    expect(payment).toMatchObject({ tax_behavior: 'inclusive', amount: body.amount, amount_total: body.amount });
    expect((await gatewayCharge(h.app, provider, payment.provider_payment_id)).charged).toBe(body.amount);
    const invoice = await invoiceOf(m.test, payment);
    expect(invoice).toMatchObject({
      total: body.amount,
      subtotal: (body.amount as number) - payment.tax_amount,
      tax_amount: payment.tax_amount,
      amount_paid: body.amount,
      amount_due: 0,
      status: 'paid',
    });
    expect(invoice.cgst_amount + invoice.sgst_amount + invoice.igst_amount).toBe(invoice.tax_amount);
    expect(sum(invoice.line_items.map((l: any) => l.amount))).toBe(invoice.subtotal);
    return { created, payment, invoice };
  }

  it('intra-state ₹499.00 inclusive: charged 49900, CGST 38.06 + SGST 38.06 contained, taxable value 422.88', async () => {
    // 49900 x 1800 / 23600 = 3805.93 -> 3806 each half.
    const { created, invoice } = await paidInclusive({ amount: 49900, customer_state_code: '29' });
    expect(created).toMatchObject({ amount: 49900, tax_amount: 7612, amount_total: 49900, tax_behavior: 'inclusive' });
    expect(invoice).toMatchObject({ subtotal: 42288, cgst_amount: 3806, sgst_amount: 3806, igst_amount: 0 });
    const html = await (await fetch(created.checkout_url)).text();
    expect(html).toContain('₹499.00');
  });

  it('inter-state ₹100.01 inclusive: IGST = 10001 - round(10001 x 10000 / 11800) = 1526', async () => {
    // 10001 / 1.18 = 8475.42 -> 8475; IGST 1526.
    const { invoice } = await paidInclusive({ amount: 10001, customer_state_code: '27' });
    expect(invoice).toMatchObject({ subtotal: 8475, cgst_amount: 0, sgst_amount: 0, igst_amount: 1526 });
  });

  it('a full refund of an inclusive payment: its credit note returns the invoice exactly', async () => {
    const { payment, invoice } = await paidInclusive({ amount: 20001, customer_state_code: '29' });
    const r = await m.test.post(`/payments/${payment.id}/refund`, {});
    expect(r.status).toBe(201);
    expect(r.body.amount).toBe(20001);
    const list = await m.test.get(`/invoices?customer_id=${payment.customer_id}&type=credit_note&limit=100`);
    const note = list.body.data.find((i: any) => i.related_invoice_id === invoice.id);
    expect(note).toMatchObject({
      total: 20001,
      subtotal: invoice.subtotal,
      cgst_amount: invoice.cgst_amount,
      sgst_amount: invoice.sgst_amount,
    });
  });

  it('over GraphQL: taxBehavior INCLUSIVE on the input and on the payment; another value is 400, nothing made', async () => {
    const body = paymentBody({ amount: 49900 });
    const input = {
      amount: body.amount,
      customerEmail: body.customer_email,
      successUrl: body.success_url,
      cancelUrl: body.cancel_url,
      customerStateCode: '27',
      taxBehavior: 'INCLUSIVE',
    };
    const r = await m.test.gql(
      'mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id amount taxAmount amountTotal taxBehavior } }',
      { input },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.createPayment).toMatchObject({
      amount: 49900,
      taxAmount: 7612,
      amountTotal: 49900,
      taxBehavior: 'INCLUSIVE',
    });
    const read = await m.test.gql('query($id: ID!) { payment(id: $id) { taxBehavior } }', {
      id: r.data.createPayment.id,
    });
    expect(read.data.payment.taxBehavior).toBe('INCLUSIVE');
    const before = await countRows(h.app, 'payments', 'merchant_id = ?', [m.id]);
    const bad = await m.test.gql('mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id } }', {
      input: { ...input, taxBehavior: 'GROSS' },
    });
    expect(bad.data ?? null).toBeNull();
    expect(bad.errors?.[0]?.extensions).toMatchObject({
      code: 'parameter_invalid',
      param: 'tax_behavior',
      http: { status: 400 },
    });
    expect(await countRows(h.app, 'payments', 'merchant_id = ?', [m.id])).toBe(before);
  });

  it('default and explicit exclusive: GST on top, tax_behavior exclusive', async () => {
    const plain = await createPayment(m.test, { amount: 10050, customer_state_code: '29' });
    expect(plain).toMatchObject({ tax_behavior: 'exclusive', tax_amount: 1810, amount_total: 11860 });
    const explicit = await createPayment(m.test, {
      amount: 10050,
      customer_state_code: '29',
      tax_behavior: 'exclusive',
    });
    expect(explicit).toMatchObject({ tax_behavior: 'exclusive', tax_amount: 1810, amount_total: 11860 });
  });

  it('another tax_behavior is 400 parameter_invalid and changes nothing', async () => {
    const email = `bad-tax-${provider}-${Date.now()}@example.com`;
    const payments = () => countRows(h.app, 'payments', 'merchant_id = ?', [m.id]);
    const customers = () => countRows(h.app, 'customers', 'merchant_id = ? and email = ?', [m.id, email]);
    const sandbox = () => countRows(h.app, 'sandbox_objects', 'true', []);
    const before = { payments: await payments(), customers: await customers(), sandbox: await sandbox() };
    for (const value of ['gross', 'INCLUSIVE_', 1, true, '']) {
      const r = await m.test.post('/payments', paymentBody({ customer_email: email, tax_behavior: value }));
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'tax_behavior' });
    }
    expect({ payments: await payments(), customers: await customers(), sandbox: await sandbox() }).toEqual(before);
  });
});

it('a merchant without a GSTIN: inclusive or not, no GST, amount_total = amount', async () => {
  const m = await h.merchant({ state_code: '29' });
  await connect(m.test, 'stripe');
  const p = await createPayment(m.test, { amount: 49900, tax_behavior: 'inclusive' });
  expect(p).toMatchObject({ amount: 49900, tax_amount: 0, amount_total: 49900, tax_behavior: 'inclusive' });
});

/**
 * Credit notes (docs/invoices-and-gst.md "Credit notes"; docs/payments.md): a refund of a
 * payment its invoice records issues a credit note (billing_reason refund, related_invoice_id, credit_note.created)
 * whose taxable value and heads are the refund's share of the invoice's, the last one taking what is left; refunds are
 * money returned, counted against amount_total; the invoice's amount_credited sums its credit notes. A plan change's
 * credit note names the invoice of the period it credits. A credit note's PDF names its original.
 */
import fc from 'fast-check';
import { v7 as uuidv7 } from 'uuid';
import { CreditParts, partsTotal, refundCreditParts } from '../../src/modules/invoices/credit-note';
import { istDate } from '../../src/modules/invoices/invoice.pdf';
import { createGateway } from '../../src/gateways';
import { gstOn } from '../../src/money';
import { TestMerchant, useHarness } from '../harness';
import {
  Connected,
  connect,
  createPayment,
  gatewayCharge,
  outbox,
  pay,
  postEvent,
  gatewayRefundId,
  PROVIDERS,
  ProviderName,
  refundSucceededEvent,
} from '../payments/helpers';
import { authorise, createSubscription, invoicesOf, ok, recurringPlan } from '../subscriptions/helpers';
import { pdfText } from './pdf-text';

const h = useHarness();
jest.setTimeout(120_000);

/** A valid GSTIN in Karnataka (29). */
const GSTIN = '29AAGCB7383J1Z4';
const DAY = 86_400_000;

/** Waits for the sandbox's background webhooks (refund events) to be delivered and answered. */
const settle = () => h.app.app.sandbox!.sandbox.settle();

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const row = (label: string, value: string) => new RegExp(`${escape(label)}\\s+${escape(value)}`);

const sum = (xs: any[], f: (x: any) => number) => xs.reduce((s, x) => s + f(x), 0);
const headsOf = (i: any) => ({ subtotal: i.subtotal, cgst: i.cgst_amount, sgst: i.sgst_amount, igst: i.igst_amount });

describe('refundCreditParts (the share of a refund)', () => {
  const intra: CreditParts = { subtotal: 49900, cgst: 4491, sgst: 4491, igst: 0 };
  const inter: CreditParts = { subtotal: 49900, cgst: 0, sgst: 0, igst: 8982 };
  const none: CreditParts = { subtotal: 0, cgst: 0, sgst: 0, igst: 0 };

  it('rounds each head half away from zero; the taxable value is the rest of the refund', () => {
    // 4491 x 10000 / 58882 = 762.71 -> 763; 8982 x 10000 / 58882 = 1525.42 -> 1525.
    expect(refundCreditParts(intra, none, 10000, false)).toEqual({ subtotal: 8474, cgst: 763, sgst: 763, igst: 0 });
    expect(refundCreditParts(inter, none, 10000, false)).toEqual({ subtotal: 8475, cgst: 0, sgst: 0, igst: 1525 });
    // 4491 x 2 / 58882 = 0.15 -> 0: a refund of 2 subunits is all taxable value.
    expect(refundCreditParts(intra, none, 2, false)).toEqual({ subtotal: 2, cgst: 0, sgst: 0, igst: 0 });
    // Exactly half a subunit rounds up: 10 x 5 / 20 = 2.5 -> 3.
    expect(refundCreditParts({ subtotal: 10, cgst: 0, sgst: 0, igst: 10 }, none, 5, false)).toEqual({
      subtotal: 2,
      cgst: 0,
      sgst: 0,
      igst: 3,
    });
  });

  it('the last one (or one at least what is left) takes exactly what is left', () => {
    const credited = { subtotal: 8474, cgst: 763, sgst: 763, igst: 0 };
    expect(refundCreditParts(intra, credited, 48882, true)).toEqual({
      subtotal: 41426,
      cgst: 3728,
      sgst: 3728,
      igst: 0,
    });
    expect(refundCreditParts(intra, credited, 99999, false)).toEqual({
      subtotal: 41426,
      cgst: 3728,
      sgst: 3728,
      igst: 0,
    });
    expect(refundCreditParts(intra, none, 58882, false)).toEqual(intra);
    expect(refundCreditParts(intra, intra, 100, true)).toEqual(none);
  });

  it('property: any split of the total gives credit notes totalling each refund, never past the invoice, summing to it exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50_000_000 }),
        fc.constantFrom(0, 500, 1200, 1800, 2800),
        fc.constantFrom('intra' as const, 'inter' as const),
        fc.array(fc.integer({ min: 1, max: 1_000_000 }), { minLength: 1, maxLength: 15 }),
        (subtotal, rateBps, treatment, weights) => {
          const g = gstOn(subtotal, treatment, rateBps);
          const invoice: CreditParts = { subtotal, cgst: g.cgst, sgst: g.sgst, igst: g.igst };
          const total = g.total;
          // Split the total into refunds proportional to the weights (each >= 1, the last takes the rest).
          const refunds: number[] = [];
          let left = total;
          const w = weights.reduce((s, x) => s + x, 0);
          for (const x of weights.slice(0, -1)) {
            const part = Math.min(left - 1, Math.max(1, Math.floor((total * x) / w)));
            if (part < 1) break;
            refunds.push(part);
            left -= part;
          }
          refunds.push(left);
          let credited: CreditParts = { subtotal: 0, cgst: 0, sgst: 0, igst: 0 };
          refunds.forEach((refund, i) => {
            const last = i === refunds.length - 1;
            const note = refundCreditParts(invoice, credited, refund, last);
            expect(partsTotal(note)).toBe(refund);
            for (const k of ['subtotal', 'cgst', 'sgst', 'igst'] as const) {
              expect(note[k]).toBeGreaterThanOrEqual(0);
              credited = { ...credited, [k]: credited[k] + note[k] };
              expect(credited[k]).toBeLessThanOrEqual(invoice[k]);
            }
            if (i === 0 && !last) {
              // Nothing credited before: each head is its share rounded half away from zero.
              for (const k of ['cgst', 'sgst', 'igst'] as const) {
                expect(note[k]).toBe(
                  Number((2n * BigInt(invoice[k]) * BigInt(refund) + BigInt(total)) / (2n * BigInt(total))),
                );
              }
            }
          });
          expect(credited).toEqual(invoice);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe.each(PROVIDERS)('credit notes of refunds through %s', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    conn = await connect(m.test, provider);
  });

  /** A paid GST payment (49,900 + 8,982 GST by default) and the invoice that records it. */
  async function paidWithInvoice(body: Record<string, unknown>) {
    const { payment } = await pay(m.test, await createPayment(m.test, body));
    expect(payment.status).toBe('succeeded');
    const list = await ok(m.test.get(`/invoices?customer_id=${payment.customer_id}&type=invoice&limit=100`));
    const invoice = list.data.find((i: any) => i.payment_id === payment.id);
    expect(invoice).toMatchObject({
      status: 'paid',
      total: payment.amount_total,
      amount_paid: payment.amount_total,
      amount_credited: 0,
    });
    return { payment, invoice };
  }

  /** The credit notes against an invoice, oldest first. */
  async function creditNotes(invoice: any): Promise<any[]> {
    const list = await ok(m.test.get(`/invoices?customer_id=${invoice.customer_id}&type=credit_note&limit=100`));
    return list.data.filter((i: any) => i.related_invoice_id === invoice.id).reverse();
  }

  const get = async (what: string, id: string) => ok(m.test.get(`/${what}/${id}`));

  describe.each([
    ['intra-state', '29', { cgst_amount: 4491, sgst_amount: 4491, igst_amount: 0 }],
    ['inter-state', '27', { cgst_amount: 0, sgst_amount: 0, igst_amount: 8982 }],
  ])('%s customer', (_label, stateCode, heads) => {
    it('a refund without amount returns all of amount_total, with one credit note for the whole invoice', async () => {
      const { payment, invoice } = await paidWithInvoice({ amount: 49900, customer_state_code: stateCode });
      expect(payment).toMatchObject({ amount: 49900, tax_amount: 8982, amount_total: 58882, amount_refunded: 0 });
      expect(invoice).toMatchObject({ subtotal: 49900, tax_amount: 8982, ...heads });

      const r = await m.test.post(`/payments/${payment.id}/refund`, {});
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({
        object: 'refund',
        amount: 58882,
        gateway_amount: 58882,
        status: 'succeeded',
        currency: 'INR',
      });
      await settle();
      expect(await get('payments', payment.id)).toMatchObject({
        status: 'refunded',
        amount_refunded: 58882,
        amount_total: 58882,
      });
      expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
        charged: 58882,
        refunded: 58882,
      });

      const notes = await creditNotes(invoice);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({
        object: 'invoice',
        type: 'credit_note',
        billing_reason: 'refund',
        status: 'issued',
        related_invoice_id: invoice.id,
        refund_id: r.body.id,
        payment_id: null,
        customer_id: payment.customer_id,
        currency: 'INR',
        subtotal: 49900,
        ...heads,
        tax_amount: 8982,
        total: 58882,
        amount_due: 0,
        amount_credited: 0,
        tax_rate_bps: 1800,
        place_of_supply: stateCode,
        supplier_gstin: GSTIN,
      });
      expect(notes[0].number).toMatch(/^TCN-/);
      expect(notes[0].line_items).toHaveLength(1);
      expect(notes[0].line_items[0]).toMatchObject({ amount: 49900, ...heads });
      // The invoice is still paid (the money was collected) and shows what was credited against it.
      expect(await get('invoices', invoice.id)).toMatchObject({
        status: 'paid',
        amount_paid: 58882,
        amount_credited: 58882,
        total: 58882,
      });

      const created = (await outbox(h.app, m.id, 'credit_note.created')).filter(
        (e) => e.payload.data.object.id === notes[0].id,
      );
      expect(created).toHaveLength(1);
      expect(created[0].payload.data.object).toMatchObject({
        number: notes[0].number,
        related_invoice_id: invoice.id,
        billing_reason: 'refund',
        total: 58882,
      });
    });

    it('partial refunds (10,000, 20,000, the rest): credit notes total each refund and sum to the invoice at the end', async () => {
      const { payment, invoice } = await paidWithInvoice({ amount: 49900, customer_state_code: stateCode });
      const refunds: any[] = [];
      for (const body of [{ amount: 10000 }, { amount: 20000 }, {}]) {
        const r = await m.test.post(`/payments/${payment.id}/refund`, body);
        expect(r.status).toBe(201);
        refunds.push(r.body);
        await settle();
        const refunded = sum(refunds, (x) => x.amount);
        const notes = await creditNotes(invoice);
        expect(notes).toHaveLength(refunds.length);
        expect(notes.map((n) => n.refund_id)).toEqual(refunds.map((x) => x.id));
        expect(notes.map((n) => n.total)).toEqual(refunds.map((x) => x.amount));
        expect(sum(notes, (n) => n.total)).toBe(refunded);
        for (const n of notes) expect(n.subtotal + n.cgst_amount + n.sgst_amount + n.igst_amount).toBe(n.total);
        expect(await get('payments', payment.id)).toMatchObject({
          amount_refunded: refunded,
          status: refunded === 58882 ? 'refunded' : 'partially_refunded',
        });
        expect((await get('invoices', invoice.id)).amount_credited).toBe(refunded);
      }
      expect(refunds.map((x) => x.amount)).toEqual([10000, 20000, 28882]);
      const notes = await creditNotes(invoice);
      // The first is the refund's share of each head, rounded: 4491 x 10000 / 58882 = 762.71; 8982 x 10000 / 58882 = 1525.42.
      expect(headsOf(notes[0])).toEqual(
        stateCode === '29'
          ? { subtotal: 8474, cgst: 763, sgst: 763, igst: 0 }
          : { subtotal: 8475, cgst: 0, sgst: 0, igst: 1525 },
      );
      // Every part of the invoice, exactly.
      expect({
        subtotal: sum(notes, (n) => n.subtotal),
        cgst: sum(notes, (n) => n.cgst_amount),
        sgst: sum(notes, (n) => n.sgst_amount),
        igst: sum(notes, (n) => n.igst_amount),
      }).toEqual(headsOf(invoice));
      expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
        charged: 58882,
        refunded: 58882,
      });
    });
  });

  it('20 refunds racing on one payment: never past amount_total, one credit note per succeeded refund, summing to what was refunded', async () => {
    // 10,000 + 1,800 GST (intra-state) = 11,800: 16 refunds of 700 fit (11,200), the others exceed.
    const { payment, invoice } = await paidWithInvoice({ amount: 10000, customer_state_code: '29' });
    expect(payment.amount_total).toBe(11800);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => m.test.post(`/payments/${payment.id}/refund`, { amount: 700 })),
    );
    const okAnswers = answers.filter((a) => a.status === 201);
    expect(okAnswers).toHaveLength(16);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(400);
      expect(a.body.error).toMatchObject({ code: 'amount_exceeds_refundable', param: 'amount' });
    }
    await settle();
    const rows = await h.app.orm.em
      .getConnection()
      .execute<{ amount: string; status: string }[]>('select amount, status from refunds where payment_id = ?', [
        payment.id,
      ]);
    const refunded = sum(
      rows.filter((x) => x.status === 'succeeded'),
      (x) => Number(x.amount),
    );
    expect(refunded).toBe(11200);
    expect(refunded).toBeLessThanOrEqual(payment.amount_total);
    let notes = await creditNotes(invoice);
    expect(notes).toHaveLength(16);
    expect(new Set(notes.map((n) => n.refund_id))).toEqual(new Set(okAnswers.map((a) => a.body.id)));
    expect(new Set(notes.map((n) => n.number)).size).toBe(16);
    for (const n of notes)
      expect(n).toMatchObject({ related_invoice_id: invoice.id, billing_reason: 'refund', total: 700 });
    expect(sum(notes, (n) => n.total)).toBe(refunded);
    expect(await get('payments', payment.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 11200 });
    expect((await get('invoices', invoice.id)).amount_credited).toBe(11200);

    // The rest completes it: the credit notes then sum to the invoice, head by head.
    const rest = await m.test.post(`/payments/${payment.id}/refund`, {});
    expect(rest.body).toMatchObject({ amount: 600 });
    await settle();
    notes = await creditNotes(invoice);
    expect(notes).toHaveLength(17);
    expect({
      subtotal: sum(notes, (n) => n.subtotal),
      cgst: sum(notes, (n) => n.cgst_amount),
      sgst: sum(notes, (n) => n.sgst_amount),
      igst: sum(notes, (n) => n.igst_amount),
    }).toEqual(headsOf(invoice));
    expect((await get('invoices', invoice.id)).amount_credited).toBe(11800);
    expect(await get('payments', payment.id)).toMatchObject({ status: 'refunded', amount_refunded: 11800 });
  });

  it('GraphQL: refundPayment without amount returns amountTotal; the invoice shows amountCredited and its credit note', async () => {
    const { payment, invoice } = await paidWithInvoice({ amount: 10050, customer_state_code: '27' });
    const g = await m.test.gql('mutation($id: ID!) { refundPayment(id: $id) { id amount gatewayAmount status } }', {
      id: payment.id,
    });
    expect(g.errors).toBeUndefined();
    expect(g.data.refundPayment).toMatchObject({ amount: 11859, gatewayAmount: 11859, status: 'SUCCEEDED' });
    await settle();
    const q = await m.test.gql(
      `query($id: ID!, $c: ID!, $p: ID!) {
        payment(id: $p) { amount taxAmount amountTotal amountRefunded status }
        invoice(id: $id) { amountCredited total status }
        invoices(customerId: $c, type: CREDIT_NOTE) { edges { node { relatedInvoiceId refundId billingReason subtotal igstAmount total } } }
      }`,
      { id: invoice.id, c: payment.customer_id, p: payment.id },
    );
    expect(q.errors).toBeUndefined();
    expect(q.data.payment).toEqual({
      amount: 10050,
      taxAmount: 1809,
      amountTotal: 11859,
      amountRefunded: 11859,
      status: 'REFUNDED',
    });
    expect(q.data.invoice).toEqual({ amountCredited: 11859, total: 11859, status: 'PAID' });
    expect(q.data.invoices.edges.map((e: any) => e.node)).toEqual([
      {
        relatedInvoiceId: invoice.id,
        refundId: g.data.refundPayment.id,
        billingReason: 'REFUND',
        subtotal: 10050,
        igstAmount: 1809,
        total: 11859,
      },
    ]);
  });

  it('a refund the gateway reports later (its event) issues the credit note then, once', async () => {
    const { payment, invoice } = await paidWithInvoice({ amount: 10000, customer_state_code: '27' });
    // A refund still pending at the gateway (its create call answered `pending`): reserved, with the gateway's id.
    const refundId = uuidv7();
    const providerRefundId = gatewayRefundId(provider);
    const db = h.app.orm.em.getConnection();
    await db.execute(
      `insert into refunds (id, created_at, merchant_id, mode, payment_id, amount, gateway_amount, currency, status, provider_refund_id)
       values (?, now(), ?, 'test', ?, 5900, 5900, 'INR', 'pending', ?)`,
      [refundId, m.id, payment.id, providerRefundId],
    );
    await db.execute(
      'update payments set amount_refunded = amount_refunded + 5900, gateway_amount_refunded = gateway_amount_refunded + 5900 where id = ?',
      [payment.id],
    );
    expect(await creditNotes(invoice)).toEqual([]);

    const event = () =>
      refundSucceededEvent(provider, conn.webhookSecret, {
        id: providerRefundId,
        amount: 5900,
        providerPaymentId: payment.provider_payment_id,
        reference: { payment_id: payment.id },
      });
    const first = event();
    expect((await postEvent(conn.connection.webhook_url, first)).status).toBe(200);
    const notes = await creditNotes(invoice);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      refund_id: refundId,
      billing_reason: 'refund',
      total: 5900,
      subtotal: 5000,
      igst_amount: 900,
    });
    expect(await get('payments', payment.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 5900 });
    // The same event again, or another event about the same refund: nothing more.
    expect((await postEvent(conn.connection.webhook_url, first)).status).toBe(200);
    expect((await postEvent(conn.connection.webhook_url, event())).status).toBe(200);
    expect(await creditNotes(invoice)).toHaveLength(1);
    expect((await get('invoices', invoice.id)).amount_credited).toBe(5900);
  });

  it('a refund made at the gateway itself (its dashboard or API) is recorded, with its credit note, once', async () => {
    const { payment, invoice } = await paidWithInvoice({ amount: 49900, customer_state_code: '29' });
    // The merchant refunds 200.00 in the gateway's own dashboard: the gateway's refund API, not Cadence's.
    const gateway = createGateway(provider, conn.credentials as any, { sandboxUrl: h.app.app.sandboxUrl! });
    const outside = await gateway.refund({
      providerPaymentId: payment.provider_payment_id,
      amount: 20000,
      currency: 'INR',
      idempotencyKey: `dashboard-${uuidv7()}`,
    });
    await settle();
    const after = await get('payments', payment.id);
    expect(after).toMatchObject({ status: 'partially_refunded', amount_refunded: 20000 });
    const notes = await creditNotes(invoice);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ billing_reason: 'refund', total: 20000, related_invoice_id: invoice.id });
    const q = await m.test.gql(
      `query($id: ID!) { payment(id: $id) { refunds { id amount status providerRefundId } } }`,
      {
        id: payment.id,
      },
    );
    expect(q.data.payment.refunds).toEqual([
      { id: notes[0].refund_id, amount: 20000, status: 'SUCCEEDED', providerRefundId: outside.providerRefundId },
    ]);
    const refunded = (await outbox(h.app, m.id)).filter(
      (e: any) => e.type === 'payment.refunded' && e.payload.data.object.id === payment.id,
    );
    expect(refunded).toHaveLength(1);
    // The rest through Cadence: everything not yet refunded, and the gateway's net equals Cadence's.
    const rest = await m.test.post(`/payments/${payment.id}/refund`, {});
    expect(rest.status).toBe(201);
    expect(rest.body.amount).toBe(38882);
    await settle();
    expect(await get('payments', payment.id)).toMatchObject({ status: 'refunded', amount_refunded: 58882 });
    expect(sum(await creditNotes(invoice), (n) => n.total)).toBe(58882);
    expect(await gatewayCharge(h.app, provider, payment.provider_payment_id)).toEqual({
      charged: 58882,
      refunded: 58882,
    });
  });

  it("a refund's credit note PDF is titled Credit Note and names the original invoice's number and date", async () => {
    const { payment, invoice } = await paidWithInvoice({ amount: 49900, customer_state_code: '29' });
    expect((await m.test.post(`/payments/${payment.id}/refund`, { amount: 10000 })).status).toBe(201);
    await settle();
    const [note] = await creditNotes(invoice);
    const res = await fetch(`${h.app.url}/v1/invoices/${note.id}/pdf`, {
      headers: { authorization: `Bearer ${m.keys.test}` },
    });
    expect(res.status).toBe(200);
    const text = await pdfText(Buffer.from(await res.arrayBuffer()));
    expect(text).toContain('Credit Note');
    expect(text).toMatch(row('Credit note no.', note.number));
    expect(text).toMatch(row('Against invoice', invoice.number));
    expect(text).toMatch(row('Invoice dated', istDate(new Date(invoice.issued_at))));
    expect(text).toMatch(row('Taxable value', '₹84.74'));
    expect(text).toMatch(row('Total credit', '₹100.00'));
    // The original invoice, as issued, now also prints what credit notes returned of it (a new printed state).
    const original = await fetch(`${h.app.url}/v1/invoices/${invoice.id}/pdf`, {
      headers: { authorization: `Bearer ${m.keys.test}` },
    });
    const originalText = await pdfText(Buffer.from(await original.arrayBuffer()));
    expect(originalText).toContain('Tax Invoice');
    expect(originalText).toMatch(row('Total', '₹588.82'));
    expect(originalText).toMatch(row('Credited by credit notes', '-₹100.00'));
  });
});

describe.each(PROVIDERS)("a plan change's credit note through %s", (provider: ProviderName) => {
  let m: TestMerchant;
  beforeAll(async () => {
    m = await h.merchant({ gstin: GSTIN, state_code: '29' });
    await connect(m.test, provider);
  });

  it('names the invoice of the period it credits, whose amount_credited grows by it; its PDF names that invoice', async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_state_code: '27' }),
    );
    expect(subscription.status).toBe('active');
    const [periodInvoice] = (await invoicesOf(m.test, subscription.id)).filter((i) => i.type === 'invoice');
    expect(periodInvoice).toMatchObject({
      billing_reason: 'subscription_create',
      period_start: subscription.current_period_start,
      amount_credited: 0,
    });
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 20 * DAY));
    const down = await recurringPlan(m.test, { name: 'Monthly Lite' }, { amount: 19900 });
    const r = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: down.plan.id }));
    expect(r.credit_note).toMatchObject({
      type: 'credit_note',
      billing_reason: 'subscription_update',
      related_invoice_id: periodInvoice.id,
    });
    expect(r.credit_note.total).toBeGreaterThan(0);
    expect(r.credit_note.total).toBeLessThanOrEqual(periodInvoice.total);
    expect((await ok(m.test.get(`/invoices/${periodInvoice.id}`))).amount_credited).toBe(r.credit_note.total);
    const created = (await outbox(h.app, m.id, 'credit_note.created')).filter(
      (e) => e.payload.data.object.id === r.credit_note.id,
    );
    expect(created).toHaveLength(1);
    expect(created[0].payload.data.object.related_invoice_id).toBe(periodInvoice.id);

    const res = await fetch(`${h.app.url}/v1/invoices/${r.credit_note.id}/pdf`, {
      headers: { authorization: `Bearer ${m.keys.test}` },
    });
    expect(res.status).toBe(200);
    const text = await pdfText(Buffer.from(await res.arrayBuffer()));
    expect(text).toContain('Credit Note');
    expect(text).toMatch(row('Against invoice', periodInvoice.number));
    expect(text).toMatch(row('Invoice dated', istDate(new Date(periodInvoice.issued_at))));
  });
});

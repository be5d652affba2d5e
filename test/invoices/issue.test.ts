import fc from 'fast-check';
import { Mode } from '../../src/core/entity';
import { BillingReason, InvoiceStatus, InvoiceType } from '../../src/modules/invoices/invoice.entities';
import { TestMerchant, useHarness } from '../harness';
import { outbox } from '../payments/helpers';
import { customer, draft, invoiceService, issue, rows, tenantEm } from './helpers';

/** InvoiceService.issue through the real service and PostgreSQL: GST heads, amounts, events, settling. */

const h = useHarness();
let m: TestMerchant; // GSTIN in Karnataka (29), default 18%
let plain: TestMerchant; // no GSTIN

beforeAll(async () => {
  m = await h.merchant({ gstin: '29ABCDE1234F1ZW', sac_code: '998314' });
  plain = await h.merchant({ state_code: '29' });
});

describe('GST', () => {
  it('intra-state: CGST = SGST, per line too, place of supply the customer state', async () => {
    const c = await customer(h, m.id, { stateCode: '29' });
    const inv = await issue(h, m.id, draft(c));
    expect(inv).toMatchObject({
      subtotal: 10000,
      cgstAmount: 900,
      sgstAmount: 900,
      igstAmount: 0,
      taxAmount: 1800,
      total: 11800,
      amountDue: 11800,
      amountPaid: 0,
      taxRateBps: 1800,
      placeOfSupply: '29',
      supplierGstin: '29ABCDE1234F1ZW',
      customerGstin: null,
    });
    expect(inv.lineItems).toEqual([
      expect.objectContaining({
        amount: 10000,
        hsnSac: '998314',
        cgstAmount: 900,
        sgstAmount: 900,
        igstAmount: 0,
        proration: false,
      }),
    ]);
  });

  it('inter-state: IGST only; a registered customer is placed in its GSTIN state', async () => {
    const byState = await issue(h, m.id, draft(await customer(h, m.id, { stateCode: '27' })));
    expect(byState).toMatchObject({
      cgstAmount: 0,
      sgstAmount: 0,
      igstAmount: 1800,
      taxAmount: 1800,
      total: 11800,
      placeOfSupply: '27',
    });
    expect(byState.lineItems[0]).toMatchObject({ cgstAmount: 0, sgstAmount: 0, igstAmount: 1800 });
    const byGstin = await issue(h, m.id, draft(await customer(h, m.id, { gstin: '27AAPFU0939F1ZV' })));
    expect(byGstin).toMatchObject({ igstAmount: 1800, placeOfSupply: '27', customerGstin: '27AAPFU0939F1ZV' });
  });

  it('customer state unknown: CGST + SGST, place of supply the merchant state', async () => {
    const inv = await issue(h, m.id, draft(await customer(h, m.id)));
    expect(inv).toMatchObject({ cgstAmount: 900, sgstAmount: 900, igstAmount: 0, placeOfSupply: '29' });
  });

  it('export (non-INR): zero-rated, no tax, rate 0', async () => {
    const inv = await issue(h, m.id, draft(await customer(h, m.id, { stateCode: '27' }), { currency: 'usd' }));
    expect(inv).toMatchObject({
      currency: 'USD',
      cgstAmount: 0,
      sgstAmount: 0,
      igstAmount: 0,
      taxAmount: 0,
      total: 10000,
      taxRateBps: 0,
      placeOfSupply: '27',
    });
    expect(inv.lineItems[0]).toMatchObject({ cgstAmount: 0, sgstAmount: 0, igstAmount: 0 });
    // A customer abroad (no state): the place of supply is outside India, not the merchant's state.
    const abroad = await issue(h, m.id, draft(await customer(h, m.id), { currency: 'EUR' }));
    expect(abroad).toMatchObject({ taxAmount: 0, total: 10000, placeOfSupply: null });
  });

  it('merchant without a GSTIN: no tax', async () => {
    const inv = await issue(h, plain.id, draft(await customer(h, plain.id, { stateCode: '29' })));
    expect(inv).toMatchObject({ taxAmount: 0, total: 10000, taxRateBps: 0, supplierGstin: null, placeOfSupply: '29' });
  });

  it('rounds each head half away from zero (odd paise)', async () => {
    const intra = await customer(h, m.id, { stateCode: '29' });
    const inter = await customer(h, m.id, { stateCode: '07' });
    const one = (amount: number) => ({ lines: [{ description: 'x', quantity: 1, unitAmount: amount, amount }] });
    // 50 x 9% = 4.5 -> 5 each; 25 x 18% = 4.5 -> 5; 12345 x 9% = 1111.05 -> 1111; 12345 x 18% = 2222.1 -> 2222.
    expect(await issue(h, m.id, draft(intra, one(50)))).toMatchObject({
      cgstAmount: 5,
      sgstAmount: 5,
      taxAmount: 10,
      total: 60,
    });
    expect(await issue(h, m.id, draft(inter, one(25)))).toMatchObject({ igstAmount: 5, total: 30 });
    expect(await issue(h, m.id, draft(intra, one(12345)))).toMatchObject({
      cgstAmount: 1111,
      sgstAmount: 1111,
      total: 14567,
    });
    expect(await issue(h, m.id, draft(inter, one(12345)))).toMatchObject({ igstAmount: 2222, total: 14567 });
  });

  it('allocates the heads to lines by largest remainder; the lines sum to the invoice heads', async () => {
    const c = await customer(h, m.id, { stateCode: '29' });
    const lines = [333, 333, 334].map((amount, i) => ({
      description: `line ${i}`,
      quantity: 1,
      unitAmount: amount,
      amount,
    }));
    const inv = await issue(h, m.id, draft(c, { lines }));
    expect(inv).toMatchObject({ subtotal: 1000, cgstAmount: 90, sgstAmount: 90 });
    expect(inv.lineItems.map((l) => [l.cgstAmount, l.sgstAmount])).toEqual([
      [30, 30],
      [30, 30],
      [30, 30],
    ]);
  });

  it('property, through the service: stored line heads sum to the stored invoice heads at any rate', async () => {
    const intra = await customer(h, m.id, { stateCode: '29' });
    const inter = await customer(h, m.id, { stateCode: '33' });
    const service = invoiceService(h);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 5_000_000 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.boolean(),
        async (amounts, rate, sameState) => {
          expect((await m.test.post('/merchant/tax-settings', { tax_rate_bps: rate })).status).toBe(200);
          const lines = amounts.map((amount, i) => ({ description: `l${i}`, quantity: 1, unitAmount: amount, amount }));
          const issued = await issue(h, m.id, draft(sameState ? intra : inter, { lines }));
          const inv = await service.invoice(
            { em: tenantEm(h, m.id), principal: { kind: 'merchant', merchantId: m.id, mode: Mode.TEST } } as never,
            issued.id,
          );
          expect(inv.taxRateBps).toBe(rate);
          expect(inv.subtotal).toBe(amounts.reduce((s, a) => s + a, 0));
          expect(inv.total).toBe(inv.subtotal + inv.taxAmount);
          expect(inv.taxAmount).toBe(inv.cgstAmount + inv.sgstAmount + inv.igstAmount);
          for (const head of ['cgstAmount', 'sgstAmount', 'igstAmount'] as const) {
            expect(inv.lineItems.reduce((s, l) => s + l[head], 0)).toBe(inv[head]);
          }
        },
      ),
      { seed: 11, numRuns: 25 },
    );
    const reset = await m.test.post('/merchant/tax-settings', { tax_rate_bps: null }); // back to the default
    expect(reset.body).toMatchObject({ object: 'tax_settings', tax_rate_bps: 1800 });
  });
});

describe('amounts, credit notes and events', () => {
  it('issued paid: amount_paid = total - credit applied, nothing due; invoice.created then invoice.paid with line items', async () => {
    const c = await customer(h, m.id, { stateCode: '29' });
    const at = new Date('2026-07-01T00:00:00Z');
    const inv = await issue(
      h,
      m.id,
      draft(c, { status: InvoiceStatus.PAID, creditApplied: 1000, issuedAt: at, subscriptionId: null }),
    );
    expect(inv).toMatchObject({
      status: 'paid',
      total: 11800,
      creditApplied: 1000,
      amountPaid: 10800,
      amountDue: 0,
      paidAt: at,
    });
    const events = (await outbox(h.app, m.id)).filter((e) => e.payload.data.object.id === inv.id);
    expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.paid']);
    expect(events[1].payload.data.object).toMatchObject({
      object: 'invoice',
      type: 'invoice',
      number: inv.number,
      status: 'paid',
      total: 11800,
      amount_paid: 10800,
      livemode: false,
      issued_at: at.toISOString(),
      billing_reason: 'subscription_cycle',
      line_items: [
        expect.objectContaining({
          amount: 10000,
          cgst_amount: 900,
          sgst_amount: 900,
          igst_amount: 0,
          hsn_sac: '998314',
        }),
      ],
    });
  });

  it('open with credit: amount_due = total - credit; credit beyond the total is capped', async () => {
    const c = await customer(h, m.id, { stateCode: '29' });
    expect(await issue(h, m.id, draft(c, { creditApplied: 800 }))).toMatchObject({
      creditApplied: 800,
      amountDue: 11000,
      amountPaid: 0,
    });
    expect(await issue(h, m.id, draft(c, { creditApplied: 50_000 }))).toMatchObject({
      creditApplied: 11800,
      amountDue: 0,
    });
  });

  it('a credit note: positive amounts, status issued, its own CN sequence, credit_note.created', async () => {
    const c = await customer(h, m.id, { stateCode: '27' });
    const inv = await issue(h, m.id, draft(c));
    const cn = await issue(
      h,
      m.id,
      draft(c, {
        type: InvoiceType.CREDIT_NOTE,
        status: InvoiceStatus.ISSUED,
        billingReason: BillingReason.SUBSCRIPTION_UPDATE,
        relatedInvoiceId: inv.id,
        lines: [{ description: 'Unused time', quantity: 1, unitAmount: 2500, amount: 2500, proration: true }],
      }),
    );
    expect(cn).toMatchObject({
      type: 'credit_note',
      status: 'issued',
      subtotal: 2500,
      igstAmount: 450,
      total: 2950,
      amountDue: 0,
      relatedInvoiceId: inv.id,
    });
    expect(cn.number).toMatch(/^TCN-2627-\d{6}$/);
    expect(cn.lineItems[0]).toMatchObject({ proration: true, igstAmount: 450 });
    expect((await outbox(h.app, m.id, 'credit_note.created')).map((e) => e.payload.data.object.id)).toContain(cn.id);
  });

  it('refuses a draft that cannot be (a bug in the caller), writing nothing', async () => {
    const c = await customer(h, m.id);
    const before = (await rows(h, 'select count(*)::int as n from invoices where merchant_id = ?', [m.id]))[0].n;
    await expect(issue(h, m.id, draft(c, { status: InvoiceStatus.ISSUED }))).rejects.toThrow(/cannot be issued/);
    await expect(issue(h, m.id, draft(c, { lines: [] }))).rejects.toThrow(/no lines/);
    await expect(issue(h, m.id, draft(await customer(h, plain.id)))).rejects.toThrow(/not the tenant/);
    expect((await rows(h, 'select count(*)::int as n from invoices where merchant_id = ?', [m.id]))[0].n).toBe(before);
  });
});

describe('settling', () => {
  const svc = () => invoiceService(h);
  const inTx = <T>(fn: (em: any) => Promise<T>) => tenantEm(h, m.id).transactional(fn);

  it('open -> paid once (invoice.paid), then a no-op; paid cannot be voided', async () => {
    const inv = await issue(h, m.id, draft(await customer(h, m.id, { stateCode: '29' }), { creditApplied: 300 }));
    const at = new Date('2026-06-20T00:00:00Z');
    const paid = await inTx((em) => svc().markPaid(em, inv.id, at));
    expect(paid).toMatchObject({ status: 'paid', amountPaid: 11500, amountDue: 0, paidAt: at });
    await inTx((em) => svc().markPaid(em, inv.id, new Date()));
    const events = (await outbox(h.app, m.id, 'invoice.paid')).filter((e) => e.payload.data.object.id === inv.id);
    expect(events).toHaveLength(1);
    await expect(inTx((em) => svc().voidInvoice(em, inv.id))).rejects.toMatchObject({
      code: 'invalid_state_transition',
    });
  });

  it('open -> uncollectible -> void; each again is a no-op; void cannot be paid', async () => {
    const inv = await issue(h, m.id, draft(await customer(h, m.id)));
    expect(await inTx((em) => svc().markUncollectible(em, inv.id))).toMatchObject({ status: 'uncollectible' });
    expect(await inTx((em) => svc().markUncollectible(em, inv.id))).toMatchObject({ status: 'uncollectible' });
    expect(await inTx((em) => svc().voidInvoice(em, inv.id))).toMatchObject({ status: 'void', amountDue: 0 });
    expect(await inTx((em) => svc().voidInvoice(em, inv.id))).toMatchObject({ status: 'void' });
    await expect(inTx((em) => svc().markPaid(em, inv.id, new Date()))).rejects.toMatchObject({
      code: 'invalid_state_transition',
    });
    await expect(inTx((em) => svc().markUncollectible(em, inv.id))).rejects.toMatchObject({
      code: 'invalid_state_transition',
    });
  });

  it("another tenant's invoice is not found", async () => {
    const inv = await issue(h, m.id, draft(await customer(h, m.id)));
    await expect(
      tenantEm(h, plain.id).transactional((em) => svc().markPaid(em, inv.id, new Date())),
    ).rejects.toMatchObject({ code: 'resource_not_found' });
    await expect(
      tenantEm(h, m.id, Mode.LIVE).transactional((em) => svc().voidInvoice(em, inv.id)),
    ).rejects.toMatchObject({ code: 'resource_not_found' });
  });
});

describe("a subscription's tax snapshot", () => {
  it('GST follows the snapshot (treatment and rate fixed at creation), not the settings or the customer state now', async () => {
    const inter = await customer(h, m.id, { stateCode: '27' });
    // Live settings say IGST at 18%; the snapshot says CGST + SGST at 12%: the snapshot wins, per line too.
    const lines = [7001, 2999].map((amount, i) => ({ description: `l${i}`, quantity: 1, unitAmount: amount, amount }));
    const intra12 = await issue(h, m.id, draft(inter, { lines, tax: { treatment: 'intra', rateBps: 1200 } }));
    expect(intra12).toMatchObject({
      subtotal: 10000,
      cgstAmount: 600,
      sgstAmount: 600,
      igstAmount: 0,
      taxAmount: 1200,
      total: 11200,
      taxRateBps: 1200,
      amountDue: 11200,
      supplierGstin: '29ABCDE1234F1ZW',
      placeOfSupply: '27',
    });
    expect(intra12.lineItems.reduce((s, l) => s + l.cgstAmount, 0)).toBe(600);
    expect(await issue(h, m.id, draft(inter, { tax: { treatment: 'inter', rateBps: 1800 } }))).toMatchObject({
      igstAmount: 1800,
      total: 11800,
      taxRateBps: 1800,
    });
    // A subscription made while the merchant had no GSTIN stays untaxed.
    expect(await issue(h, m.id, draft(inter, { tax: { treatment: 'none', rateBps: 0 } }))).toMatchObject({
      taxAmount: 0,
      total: 10000,
      taxRateBps: 0,
    });
    // And one taxed then stays taxed after the merchant's GSTIN is gone.
    expect(
      await issue(h, plain.id, draft(await customer(h, plain.id), { tax: { treatment: 'intra', rateBps: 1800 } })),
    ).toMatchObject({
      cgstAmount: 900,
      sgstAmount: 900,
      total: 11800,
      taxRateBps: 1800,
    });
  });
});

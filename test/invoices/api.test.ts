import { Mode } from '../../src/core/entity';
import { InvoiceStatus, InvoiceType } from '../../src/modules/invoices/invoice.entities';
import { ADMIN_TOKEN, request, TestMerchant, useHarness } from '../harness';
import { unknownId } from '../harness/http';
import { connect, createPayment, outbox, pay } from '../payments/helpers';
import { customer, draft, issue, rows } from './helpers';

/** Invoices over REST and GraphQL: one-time payments, lists and filters, tenancy, tax settings. */

const h = useHarness();
let m: TestMerchant;
let other: TestMerchant;
let oneTime: any; // the invoice of a one-time payment
let payment: any;

beforeAll(async () => {
  m = await h.merchant({ gstin: '29ABCDE1234F1ZW', sac_code: '998314', address: '1 MG Road, Bengaluru' });
  other = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
  await connect(m.test, 'stripe');
  payment = await createPayment(m.test, { amount: 49900, customer_state_code: '27', reference_id: 'order-7' });
  await pay(m.test, payment);
  const list = await m.test.get(`/invoices?customer_id=${payment.customer_id}`);
  oneTime = list.body.data[0];
});

describe('one-time payments', () => {
  it('a succeeded payment has a paid one_time invoice, its amount the tax-exclusive price', async () => {
    const list = await m.test.get(`/invoices?customer_id=${payment.customer_id}`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(list.body.data).toHaveLength(1);
    expect(oneTime).toMatchObject({
      object: 'invoice',
      type: 'invoice',
      billing_reason: 'one_time',
      status: 'paid',
      customer_id: payment.customer_id,
      payment_id: payment.id,
      subscription_id: null,
      currency: 'INR',
      subtotal: 49900,
      cgst_amount: 0,
      sgst_amount: 0,
      igst_amount: 8982,
      tax_amount: 8982,
      total: 58882,
      amount_paid: 58882,
      amount_due: 0,
      tax_rate_bps: 1800,
      place_of_supply: '27',
      supplier_gstin: '29ABCDE1234F1ZW',
      livemode: false,
      related_invoice_id: null,
    });
    expect(oneTime.number).toBe('TINV-2627-000001'.replace('2627', fyLabel(new Date(oneTime.issued_at))));
    expect(oneTime.line_items).toEqual([
      {
        description: 'Order order-7',
        quantity: 1,
        unit_amount: 49900,
        amount: 49900,
        period_start: null,
        period_end: null,
        proration: false,
        hsn_sac: '998314',
        cgst_amount: 0,
        sgst_amount: 0,
        igst_amount: 8982,
      },
    ]);
    expect(oneTime.paid_at).toBe(oneTime.issued_at);
    // The checkout charged the tax too (docs/invoices-and-gst.md): what the invoice says was paid is what the payment
    // collected.
    expect(payment).toMatchObject({ amount: 49900, tax_amount: 8982, amount_total: 58882 });
    expect(Math.abs(Date.parse(oneTime.issued_at) - Date.now())).toBeLessThan(60_000);
    const created = (await outbox(h.app, m.id, 'invoice.created')).map((e) => e.payload.data.object);
    expect(created.find((o) => o.id === oneTime.id)).toMatchObject({
      payment_id: payment.id,
      line_items: [expect.objectContaining({ amount: 49900 })],
    });
  });

  it('GET /invoices/{id} answers the same invoice with its line items', async () => {
    const r = await m.test.get(`/invoices/${oneTime.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(oneTime);
  });

  it('is issued at merchant time: the test clock moved a year on, so does the invoice', async () => {
    // The clock's offset is set directly: the invoice reads it, and an advance would also run (unrelated) due work.
    await rows(h, 'insert into test_clocks (merchant_id, offset_ms, updated_at) values (?, ?, now())', [
      m.id,
      400 * 86_400_000,
    ]);
    const now = await h.clock.now(m);
    expect(now.getTime() - Date.now()).toBeGreaterThan(399 * 86_400_000);
    const p = await createPayment(m.test, { amount: 1000 });
    await pay(m.test, p);
    const r = await m.test.get(`/invoices?customer_id=${p.customer_id}`);
    expect(r.body.data).toHaveLength(1);
    const inv = r.body.data[0];
    expect(Math.abs(Date.parse(inv.issued_at) - now.getTime())).toBeLessThan(60_000);
    expect(inv.number).toBe(`TINV-${fyLabel(now)}-000001`);
    expect(inv).toMatchObject({ subtotal: 1000, cgst_amount: 90, sgst_amount: 90, total: 1180, place_of_supply: '29' });
  });
});

describe('lists', () => {
  let c: string;
  const ids: string[] = [];
  let cn: any;
  beforeAll(async () => {
    c = await customer(h, m.id, { stateCode: '29' });
    for (let i = 0; i < 3; i++)
      ids.push((await issue(h, m.id, draft(c, { subscriptionId: i === 0 ? payment.id : null }))).id);
    cn = await issue(h, m.id, draft(c, { type: InvoiceType.CREDIT_NOTE, status: InvoiceStatus.ISSUED }));
  });

  it('pages newest first in the list envelope', async () => {
    const p1 = await m.test.get(`/invoices?customer_id=${c}&limit=2`);
    expect(p1.status).toBe(200);
    expect(p1.body.data.map((i: any) => i.id)).toEqual([cn.id, ids[2]]);
    expect(p1.body).toMatchObject({ object: 'list', has_more: true });
    expect(p1.body.data[0].line_items).toHaveLength(1);
    const p2 = await m.test.get(`/invoices?customer_id=${c}&limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.body.data.map((i: any) => i.id)).toEqual([ids[1], ids[0]]);
    expect(p2.body).toMatchObject({ has_more: false, next_cursor: null });
  });

  it('filters by type and subscription_id', async () => {
    const notes = await m.test.get(`/invoices?customer_id=${c}&type=credit_note`);
    expect(notes.body.data.map((i: any) => [i.id, i.type, i.status])).toEqual([[cn.id, 'credit_note', 'issued']]);
    const invoices = await m.test.get(`/invoices?customer_id=${c}&type=invoice`);
    expect(invoices.body.data).toHaveLength(3);
    const bySub = await m.test.get(`/invoices?subscription_id=${payment.id}`);
    expect(bySub.body.data.map((i: any) => i.id)).toEqual([ids[0]]);
    expect((await m.test.get(`/invoices?customer_id=${unknownId()}`)).body.data).toEqual([]);
    expect((await m.test.get('/invoices?customer_id=not-a-uuid')).body.data).toEqual([]);
  });

  it('refuses a bad type, limit or cursor with 400', async () => {
    const bad = await m.test.get('/invoices?type=receipt');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'type' });
    expect((await m.test.get('/invoices?limit=101')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'limit',
    });
    expect((await m.test.get('/invoices?cursor=zzz')).body.error).toMatchObject({
      code: 'parameter_invalid',
      param: 'cursor',
    });
  });

  it('GraphQL: invoice(id) and invoices(...) as a Relay connection with line items', async () => {
    const r = await m.test.gql(
      `query($id: ID!, $c: ID) {
        invoice(id: $id) { id number type status lineItems { amount cgstAmount sgstAmount igstAmount hsnSac } }
        invoices(first: 10, customerId: $c, type: CREDIT_NOTE) { edges { cursor node { id type } } pageInfo { hasNextPage endCursor } totalCount }
      }`,
      { id: ids[0], c },
    );
    expect(r.errors).toBeUndefined();
    expect(r.data.invoice).toMatchObject({
      id: ids[0],
      type: 'INVOICE',
      status: 'OPEN',
      lineItems: [{ amount: 10000, cgstAmount: 900, sgstAmount: 900, igstAmount: 0, hsnSac: '998314' }],
    });
    expect(r.data.invoices).toMatchObject({
      edges: [{ node: { id: cn.id, type: 'CREDIT_NOTE' } }],
      pageInfo: { hasNextPage: false },
      totalCount: 1,
    });
  });
});

describe('tenancy', () => {
  it("another merchant's invoice, or the other mode's, answers 404 like an unknown id and is never listed", async () => {
    for (const client of [other.test, m.live, other.live]) {
      const r = await client.get(`/invoices/${oneTime.id}`);
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_not_found' });
      const unknown = await client.get(`/invoices/${unknownId()}`);
      expect(unknown.status).toBe(404);
      const list = await client.get(`/invoices?customer_id=${payment.customer_id}`);
      expect(list.body.data).toEqual([]);
      const g = await client.gql('query($id: ID!) { invoice(id: $id) { id } }', { id: oneTime.id });
      expect(g.errors?.[0].extensions.code).toBe('resource_not_found');
    }
    expect((await m.test.get('/invoices/not-a-uuid')).status).toBe(404);
  });

  it('live mode has its own invoices', async () => {
    const c = await customer(h, m.id, {}, Mode.LIVE);
    const live = await issue(h, m.id, draft(c), Mode.LIVE);
    expect(live.number).toMatch(/^INV-\d{4}-000001$/);
    expect((await m.live.get(`/invoices/${live.id}`)).body).toMatchObject({ id: live.id, livemode: true });
    expect((await m.test.get(`/invoices/${live.id}`)).status).toBe(404);
  });
});

describe('tax settings', () => {
  it('onboarding takes tax_rate_bps, sac_code and address', async () => {
    const r = await request(`${h.app.url}/v1/admin/merchants`, {
      key: ADMIN_TOKEN,
      body: {
        name: 'Taxed',
        gstin: '07AAPFU0939F1ZX',
        tax_rate_bps: 500,
        sac_code: '9983',
        address: '  Connaught Place, Delhi ',
      },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      gstin: '07AAPFU0939F1ZX',
      state_code: '07',
      tax_rate_bps: 500,
      sac_code: '9983',
      address: 'Connaught Place, Delhi',
    });
    const d = await request(`${h.app.url}/v1/admin/merchants`, { key: ADMIN_TOKEN, body: { name: 'Default' } });
    expect(d.body).toMatchObject({ tax_rate_bps: 1800, sac_code: null, address: null });
  });

  const onboarding: [string, Record<string, unknown>, string][] = [
    ['rate above 10000', { tax_rate_bps: 10001 }, 'tax_rate_bps'],
    ['negative rate', { tax_rate_bps: -1 }, 'tax_rate_bps'],
    ['fractional rate', { tax_rate_bps: 1.5 }, 'tax_rate_bps'],
    ['short sac', { sac_code: '998' }, 'sac_code'],
    ['sac with letters', { sac_code: '99831A' }, 'sac_code'],
    ['long address', { address: 'x'.repeat(501) }, 'address'],
    ['state code 00', { state_code: '00' }, 'state_code'],
    ['state code 39', { state_code: '39' }, 'state_code'],
    ['gstin of another state', { gstin: '29ABCDE1234F1ZW', state_code: '27' }, 'state_code'],
    ['gstin with state 40', { gstin: '40ABCDE1234F1Z5' }, 'gstin'],
  ];
  it.each(onboarding)('onboarding refuses %s (400 parameter_invalid)', async (_n, body, param) => {
    const r = await request(`${h.app.url}/v1/admin/merchants`, { key: ADMIN_TOKEN, body: { name: 'Bad', ...body } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param });
  });

  it('POST /merchant/tax-settings updates them (omitted kept, null cleared) and later invoices use them', async () => {
    const t = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
    const r = await t.test.post('/merchant/tax-settings', {
      tax_rate_bps: 1200,
      sac_code: '998431',
      address: 'Koramangala',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      object: 'tax_settings',
      merchant_id: t.id,
      gstin: '29ABCDE1234F1ZW',
      state_code: '29',
      tax_rate_bps: 1200,
      sac_code: '998431',
      address: 'Koramangala',
      e_invoicing: false,
    });
    // A new GSTIN brings its state; live mode sees the same settings (they are the merchant's).
    const moved = await t.live.post('/merchant/tax-settings', { gstin: '27AAPFU0939F1ZV', address: null });
    expect(moved.body).toMatchObject({
      gstin: '27AAPFU0939F1ZV',
      state_code: '27',
      tax_rate_bps: 1200,
      sac_code: '998431',
      address: null,
    });
    const gql = await t.test.gql('{ merchant { gstin stateCode taxRateBps sacCode address } }');
    expect(gql.data.merchant).toEqual({
      gstin: '27AAPFU0939F1ZV',
      stateCode: '27',
      taxRateBps: 1200,
      sacCode: '998431',
      address: null,
    });

    const inv = await issue(h, t.id, draft(await customer(h, t.id, { stateCode: '29' })));
    expect(inv).toMatchObject({ taxRateBps: 1200, igstAmount: 1200, supplierGstin: '27AAPFU0939F1ZV' });
    expect(inv.lineItems[0].hsnSac).toBe('998431');

    // Without a GSTIN nothing is taxed.
    expect((await t.test.post('/merchant/tax-settings', { gstin: null })).body).toMatchObject({
      gstin: null,
      state_code: '27',
    });
    expect(await issue(h, t.id, draft(await customer(h, t.id)))).toMatchObject({ taxAmount: 0, taxRateBps: 0 });
  });

  const updates: [string, Record<string, unknown>, string, string][] = [
    ['gstin of 14 characters', { gstin: '29ABCDE1234F1Z' }, 'parameter_invalid', 'gstin'],
    ['gstin with a wrong check character', { gstin: '29ABCDE1234F1Z5' }, 'parameter_invalid', 'gstin'],
    ['state code 1 digit', { state_code: '7' }, 'parameter_invalid', 'state_code'],
    ['state code 99', { state_code: '99' }, 'parameter_invalid', 'state_code'],
    ['state code unlike the GSTIN', { state_code: '27' }, 'parameter_invalid', 'state_code'],
    ['gstin and state code apart', { gstin: '27AAPFU0939F1ZV', state_code: '29' }, 'parameter_invalid', 'state_code'],
    ['rate 10001', { tax_rate_bps: 10001 }, 'parameter_invalid', 'tax_rate_bps'],
    ['rate as text', { tax_rate_bps: '1800' }, 'parameter_invalid', 'tax_rate_bps'],
    ['sac of 9 digits', { sac_code: '123456789' }, 'parameter_invalid', 'sac_code'],
    ['address of 501 characters', { address: 'a'.repeat(501) }, 'parameter_invalid', 'address'],
    ['unknown field', { bogus_field: 1 }, 'parameter_unknown', 'bogus_field'],
  ];
  it.each(updates)('tax-settings refuses %s, changing nothing', async (_n, body, code, param) => {
    const t = await h.merchant({ gstin: '29ABCDE1234F1ZW' });
    const r = await t.test.post('/merchant/tax-settings', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code, param });
    const g = await t.test.gql('{ merchant { gstin stateCode taxRateBps sacCode address } }');
    expect(g.data.merchant).toEqual({
      gstin: '29ABCDE1234F1ZW',
      stateCode: '29',
      taxRateBps: 1800,
      sacCode: null,
      address: null,
    });
  });

  it('accepts state code 97 (other territory) and a 0% rate', async () => {
    const t = await h.merchant();
    const r = await t.test.post('/merchant/tax-settings', { state_code: '97', tax_rate_bps: 0 });
    expect(r.body).toMatchObject({ state_code: '97', tax_rate_bps: 0, gstin: null });
  });
});

/** "2627" for FY 2026-27, from an instant (IST = UTC+05:30). */
function fyLabel(at: Date): string {
  const ist = new Date(at.getTime() + 330 * 60_000);
  const fy = ist.getUTCMonth() >= 3 ? ist.getUTCFullYear() : ist.getUTCFullYear() - 1;
  return `${fy % 100}${(fy + 1) % 100}`.padStart(4, '0');
}

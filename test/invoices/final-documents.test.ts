/**
 * Issued documents are final (docs/invoices-and-gst.md): an invoice or credit note stores its supplier, recipient
 * and every line's `hsn_sac` at issue, and its PDF is rendered from that record alone. A later change of every merchant
 * setting and of the customer's details changes neither the JSON nor the PDF of an earlier document (the stored PDFs
 * are deleted, so they are rendered again), while a document issued afterwards carries the new ones. Also the
 * migration's backfill of the documents issued before it.
 */
import crypto from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';
import { serviceOrmConfig } from '../../src/core/orm-config';
import { entities } from '../../src/entities';
import { migrationsList } from '../../src/migrations';
import { gstinCheckCharacter } from '../../src/core/gstin';
import { istDate } from '../../src/modules/invoices/invoice.pdf';
import { freshDatabase, TestMerchant, useHarness } from '../harness';
import { connect, createPayment, pay } from '../payments/helpers';
import { authorise, createSubscription, invoicesOf, ok, recurringPlan } from '../subscriptions/helpers';
import { rows } from './helpers';
import { pdfText } from './pdf-text';

const h = useHarness();
jest.setTimeout(90_000);
const DAY = 86_400_000;

/** A valid GSTIN: the first 14 characters and their check character. */
const gstin = (first14: string) => first14 + gstinCheckCharacter(first14);
const RECIPIENT = gstin('27AAACB1234C1Z');

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const row = (label: string, value: string) => new RegExp(`${escape(label)}\\s+${escape(value)}`);

async function pdfOf(m: TestMerchant, id: string): Promise<Buffer> {
  const res = await fetch(`${h.app.url}/v1/invoices/${id}/pdf`, {
    headers: { authorization: `Bearer ${m.keys.test}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function invoiceOfPayment(m: TestMerchant, paymentId: string): Promise<any> {
  for (let i = 0; i < 100; i++) {
    const list = await ok(m.test.get(`/invoices?limit=100`));
    const inv = list.data.find((x: any) => x.payment_id === paymentId);
    if (inv) return inv;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no invoice for payment ${paymentId}`);
}

/** Each line of the JSON is printed with the SAC its JSON shows (or '—' when it has none), and no other SAC. */
function expectSacAsJson(doc: any, text: string): void {
  for (const l of doc.line_items) {
    const sac = l.hsn_sac ?? '—';
    const firstLine = String(l.description).split('\n')[0];
    expect(text).toMatch(new RegExp(`${escape(firstLine)}\\s+${escape(sac)}\\s+${l.quantity}\\s`));
  }
  const printed = new Set(doc.line_items.map((l: any) => l.hsn_sac).filter(Boolean));
  // SAC codes are 4 to 8 digits in the SAC column; none but the JSON's appear among the 99xxxx service codes.
  for (const code of text.match(/\b99\d{2,6}\b/g) ?? []) expect(printed).toContain(code);
}

/** Every party and line field the PDF must show, as the JSON states them. */
function expectPrintsParties(doc: any, text: string): void {
  const s = doc.supplier;
  const r = doc.recipient;
  expect(text).toContain(s.name);
  if (s.address) for (const part of String(s.address).split('\n')) expect(text).toContain(part);
  expect(text).toMatch(row('GSTIN', s.gstin ?? 'Not registered'));
  expect(text).toContain(r.name ?? r.email);
  expect(text).toMatch(row('GSTIN', r.gstin ?? 'Unregistered'));
  expect(text).toMatch(row(doc.type === 'credit_note' ? 'Credit note no.' : 'Invoice no.', doc.number));
  expect(text).toMatch(
    row(doc.type === 'credit_note' ? 'Credit note date' : 'Invoice date', istDate(new Date(doc.issued_at))),
  );
  expectSacAsJson(doc, text);
}

describe('issued documents do not change when the settings do', () => {
  let m: TestMerchant;
  const docs: Record<string, any> = {};
  const texts: Record<string, string> = {};
  const ADDRESS = '2nd Floor, 80 Feet Road\nKoramangala, Bengaluru 560034';
  const RECIPIENT_GSTIN = RECIPIENT;
  let oneOffEmail: string;
  let subEmail: string;

  beforeAll(async () => {
    m = await h.merchant({ name: 'Bodhi Labs Pvt Ltd', gstin: '29AAGCB7383J1Z4', state_code: '29' });
    await ok(m.test.post('/merchant/tax-settings', { address: ADDRESS, sac_code: '998314' }));
    await connect(m.test, 'razorpay');

    // A one-off payment of a registered customer in another state (IGST).
    oneOffEmail = `meera-${crypto.randomBytes(3).toString('hex')}@example.com`;
    const p = await createPayment(m.test, {
      amount: 100000,
      customer_email: oneOffEmail,
      customer_name: 'Meera Traders',
      customer_state_code: '27',
      customer_gstin: RECIPIENT_GSTIN,
      reference_id: 'order-81',
    });
    await pay(m.test, p);
    docs.oneOff = await invoiceOfPayment(m, p.id);

    // A subscription of a customer with no state or GSTIN given (place of supply: the merchant's), then a downgrade
    // mid-period: its credit note names the subscription's first invoice.
    subEmail = `ravi-${crypto.randomBytes(3).toString('hex')}@example.com`;
    const { plan } = await recurringPlan(m.test);
    const { subscription } = await authorise(
      m.test,
      await createSubscription(m.test, plan.id, { customer_email: subEmail, customer_name: 'Ravi Kumar' }),
    );
    expect(subscription.status).toBe('active');
    await h.clock.advance(m, new Date(new Date(subscription.current_period_start).getTime() + 20 * DAY));
    const lite = await recurringPlan(m.test, { name: 'Lite' }, { amount: 19900 });
    const change = await ok(m.test.post(`/subscriptions/${subscription.id}/change-plan`, { plan_id: lite.plan.id }));
    expect(change.credit_note).toBeTruthy();
    const [first] = await invoicesOf(m.test, subscription.id);
    docs.subscription = await ok(m.test.get(`/invoices/${first.id}`));
    docs.creditNote = await ok(m.test.get(`/invoices/${change.credit_note.id}`));
    expect(docs.creditNote.related_invoice_id).toBe(first.id);
    for (const [k, d] of Object.entries(docs)) texts[k] = await pdfText(await pdfOf(m, d.id));
  });

  it('each document stores its supplier, recipient and lines with hsn_sac at issue (REST, GraphQL and its webhook)', async () => {
    const supplier = { name: 'Bodhi Labs Pvt Ltd', gstin: '29AAGCB7383J1Z4', state_code: '29', address: ADDRESS };
    expect(docs.oneOff).toMatchObject({
      supplier,
      recipient: { name: 'Meera Traders', email: oneOffEmail, gstin: RECIPIENT_GSTIN, state_code: '27', address: null },
      supplier_gstin: '29AAGCB7383J1Z4',
      customer_gstin: RECIPIENT_GSTIN,
      place_of_supply: '27',
      subtotal: 100000,
      igst_amount: 18000,
      total: 118000,
      tax_rate_bps: 1800,
    });
    expect(docs.subscription).toMatchObject({
      supplier,
      recipient: { name: 'Ravi Kumar', email: subEmail, gstin: null, state_code: null, address: null },
      place_of_supply: '29',
      cgst_amount: 4491,
      sgst_amount: 4491,
    });
    expect(docs.creditNote).toMatchObject({ type: 'credit_note', supplier, recipient: docs.subscription.recipient });
    for (const d of Object.values(docs)) {
      expect(Object.keys(d.recipient).sort()).toEqual(['address', 'email', 'gstin', 'name', 'state_code']);
      expect(Object.keys(d.supplier).sort()).toEqual(['address', 'gstin', 'name', 'state_code']);
      for (const l of d.line_items) expect(l.hsn_sac).toBe('998314');
    }

    const gql = await m.test.gql(
      'query($id: ID!) { invoice(id: $id) { supplier { name gstin stateCode address } recipient { name email gstin stateCode address } lineItems { hsnSac } } }',
      { id: docs.oneOff.id },
    );
    expect(gql.errors).toBeUndefined();
    expect(gql.data.invoice).toEqual({
      supplier: { name: 'Bodhi Labs Pvt Ltd', gstin: '29AAGCB7383J1Z4', stateCode: '29', address: ADDRESS },
      recipient: { name: 'Meera Traders', email: oneOffEmail, gstin: RECIPIENT_GSTIN, stateCode: '27', address: null },
      lineItems: [{ hsnSac: '998314' }],
    });

    // The outbound event carries the same object as REST.
    const [event] = await rows<{ payload: any }>(
      h,
      `select payload from outbox_events where type = 'invoice.created' and payload->'data'->'object'->>'id' = ?`,
      [docs.oneOff.id],
    );
    const payload = typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload;
    expect(payload.data.object.supplier).toEqual(docs.oneOff.supplier);
    expect(payload.data.object.recipient).toEqual(docs.oneOff.recipient);
  });

  it('each PDF prints exactly the stored parties and the SAC its JSON shows', () => {
    for (const [k, d] of Object.entries(docs)) expectPrintsParties(d, texts[k]);
    expect(texts.oneOff).toMatch(row('Place of supply', 'Maharashtra (27)'));
    expect(texts.oneOff).toMatch(row('State', 'Karnataka (29)'));
    expect(texts.oneOff).toMatch(row('State', 'Maharashtra (27)'));
    expect(texts.creditNote).toContain('Credit Note');
    expect(texts.creditNote).toMatch(row('Against invoice', docs.subscription.number));
    expect(texts.creditNote).toMatch(row('Invoice dated', istDate(new Date(docs.subscription.issued_at))));
  });

  it('a change of every merchant setting and of the customers changes no issued document, JSON or PDF', async () => {
    // Every tax setting (GSTIN and state, address, SAC, rate) through the API; the name has no API (the operator's
    // database only), so it is changed there.
    await ok(
      m.test.post('/merchant/tax-settings', {
        gstin: '27AAPFU0939F1ZV',
        state_code: '27',
        address: 'Tower B, Baner Road\nPune 411045',
        sac_code: '998315',
        tax_rate_bps: 1200,
      }),
    );
    await rows(h, 'update merchants set name = ? where id = ?', ['Bodhi Renamed Ltd', m.id]);

    // A later payment by the subscription customer's e-mail gives the state and GSTIN it lacked: the record gains
    // them (customer.store.ts fills what is missing and keeps what is there, so the one-off customer's details are
    // changed in the database, as a customer update would).
    const newGstin = gstin('07AAACR5055K1Z');
    const later = await createPayment(m.test, {
      amount: 5000,
      customer_email: subEmail,
      customer_state_code: '07',
      customer_gstin: newGstin,
    });
    expect((await ok(m.test.get(`/customers/${later.customer_id}`))).state_code).toBe('07');
    await rows(h, `update customers set name = 'Meera Exports', state_code = '33', gstin = ?, email = ? where id = ?`, [
      gstin('33AAACM1234C1Z'),
      `renamed-${oneOffEmail}`,
      docs.oneOff.customer_id,
    ]);

    // Stored PDFs are dropped: every document is rendered again, now from its record.
    await rows(h, 'delete from invoice_documents where merchant_id = ?', [m.id]);
    for (const [k, d] of Object.entries(docs)) {
      expect(await ok(m.test.get(`/invoices/${d.id}`))).toEqual(d);
      const gql = await m.test.gql(
        'query($id: ID!) { invoice(id: $id) { supplier { name gstin stateCode address } recipient { name email gstin stateCode address } } }',
        { id: d.id },
      );
      expect(gql.data.invoice.supplier.name).toBe('Bodhi Labs Pvt Ltd');
      expect(await pdfText(await pdfOf(m, d.id))).toBe(texts[k]);
    }
    expect(await rows(h, 'select count(*)::int as n from invoice_documents where merchant_id = ?', [m.id])).toEqual([
      { n: 3 },
    ]);

    // A document issued now carries the new settings, in its JSON and its PDF alike.
    const p = await createPayment(m.test, {
      amount: 20000,
      customer_email: `renamed-${oneOffEmail}`,
      reference_id: 'order-82',
    });
    await pay(m.test, p);
    const fresh = await invoiceOfPayment(m, p.id);
    expect(fresh).toMatchObject({
      supplier: {
        name: 'Bodhi Renamed Ltd',
        gstin: '27AAPFU0939F1ZV',
        state_code: '27',
        address: 'Tower B, Baner Road\nPune 411045',
      },
      recipient: {
        name: 'Meera Exports',
        email: `renamed-${oneOffEmail}`,
        gstin: gstin('33AAACM1234C1Z'),
        state_code: '33',
        address: null,
      },
      tax_rate_bps: 1200,
      igst_amount: 2400,
    });
    expect(fresh.line_items.map((l: any) => l.hsn_sac)).toEqual(['998315']);
    const text = await pdfText(await pdfOf(m, fresh.id));
    expectPrintsParties(fresh, text);
    expect(text).not.toContain('998314');
    expect(text).not.toContain('Bodhi Labs');
  });
});

describe('hsn_sac in the JSON is what the PDF prints', () => {
  it('a merchant without a SAC: null in the JSON, — in the PDF, also after a SAC is set and the PDF rendered again', async () => {
    const m = await h.merchant({ gstin: gstin('29AABCN1234D1Z'), state_code: '29' });
    await connect(m.test, 'razorpay');
    const p = await createPayment(m.test, { amount: 30000, reference_id: 'no-sac' });
    await pay(m.test, p);
    const inv = await invoiceOfPayment(m, p.id);
    expect(inv.line_items).toHaveLength(1);
    expect(inv.line_items[0]).toHaveProperty('hsn_sac', null);
    const before = await pdfText(await pdfOf(m, inv.id));
    expectSacAsJson(inv, before);
    expect(before).toMatch(/Order no-sac\s+—\s+1\s/);

    await ok(m.test.post('/merchant/tax-settings', { sac_code: '998314' }));
    await rows(h, 'delete from invoice_documents where invoice_id = ?', [inv.id]);
    expect(await ok(m.test.get(`/invoices/${inv.id}`))).toEqual(inv);
    const after = await pdfText(await pdfOf(m, inv.id));
    expect(after).toBe(before);
    expect(after).not.toContain('998314');

    const p2 = await createPayment(m.test, { amount: 30000, reference_id: 'with-sac' });
    await pay(m.test, p2);
    const inv2 = await invoiceOfPayment(m, p2.id);
    expect(inv2.line_items[0].hsn_sac).toBe('998314');
    expectSacAsJson(inv2, await pdfText(await pdfOf(m, inv2.id)));
  });
});

describe('the migration fills in the documents issued before it', () => {
  it("parties from the document itself and the records as they are now; lines without a SAC take the merchant's", async () => {
    const db = await freshDatabase('cadence_parties');
    const orm = await MikroORM.init(serviceOrmConfig(db.url, entities, 2));
    try {
      const mine = migrationsList.findIndex((x) => x.name === 'Migration20261130100000_invoice_parties');
      expect(mine).toBeGreaterThan(0);
      await orm.getMigrator().up({ to: migrationsList[mine - 1].name });
      const sql = (q: string, p: unknown[] = []) => orm.em.getConnection().execute<any[]>(q, p);
      const [withSac, noSac, customer, plainCustomer, gone] = [
        crypto.randomUUID(),
        crypto.randomUUID(),
        crypto.randomUUID(),
        crypto.randomUUID(),
        crypto.randomUUID(),
      ];
      await sql(
        `insert into merchants (id, name, gstin, state_code, sac_code, address) values (?, 'Old Name Ltd', '29AAGCB7383J1Z4', '29', '998314', 'MG Road, Bengaluru'), (?, 'Plain Co', null, '07', null, null)`,
        [withSac, noSac],
      );
      await sql(
        `insert into customers (id, merchant_id, mode, email, name, state_code, gstin) values (?, ?, 'test', 'c@example.com', 'Asha', '27', null), (?, ?, 'test', 'p@example.com', null, '27', null)`,
        [customer, withSac, plainCustomer, noSac],
      );
      const insert = (
        id: string,
        merchant: string,
        cust: string,
        number: string,
        supplierGstin: string | null,
        customerGstin: string | null,
        lines: unknown[],
      ) =>
        sql(
          `insert into invoices (id, merchant_id, mode, type, number, billing_reason, status, customer_id, currency, subtotal, total, amount_due,
                                 supplier_gstin, customer_gstin, place_of_supply, line_items, issued_at)
           values (?, ?, 'test', 'invoice', ?, 'one_time', 'paid', ?, 'INR', 100, 118, 0, ?, ?, '27', ?::jsonb, now())`,
          [id, merchant, number, cust, supplierGstin, customerGstin, JSON.stringify(lines)],
        );
      const line = (over: Record<string, unknown>) => ({
        description: 'x',
        quantity: 1,
        unitAmount: 100,
        amount: 100,
        proration: false,
        cgstAmount: 0,
        sgstAmount: 0,
        igstAmount: 18,
        ...over,
      });
      const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
      const noKey = line({});
      await insert(a, withSac, customer, 'TINV-2627-000001', '29AAGCB7383J1Z4', RECIPIENT, [
        noKey,
        line({ hsnSac: null }),
        line({ hsnSac: '9983' }),
      ]);
      await insert(b, noSac, plainCustomer, 'TINV-2627-000001', null, null, [line({})]);
      await insert(c, withSac, gone, 'TINV-2627-000002', '29AAGCB7383J1Z4', null, [line({ hsnSac: '998314' })]);

      await orm.getMigrator().up();
      const got = new Map(
        (await sql('select id, supplier, recipient, line_items from invoices')).map((r) => [r.id, r]),
      );
      expect(got.get(a)).toMatchObject({
        supplier: { name: 'Old Name Ltd', gstin: '29AAGCB7383J1Z4', stateCode: '29', address: 'MG Road, Bengaluru' },
        // The document's own GSTIN (and its state) wins over the record's; the name and e-mail are the record's now.
        recipient: {
          name: 'Asha',
          email: 'c@example.com',
          gstin: RECIPIENT,
          stateCode: RECIPIENT.slice(0, 2),
          address: null,
        },
      });
      expect(got.get(a).line_items.map((l: any) => l.hsnSac)).toEqual(['998314', '998314', '9983']);
      expect(got.get(a).line_items[0]).toEqual({ ...noKey, hsnSac: '998314' });
      expect(got.get(b)).toMatchObject({
        supplier: { name: 'Plain Co', gstin: null, stateCode: '07', address: null },
        recipient: { name: null, email: 'p@example.com', gstin: null, stateCode: '27', address: null },
      });
      // The key is there, null: the merchant has no SAC.
      expect(got.get(b).line_items[0]).toHaveProperty('hsnSac', null);
      expect(got.get(c).recipient).toEqual({ name: null, email: null, gstin: null, stateCode: null, address: null });
      const [cols] = await sql(
        `select count(*)::int as n from information_schema.columns where table_name = 'invoices' and column_name in ('supplier', 'recipient') and is_nullable = 'NO'`,
      );
      expect(cols.n).toBe(2);
    } finally {
      await orm.close(true);
      await db.drop();
    }
  });
});

/**
 * GST e-invoicing (docs/india.md, "E-invoicing"), through the real API, both gateways, the sandbox's invoice
 * registration portal (src/gateways/sandbox/irp.ts) and the test clock: a merchant with e-invoicing on has each INR
 * invoice and credit note to a recipient with a GSTIN registered at issue (IRN by its formula, acknowledgement, a
 * signed QR that verifies against the portal's published key, printed on the PDF); a portal that fails is retried and
 * then leaves the document `failed` and visible, and `retry` sends it again; a refusal fails at once; an IRN is
 * cancelled only within 24 hours (merchant time).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { compactVerify, createLocalJWKSet } from 'jose';
import QRCode from 'qrcode';
import { gstinCheckCharacter } from '../../src/core/gstin';
import { TestMerchant, useHarness } from '../harness';
import { useSandboxFaults } from '../harness/faults';
import { eventually } from '../harness/wait';
import { connect, createPayment, pay, PROVIDERS } from '../payments/helpers';
import { ok } from '../subscriptions/helpers';
import { pdfText } from './pdf-text';

// A failing portal is retried 200 ms apart at first and given up after 4 s.
const h = useHarness({ gatewayCommandFirstRetryMs: 200, gatewayCommandRetrySeconds: 4 });
jest.setTimeout(120_000);
const HOUR = 3600;

const gstin = (first14: string) => first14 + gstinCheckCharacter(first14);
const SUPPLIER = gstin('29AAACC1206D1Z');
const RECIPIENT = gstin('27AAPFU0939F1Z');

const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

const faults = useSandboxFaults(h);
const fault = faults.fault;

/** The IRN by its definition, worked out here on its own. */
function expectedIrn(doc: any): string {
  const ist = new Date(new Date(doc.issued_at).getTime() + 5.5 * 3600_000);
  const fy = ist.getUTCMonth() >= 3 ? ist.getUTCFullYear() : ist.getUTCFullYear() - 1;
  const type = doc.type === 'credit_note' ? 'CRN' : 'INV';
  return crypto
    .createHash('sha256')
    .update(`${SUPPLIER}/${fy}-${String((fy + 1) % 100).padStart(2, '0')}/${type}/${doc.number}`)
    .digest('hex');
}

async function eInvoicingMerchant(): Promise<TestMerchant> {
  const m = await h.merchant();
  await ok(m.test.post('/merchant/tax-settings', { gstin: SUPPLIER, sac_code: '998314', e_invoicing: true }));
  return m;
}

async function customer(m: TestMerchant, withGstin = true): Promise<any> {
  const email = `buyer-${crypto.randomBytes(4).toString('hex')}@example.com`;
  return ok(
    m.test.post('/customers', { email, name: 'Unicorn Traders', ...(withGstin ? { gstin: RECIPIENT } : {}) }),
    201,
  );
}

/** A paid one-time payment's invoice. */
async function paidInvoice(m: TestMerchant, customerId: string, email: string): Promise<any> {
  const payment = await createPayment(m.test, { customer_id: customerId, customer_email: email, amount: 49900 });
  await pay(m.test, payment);
  return eventually(async () => {
    const list = await ok(m.test.get(`/invoices?customer_id=${customerId}&type=invoice`));
    return list.data.find((i: any) => i.payment_id === payment.id);
  });
}

const documentOf = (m: TestMerchant, id: string) => ok(m.test.get(`/invoices/${id}`));

function statusIs(m: TestMerchant, id: string, status: string, timeoutMs = 15_000): Promise<any> {
  return eventually(
    async () => {
      const doc = await documentOf(m, id);
      return doc.e_invoice_status === status && doc;
    },
    timeoutMs,
    `e_invoice_status ${status}`,
  );
}

const eventTypes = async (m: TestMerchant, documentId: string) =>
  (
    await sql<{ type: string }>(
      `select type from outbox_events where merchant_id = ? and payload->'data'->'object'->>'id' = ? order by id`,
      [m.id, documentId],
    )
  ).map((r) => r.type);

async function pdfOf(m: TestMerchant, id: string): Promise<Buffer> {
  const res = await fetch(`${h.app.url}/v1/invoices/${id}/pdf`, {
    headers: { authorization: `Bearer ${m.keys.test}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/** The images of a PDF as poppler's pdfimages lists them: width and height in pixels. */
async function pdfImages(bytes: Buffer): Promise<{ width: number; height: number }[]> {
  const file = path.join(os.tmpdir(), `cadence-einv-${crypto.randomBytes(6).toString('hex')}.pdf`);
  fs.writeFileSync(file, bytes);
  try {
    const { stdout } = await promisify(execFile)('pdfimages', ['-list', file]);
    return stdout
      .split('\n')
      .slice(2)
      .filter((l) => l.trim())
      .map((l) => l.trim().split(/\s+/))
      .filter((cols) => cols[2] === 'image') // not the transparency mask that comes with a PNG
      .map((cols) => ({ width: Number(cols[3]), height: Number(cols[4]) }));
  } finally {
    fs.rmSync(file, { force: true });
  }
}

async function portalKeys() {
  const res = await fetch(`${h.app.app.sandboxUrl}/irp/v1/jwks.json`);
  expect(res.status).toBe(200);
  return (await res.json()) as { keys: { kid: string; alg: string }[] };
}

describe.each(PROVIDERS)('e-invoices registered at issue (%s)', (provider) => {
  let m: TestMerchant;
  let buyer: any;
  let invoice: any;

  beforeAll(async () => {
    m = await eInvoicingMerchant();
    await connect(m.test, provider);
    buyer = await customer(m);
    invoice = await paidInvoice(m, buyer.id, buyer.email);
  });

  it('registers the invoice: the IRN by its formula, a 15-digit acknowledgement at merchant time, the event', async () => {
    const doc = await statusIs(m, invoice.id, 'registered');
    expect(doc.irn).toMatch(/^[0-9a-f]{64}$/);
    expect(doc.irn).toBe(expectedIrn(doc));
    expect(doc.ack_no).toMatch(/^\d{15}$/);
    const clock = await h.clock.now(m);
    expect(Math.abs(new Date(doc.ack_date).getTime() - clock.getTime())).toBeLessThan(60_000);
    expect(doc.e_invoice_error).toBeNull();
    expect(await eventTypes(m, doc.id)).toEqual(expect.arrayContaining(['invoice.created', 'e_invoice.registered']));
    // The document itself is as issued: its figures did not move.
    for (const k of ['number', 'total', 'subtotal', 'tax_amount', 'issued_at'] as const)
      expect(doc[k]).toEqual(invoice[k]);
  });

  it("signs the QR with the portal's published key; its payload names the document", async () => {
    const doc = await statusIs(m, invoice.id, 'registered');
    const jwks = await portalKeys();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0].alg).toBe('RS256');
    const { payload, protectedHeader } = await compactVerify(doc.signed_qr, createLocalJWKSet(jwks as any));
    expect(protectedHeader.kid).toBe(jwks.keys[0].kid);
    const claims = JSON.parse(new TextDecoder().decode(payload));
    expect(claims.iss).toBe('NIC');
    const data = JSON.parse(claims.data);
    expect(data).toMatchObject({
      SellerGstin: SUPPLIER,
      BuyerGstin: RECIPIENT,
      DocNo: doc.number,
      DocTyp: 'INV',
      Irn: doc.irn,
      TotInvVal: `${Math.trunc(doc.total / 100)}.${String(doc.total % 100).padStart(2, '0')}`,
      ItemCnt: doc.line_items.length,
      MainHsnCode: '998314',
    });
    // A QR signed with another key does not verify.
    const [head, body, sig] = doc.signed_qr.split('.');
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...claims, data: '{}' })).toString('base64url')}.${sig}`;
    await expect(compactVerify(forged, createLocalJWKSet(jwks as any))).rejects.toThrow();
    void body;
  });

  it('prints the IRN, the acknowledgement and the signed QR as a QR code on the PDF', async () => {
    const doc = await statusIs(m, invoice.id, 'registered');
    const bytes = await pdfOf(m, doc.id);
    const text = await pdfText(bytes);
    expect(text).toContain(doc.irn);
    expect(text).toMatch(new RegExp(`Ack\\. no\\.\\s+${doc.ack_no}`));
    const images = await pdfImages(bytes);
    expect(images).toHaveLength(1);
    // The image is the QR code of signed_qr: its side is that code's modules (plus the margin) at 4 pixels each.
    const modules = QRCode.create(doc.signed_qr, { errorCorrectionLevel: 'M' }).modules.size;
    expect(images[0]).toEqual({ width: (modules + 2) * 4, height: (modules + 2) * 4 });
  });

  it('registers the credit note of a refund as CRN', async () => {
    await ok(m.test.post(`/payments/${invoice.payment_id}/refund`, {}), 201);
    const note = await eventually(async () => {
      const list = await ok(m.test.get(`/invoices?customer_id=${buyer.id}&type=credit_note`));
      return list.data[0];
    });
    const doc = await statusIs(m, note.id, 'registered');
    expect(doc.irn).toBe(expectedIrn(doc));
    expect(doc.irn).not.toBe((await documentOf(m, invoice.id)).irn);
  });
});

describe('what is not an e-invoice', () => {
  it('leaves documents to recipients without a GSTIN, and merchants with e-invoicing off, unregistered', async () => {
    const m = await eInvoicingMerchant();
    await connect(m.test, 'stripe');
    const consumer = await customer(m, false);
    const b2c = await paidInvoice(m, consumer.id, consumer.email);
    const off = await h.merchant();
    await ok(off.test.post('/merchant/tax-settings', { gstin: SUPPLIER, sac_code: '998314' }));
    await connect(off.test, 'stripe');
    const business = await customer(off);
    const offInvoice = await paidInvoice(off, business.id, business.email);
    for (const [owner, doc] of [
      [m, b2c],
      [off, offInvoice],
    ] as const) {
      const now = await documentOf(owner, doc.id);
      expect(now.e_invoice_status).toBeNull();
      expect(now.irn).toBeNull();
    }
    const [{ n }] = await sql<{ n: string }>(
      `select count(*) as n from gateway_commands where merchant_id in (?, ?) and action = 'register_e_invoice'`,
      [m.id, off.id],
    );
    expect(Number(n)).toBe(0);
  });

  it("needs the merchant's GSTIN and SAC to turn e-invoicing on (400, nothing changed)", async () => {
    const m = await h.merchant();
    const r = await m.test.post('/merchant/tax-settings', { e_invoicing: true });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'parameter_invalid', param: 'e_invoicing' });
    const bad = await m.test.post('/merchant/tax-settings', {
      gstin: SUPPLIER,
      sac_code: '998314',
      e_invoicing: 'yes',
    });
    expect(bad.status).toBe(400);
    const got = await h.graphql(m.keys.test, '{ merchant { eInvoicing gstin } }');
    expect(got.body.data.merchant).toEqual({ eInvoicing: false, gstin: null });
    const on = await ok(
      m.test.post('/merchant/tax-settings', { gstin: SUPPLIER, sac_code: '998314', e_invoicing: true }),
    );
    expect(on.e_invoicing).toBe(true);
  });
});

describe('a portal that fails, or refuses', () => {
  it('retries, then leaves the document failed and visible; retry registers it; a second retry is refused', async () => {
    const m = await eInvoicingMerchant();
    await connect(m.test, 'razorpay');
    const buyer = await customer(m);
    await fault({ method: 'POST', path: '/irp/v1/einvoices', times: 1000, kind: 'error' });
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    expect((await documentOf(m, invoice.id)).e_invoice_status).toBe('pending');
    const failed = await statusIs(m, invoice.id, 'failed', 30_000);
    expect(failed.e_invoice_error).toMatch(/500/);
    expect(failed.irn).toBeNull();
    expect(await eventTypes(m, invoice.id)).toContain('e_invoice.failed');
    const [cmd] = await sql<{ status: string; attempts: number; connection_id: string | null }>(
      `select status, attempts, connection_id from gateway_commands where invoice_id = ? and action = 'register_e_invoice'`,
      [invoice.id],
    );
    expect(cmd.status).toBe('failed');
    expect(cmd.attempts).toBeGreaterThan(1);
    expect(cmd.connection_id).toBeNull();
    // The document stands as issued.
    expect(failed.number).toBe(invoice.number);
    expect(failed.total).toBe(invoice.total);

    await faults.clear();
    const again = await ok(m.test.post(`/invoices/${invoice.id}/e-invoice/retry`, {}));
    expect(again.e_invoice_status).toBe('pending');
    const doc = await statusIs(m, invoice.id, 'registered');
    expect(doc.irn).toBe(expectedIrn(doc));
    expect(doc.e_invoice_error).toBeNull();
    const twice = await m.test.post(`/invoices/${invoice.id}/e-invoice/retry`, {});
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe('invalid_state_transition');
  });

  it("a refusal (the recipient is the supplier) fails the registration at once, with the portal's reason", async () => {
    const m = await eInvoicingMerchant();
    await connect(m.test, 'stripe');
    const email = `self-${crypto.randomBytes(4).toString('hex')}@example.com`;
    const self = await ok(m.test.post('/customers', { email, name: 'Ourselves', gstin: SUPPLIER }), 201);
    const invoice = await paidInvoice(m, self.id, email);
    const failed = await statusIs(m, invoice.id, 'failed', 10_000);
    expect(failed.e_invoice_error).toMatch(/2212/);
    const [cmd] = await sql<{ attempts: number }>(`select attempts from gateway_commands where invoice_id = ?`, [
      invoice.id,
    ]);
    expect(cmd.attempts).toBe(1);
  });

  it('one registration at the portal however often the command runs (the portal answers a document it has)', async () => {
    const m = await eInvoicingMerchant();
    await connect(m.test, 'stripe');
    const buyer = await customer(m);
    // The portal registers the first attempt and its answer is lost: the retry gets the same registration.
    await fault({ method: 'POST', path: '/irp/v1/einvoices', times: 1, kind: 'lost' });
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    const doc = await statusIs(m, invoice.id, 'registered', 30_000);
    const stored = await sql<{ ack_no: string }>(`select ack_no::text from sandbox_irp_documents where irn = ?`, [
      doc.irn,
    ]);
    expect(stored).toEqual([{ ack_no: doc.ack_no }]);
  });
});

describe('cancelling an IRN', () => {
  let m: TestMerchant;
  let other: TestMerchant;
  let buyer: any;

  beforeAll(async () => {
    m = await eInvoicingMerchant();
    other = await eInvoicingMerchant();
    await connect(m.test, 'stripe');
    buyer = await customer(m);
  });

  it('within 24 hours: cancelled at the portal, recorded once, printed; asked again, the same answer', async () => {
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    await statusIs(m, invoice.id, 'registered');
    const bad = await m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'mistake' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('reason');
    const foreign = await other.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'duplicate' });
    expect(foreign.status).toBe(404);
    expect((await documentOf(m, invoice.id)).e_invoice_status).toBe('registered');

    await h.clock.advance(m, 23 * HOUR);
    const cancelled = await ok(
      m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'data_entry_mistake', remark: 'Wrong buyer' }),
    );
    expect(cancelled.e_invoice_status).toBe('cancelled');
    expect(cancelled.irn).toMatch(/^[0-9a-f]{64}$/);
    const clock = await h.clock.now(m);
    expect(Math.abs(new Date(cancelled.e_invoice_cancelled_at).getTime() - clock.getTime())).toBeLessThan(60_000);
    const [portal] = await sql<{ status: string }>(`select status from sandbox_irp_documents where irn = ?`, [
      cancelled.irn,
    ]);
    expect(portal.status).toBe('CNL');
    const again = await ok(m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'other' }));
    expect(again.e_invoice_cancelled_at).toBe(cancelled.e_invoice_cancelled_at);
    expect((await eventTypes(m, invoice.id)).filter((t) => t === 'e_invoice.cancelled')).toHaveLength(1);
    expect(await pdfText(await pdfOf(m, invoice.id))).toMatch(/IRN cancelled/);
    // The document stands: its number and figures are those it was issued with.
    expect(cancelled.number).toBe(invoice.number);
    expect(cancelled.total).toBe(invoice.total);
  });

  it('two cancellations racing: both answer cancelled, one cancellation recorded and one event', async () => {
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    await statusIs(m, invoice.id, 'registered');
    const answers = await Promise.all(
      [0, 1, 2].map(() => m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'duplicate' })),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.e_invoice_cancelled_at)).size).toBe(1);
    expect((await eventTypes(m, invoice.id)).filter((t) => t === 'e_invoice.cancelled')).toHaveLength(1);
  });

  it('after 24 hours (merchant time): 409 e_invoice_not_cancellable, nothing changed here or at the portal', async () => {
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    const doc = await statusIs(m, invoice.id, 'registered');
    await h.clock.advance(m, 25 * HOUR);
    const late = await m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'duplicate' });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('e_invoice_not_cancellable');
    expect((await documentOf(m, invoice.id)).e_invoice_status).toBe('registered');
    const [portal] = await sql<{ status: string }>(`select status from sandbox_irp_documents where irn = ?`, [doc.irn]);
    expect(portal.status).toBe('ACT');
  });

  it('the portal itself refuses a late cancellation (its own 24 hours, on the clock it is told)', async () => {
    const invoice = await paidInvoice(m, buyer.id, buyer.email);
    const doc = await statusIs(m, invoice.id, 'registered');
    const late = new Date(new Date(doc.ack_date).getTime() + 25 * HOUR * 1000);
    const res = await fetch(`${h.app.app.sandboxUrl}/irp/v1/einvoices/${doc.irn}/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', gstin: SUPPLIER, 'sandbox-clock': late.toISOString() },
      body: JSON.stringify({ Irn: doc.irn, CnlRsn: '1', CnlRem: 'late' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).ErrorDetails[0].ErrorCode).toBe('2270');
    // Another supplier cannot read or cancel it.
    const foreign = await fetch(`${h.app.app.sandboxUrl}/irp/v1/einvoices/${doc.irn}`, {
      headers: { gstin: RECIPIENT },
    });
    expect(((await foreign.json()) as any).ErrorDetails[0].ErrorCode).toBe('2283');
  });

  it('a document that is not a registered e-invoice cannot be cancelled', async () => {
    const consumer = await customer(m, false);
    const invoice = await paidInvoice(m, consumer.id, consumer.email);
    const r = await m.test.post(`/invoices/${invoice.id}/e-invoice/cancel`, { reason: 'duplicate' });
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('e_invoice_not_cancellable');
    const retry = await m.test.post(`/invoices/${invoice.id}/e-invoice/retry`, {});
    expect(retry.status).toBe(409);
  });
});

describe("the portal's key", () => {
  it('is made once per database: the same after the sandbox restarts', async () => {
    const before = await portalKeys();
    await h.sandbox.stop();
    await h.sandbox.start();
    expect(await portalKeys()).toEqual(before);
    const pem = await fetch(`${h.app.app.sandboxUrl}/irp/v1/public-key.pem`);
    expect(await pem.text()).toMatch(/^-----BEGIN PUBLIC KEY-----/);
  });
});

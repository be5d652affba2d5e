import express, { NextFunction, Request, Response, Router } from 'express';
import {
  calculateJwkThumbprint,
  CompactSign,
  exportJWK,
  exportPKCS8,
  exportSPKI,
  generateKeyPair,
  importJWK,
  importPKCS8,
  JWK,
} from 'jose';
import type { KeyLike } from 'jose';
import type { Pool } from 'pg';
import { EInvoiceDocType, irnOf } from '../../core/irn';
import { logger } from '../../core/logger';
import { bodyChecks } from './http';
import type { SecretBox } from './sealed';

/**
 * The sandbox's invoice registration portal (docs/sandbox.md, "Invoice registration portal"), at /irp/v1. It takes
 * documents in the NIC e-invoice schema's names, checks what the portal checks that a test can trip (the supplier's
 * GSTIN against the caller's, GSTIN formats, document type, number and date, the items' values against the totals),
 * and answers the registration: the IRN (SHA-256 of supplier GSTIN / financial year / type / number), a 15-digit
 * acknowledgement number and time, and the signed QR code, a compact JWS (RS256) whose payload is the portal's
 * `{ data, iss: "NIC" }`, signed with a key it makes once per database and publishes at /irp/v1/jwks.json (and as PEM at
 * /irp/v1/public-key.pem). A document registered before answers its registration again. An IRN is cancelled within 24
 * hours of its acknowledgement, later refused with the portal's code 2270.
 *
 * Not the portal's transport: no session token and no payload encryption; the caller names its GSTIN in the `gstin`
 * header. Test-mode extension: a `sandbox-clock` header (an ISO time) is the portal's "now" for that request, so
 * acknowledgements and the cancellation window follow a merchant's test clock.
 */

const ALG = 'RS256';
const CANCEL_WINDOW_MS = 24 * 3_600_000;
const GSTIN = /^\d{2}[A-Z]{5}\d{4}[A-Z][1-9A-Z]Z[0-9A-Z]$/;
const AMOUNT = /^-?\d{1,13}\.\d{2}$/;
const DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;
const IST_OFFSET_MS = (5 * 60 + 30) * 60_000;

interface SigningKey {
  kid: string;
  privateKey: KeyLike;
  publicJwk: JWK;
}

interface StoredDocument {
  irn: string;
  supplier_gstin: string;
  ack_no: string;
  ack_date: Date;
  signed_qr: string;
  status: 'ACT' | 'CNL';
  cancelled_at: Date | null;
}

/** A refusal in the portal's shape: `{ Status: 0, ErrorDetails: [{ ErrorCode, ErrorMessage }] }`. */
class IrpError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function irpRouter(pool: Pool, secrets: SecretBox): Router {
  let key: Promise<SigningKey> | null = null;
  const signingKey = () => {
    key ??= loadSigningKey(pool, secrets).catch((err) => {
      key = null; // the next request tries again
      throw err;
    });
    return key;
  };
  const r = express.Router();
  r.get('/jwks.json', async (_req, res, next) => {
    try {
      const k = await signingKey();
      res.json({ keys: [{ ...k.publicJwk, kid: k.kid, alg: ALG, use: 'sig' }] });
    } catch (err) {
      next(err);
    }
  });
  r.get('/public-key.pem', async (_req, res, next) => {
    try {
      const k = await signingKey();
      res.type('application/x-pem-file').send(await exportSPKI((await importJWK(k.publicJwk, ALG)) as KeyLike));
    } catch (err) {
      next(err);
    }
  });
  r.use(express.json({ limit: '1mb' }), bodyChecks);
  r.post('/einvoices', (req, res, next) => answer(res, next, () => register(pool, signingKey, req)));
  r.get('/einvoices/:irn', (req, res, next) =>
    answer(res, next, async () => details(await stored(pool, String(req.params.irn), callerGstin(req)))),
  );
  r.post('/einvoices/:irn/cancel', (req, res, next) => answer(res, next, () => cancel(pool, req)));
  return r;
}

async function answer(res: Response, next: NextFunction, work: () => Promise<Record<string, unknown>>) {
  try {
    res.json({ Status: 1, Data: await work() });
  } catch (err) {
    if (err instanceof IrpError) {
      res.status(400).json({ Status: 0, ErrorDetails: [{ ErrorCode: err.code, ErrorMessage: err.message }] });
      return;
    }
    next(err);
  }
}

/** The request's "now": the `sandbox-clock` header's time when given (test clocks), else the wall clock. */
function nowOf(req: Request): Date {
  const header = req.header('sandbox-clock');
  const at = header ? new Date(header) : new Date();
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

function callerGstin(req: Request): string {
  const gstin = req.header('gstin') ?? '';
  if (!GSTIN.test(gstin)) throw new IrpError('1005', 'Invalid Token: the gstin header names no valid GSTIN.');
  return gstin;
}

/** `YYYY-MM-DD HH:mm:ss` in IST, the portal's times. */
function istTime(at: Date): string {
  return new Date(at.getTime() + IST_OFFSET_MS).toISOString().slice(0, 19).replace('T', ' ');
}

/** "499.00" -> 49900, or a refusal naming the field. */
function paise(value: unknown, field: string): number {
  if (typeof value !== 'string' || !AMOUNT.test(value))
    throw new IrpError('2172', `${field} must be an amount with two decimals, as a string.`);
  const negative = value.startsWith('-');
  const [whole, fraction] = value.replace('-', '').split('.');
  const n = Number(whole) * 100 + Number(fraction);
  return negative ? -n : n;
}

async function register(
  pool: Pool,
  signingKey: () => Promise<SigningKey>,
  req: Request,
): Promise<Record<string, unknown>> {
  const gstin = callerGstin(req);
  const body = req.body as Record<string, any>;
  const doc = body.DocDtls ?? {};
  const seller = body.SellerDtls ?? {};
  const buyer = body.BuyerDtls ?? {};
  if (seller.Gstin !== gstin)
    throw new IrpError('2211', "The supplier's GSTIN is not the GSTIN the request is made for.");
  if (typeof buyer.Gstin !== 'string' || !GSTIN.test(buyer.Gstin))
    throw new IrpError('3028', "The recipient's GSTIN is not a valid GSTIN.");
  if (buyer.Gstin === seller.Gstin) throw new IrpError('2212', 'The recipient GSTIN cannot be the supplier GSTIN.');
  const type = doc.Typ as EInvoiceDocType;
  if (type !== 'INV' && type !== 'CRN') throw new IrpError('2176', 'DocDtls.Typ must be INV or CRN.');
  if (typeof doc.No !== 'string' || !/^[A-Za-z1-9][A-Za-z0-9/-]{0,15}$/.test(doc.No))
    throw new IrpError('2177', 'DocDtls.No must be 1 to 16 letters, digits, / or -, not starting with 0, / or -.');
  const date = typeof doc.Dt === 'string' ? DATE.exec(doc.Dt) : null;
  if (!date) throw new IrpError('2178', 'DocDtls.Dt must be DD/MM/YYYY.');
  const now = nowOf(req);
  const [day, month, year] = [Number(date[1]), Number(date[2]), Number(date[3])];
  if (Date.UTC(year, month - 1, day) - IST_OFFSET_MS > now.getTime())
    throw new IrpError('2179', 'The document date cannot be later than today.');
  const items = Array.isArray(body.ItemList) ? (body.ItemList as Record<string, unknown>[]) : [];
  if (!items.length) throw new IrpError('2180', 'ItemList must have at least one item.');
  const sums = { AssVal: 0, CgstVal: 0, SgstVal: 0, IgstVal: 0 };
  items.forEach((item, i) => {
    if (typeof item.HsnCd !== 'string' || !/^\d{4,8}$/.test(item.HsnCd))
      throw new IrpError('2181', `ItemList[${i}].HsnCd must be an HSN or SAC code of 4 to 8 digits.`);
    sums.AssVal += paise(item.AssAmt, `ItemList[${i}].AssAmt`);
    sums.CgstVal += paise(item.CgstAmt, `ItemList[${i}].CgstAmt`);
    sums.SgstVal += paise(item.SgstAmt, `ItemList[${i}].SgstAmt`);
    sums.IgstVal += paise(item.IgstAmt, `ItemList[${i}].IgstAmt`);
  });
  const values = body.ValDtls ?? {};
  for (const [field, sum] of Object.entries(sums)) {
    if (paise(values[field], `ValDtls.${field}`) !== sum)
      throw new IrpError('2182', `ValDtls.${field} is not the sum of the items' values.`);
  }
  const total = paise(values.TotInvVal, 'ValDtls.TotInvVal');
  if (total !== sums.AssVal + sums.CgstVal + sums.SgstVal + sums.IgstVal)
    throw new IrpError('2183', 'ValDtls.TotInvVal is not the assessable value plus the taxes.');

  const fy = month >= 4 ? year : year - 1;
  const irn = irnOf(gstin, fy, type, doc.No);
  const before = await stored(pool, irn, gstin).catch(() => null);
  if (before) return { ...details(before), InfoDtls: [{ InfCd: 'DUPIRN', Desc: 'Duplicate IRN' }] };

  const { kid, privateKey } = await signingKey();
  const ackDate = now;
  const { rows } = await pool.query<{ ack_no: string }>(`select nextval('sandbox_irp_ack_numbers')::text as ack_no`);
  const ackNo = rows[0].ack_no;
  const qrData = {
    SellerGstin: gstin,
    BuyerGstin: buyer.Gstin,
    DocNo: doc.No,
    DocTyp: type,
    DocDt: doc.Dt,
    TotInvVal: values.TotInvVal,
    ItemCnt: items.length,
    MainHsnCode: items[0].HsnCd,
    Irn: irn,
    IrnDt: istTime(ackDate),
  };
  const signedQr = await new CompactSign(
    new TextEncoder().encode(JSON.stringify({ data: JSON.stringify(qrData), iss: 'NIC' })),
  )
    .setProtectedHeader({ alg: ALG, kid, typ: 'JWT' })
    .sign(privateKey);
  // Two registrations of one document racing: the first insert wins, and both answer its registration.
  await pool.query(
    `insert into sandbox_irp_documents (irn, supplier_gstin, doc_type, doc_no, ack_no, ack_date, signed_qr)
     values ($1, $2, $3, $4, $5, $6, $7) on conflict (irn) do nothing`,
    [irn, gstin, type, doc.No, ackNo, ackDate, signedQr],
  );
  return details(await stored(pool, irn, gstin));
}

async function stored(pool: Pool, irn: string, gstin: string): Promise<StoredDocument> {
  const { rows } = await pool.query<StoredDocument>(
    `select irn, supplier_gstin, ack_no::text as ack_no, ack_date, signed_qr, status, cancelled_at
     from sandbox_irp_documents where irn = $1`,
    [irn],
  );
  const row = rows[0];
  // Another supplier's document is as unknown as none.
  if (!row || row.supplier_gstin !== gstin) throw new IrpError('2283', 'IRN details are not found.');
  return row;
}

function details(row: StoredDocument): Record<string, unknown> {
  return {
    AckNo: row.ack_no,
    AckDt: istTime(row.ack_date),
    Irn: row.irn,
    SignedQRCode: row.signed_qr,
    Status: row.status,
    ...(row.cancelled_at ? { CancelDate: istTime(row.cancelled_at) } : {}),
  };
}

async function cancel(pool: Pool, req: Request): Promise<Record<string, unknown>> {
  const gstin = callerGstin(req);
  const irn = String(req.params.irn);
  const reason = (req.body as Record<string, unknown>).CnlRsn;
  if (reason !== '1' && reason !== '2' && reason !== '3' && reason !== '4')
    throw new IrpError(
      '2263',
      'CnlRsn must be 1 (duplicate), 2 (data entry mistake), 3 (order cancelled) or 4 (other).',
    );
  const now = nowOf(req);
  const doc = await stored(pool, irn, gstin);
  if (doc.status === 'CNL') return { Irn: irn, CancelDate: istTime(doc.cancelled_at!) };
  if (now.getTime() - doc.ack_date.getTime() > CANCEL_WINDOW_MS)
    throw new IrpError(
      '2270',
      'The allowed cancellation time limit (24 hours) is crossed; issue a credit note instead.',
    );
  const { rows } = await pool.query<{ cancelled_at: Date }>(
    `update sandbox_irp_documents set status = 'CNL', cancelled_at = coalesce(cancelled_at, $2), cancel_reason = $3
     where irn = $1 returning cancelled_at`,
    [irn, now, reason],
  );
  return { Irn: irn, CancelDate: istTime(rows[0].cancelled_at) };
}

/**
 * The database's signing key: the one stored, or a new one stored now (the first writer wins a race, and everyone
 * signs with the key the table holds). One sealed under another ENCRYPTION_KEY is replaced, as the TLS identities are.
 */
async function loadSigningKey(pool: Pool, secrets: SecretBox): Promise<SigningKey> {
  const read = async () =>
    (
      await pool.query<{ kid: string; private_key: string; public_jwk: JWK }>(
        'select kid, private_key, public_jwk from sandbox_irp_keys order by created_at desc, kid limit 1',
      )
    ).rows[0];
  let row = await read();
  const open = async (r: NonNullable<typeof row>): Promise<SigningKey | null> => {
    try {
      return { kid: r.kid, privateKey: await importPKCS8(secrets.open(r.private_key), ALG), publicJwk: r.public_jwk };
    } catch {
      return null;
    }
  };
  const opened = row && (await open(row));
  if (opened) return opened;
  if (row) logger.warn('sandbox portal key sealed with another ENCRYPTION_KEY: replaced by a new one');
  const { publicKey, privateKey } = await generateKeyPair(ALG, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  await pool.query(
    `insert into sandbox_irp_keys (kid, private_key, public_jwk) values ($1, $2, $3) on conflict (kid) do nothing`,
    [kid, secrets.seal(await exportPKCS8(privateKey)), publicJwk],
  );
  row = await read();
  return (row && (await open(row))) ?? { kid, privateKey, publicJwk };
}

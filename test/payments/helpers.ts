import crypto from 'node:crypto';
import Stripe from 'stripe';
import { Client_, request, TestApp } from '../harness/app';
import { submitCheckout } from '../harness/checkout';

/** Shared by the payment tests: gateway connections, payments, checkout completion, signed gateway events. */

export type ProviderName = 'stripe' | 'razorpay';
export const PROVIDERS: ProviderName[] = ['stripe', 'razorpay'];

const rnd = (n = 16) => crypto.randomBytes(n).toString('hex');

export interface Connected {
  connection: any;
  /** The webhook signing secret we gave the service (so tests can sign gateway events themselves). */
  webhookSecret: string;
  credentials: Record<string, string>;
}

/** Sandbox credentials (docs/sandbox.md) for a client's mode. */
export function sandboxCredentials(provider: ProviderName, mode: 'test' | 'live'): Record<string, string> {
  return provider === 'stripe'
    ? { secret_key: `sk_${mode}_${rnd()}`, webhook_secret: `whsec_${rnd()}` }
    : { key_id: `rzp_${mode}_${rnd(7)}`, key_secret: rnd(), webhook_secret: rnd() };
}

export const modeOf = (c: Client_): 'test' | 'live' => (c.key.startsWith('sk_live_') ? 'live' : 'test');

export async function connect(
  c: Client_,
  provider: ProviderName,
  extra: Record<string, unknown> = {},
): Promise<Connected> {
  const credentials = sandboxCredentials(provider, modeOf(c));
  const r = await c.post('/providers/connections', { provider, credentials, ...extra });
  if (r.status !== 201) throw new Error(`connect ${provider} failed: ${r.status} ${r.text}`);
  return { connection: r.body, webhookSecret: credentials.webhook_secret, credentials };
}

export function paymentBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 49900,
    currency: 'INR',
    customer_email: `buyer-${rnd(4)}@example.com`,
    customer_name: 'Asha Rao',
    success_url: 'https://merchant.example/thanks?payment={PAYMENT_ID}&session={CHECKOUT_SESSION_ID}',
    cancel_url: 'https://merchant.example/cart?payment={PAYMENT_ID}',
    ...overrides,
  };
}

export async function createPayment(
  c: Client_,
  overrides: Record<string, unknown> = {},
  headers?: Record<string, string>,
) {
  const r = await c.post('/payments', paymentBody(overrides), headers);
  if (r.status !== 201) throw new Error(`create payment failed: ${r.status} ${r.text}`);
  return r.body;
}

/** The invoice of a payment, found among its customer's invoices (it exists: the payment succeeded). */
export async function invoiceOf(c: Client_, payment: any) {
  const list = await c.get(`/invoices?customer_id=${payment.customer_id}&limit=100`);
  expect(list.status).toBe(200);
  const inv = list.body.data.find((i: any) => i.payment_id === payment.id);
  expect(inv).toBeTruthy();
  return inv;
}

/** Completes a checkout and returns the payment as the service now shows it. */
export async function pay(c: Client_, payment: any, form: Record<string, string> = { outcome: 'success' }) {
  const r = await submitCheckout(payment.checkout_url, form);
  if (r.status !== 303) throw new Error(`checkout answered ${r.status}: ${r.text}`);
  const got = await c.get(`/payments/${payment.id}`);
  return { redirect: r.location!, payment: got.body };
}

const stripeSigner = new Stripe('sk_test_signer_only', { telemetry: false });

/** Headers a gateway sends with a raw event body, signed with the connection's webhook secret. */
export function signedHeaders(
  provider: ProviderName,
  secret: string,
  body: string,
  eventId: string,
): Record<string, string> {
  return provider === 'stripe'
    ? {
        'content-type': 'application/json',
        'stripe-signature': stripeSigner.webhooks.generateTestHeaderString({ payload: body, secret }),
      }
    : {
        'content-type': 'application/json',
        'x-razorpay-signature': crypto.createHmac('sha256', secret).update(body).digest('hex'),
        'x-razorpay-event-id': eventId,
      };
}

/** A signed Stripe event, as Stripe would post it. */
export function stripeEvent(secret: string, type: string, object: Record<string, unknown>, id = `evt_${rnd(12)}`) {
  const payload = JSON.stringify({
    id,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: Math.floor(Date.now() / 1000),
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
  });
  return { id, payload, headers: signedHeaders('stripe', secret, payload, id) };
}

/** A signed Razorpay event (hex HMAC-SHA256 of the raw body, X-Razorpay-Event-Id). */
export function razorpayEvent(secret: string, type: string, entities: Record<string, unknown>, id = `evt_${rnd(7)}`) {
  const payload: Record<string, { entity: unknown }> = {};
  for (const [k, v] of Object.entries(entities)) payload[k] = { entity: v };
  const body = JSON.stringify({
    entity: 'event',
    account_id: 'acc_test',
    event: type,
    contains: Object.keys(payload),
    payload,
    created_at: Math.floor(Date.now() / 1000),
  });
  return { id, payload: body, headers: signedHeaders('razorpay', secret, body, id) };
}

export function postEvent(webhookUrl: string, ev: { payload: string; headers: Record<string, string> }) {
  return request(webhookUrl, { method: 'POST', rawBody: ev.payload, headers: ev.headers });
}

/** The sandbox route that makes a refund, per provider (for its fault rules, src/gateways/sandbox/faults.ts). */
export const REFUND_ROUTE: Record<ProviderName, { method: string; path: string }> = {
  stripe: { method: 'POST', path: '/v1/refunds' },
  razorpay: { method: 'POST', path: '/razorpay/v1/payments/*/refund' },
};

/**
 * Requests a `lost` fault rule must swallow to lose one call's answer: stripe-node retries a closed connection once by
 * itself (with the same Idempotency-Key), Razorpay's SDK does not.
 */
export const LOST_TIMES: Record<ProviderName, number> = { stripe: 2, razorpay: 1 };

/** A new gateway refund id in the provider's shape. */
export const gatewayRefundId = (provider: ProviderName): string =>
  provider === 'stripe' ? `re_${rnd(8)}` : `rfnd_${rnd(7)}`;

/**
 * A signed event of a refund that succeeded, as the gateway posts it (Stripe `refund.updated`, Razorpay
 * `refund.processed`); `reference`: what the refund carries (Stripe metadata, Razorpay notes).
 */
export function refundSucceededEvent(
  provider: ProviderName,
  secret: string,
  r: { id: string; amount: number; providerPaymentId: string; reference?: Record<string, string> },
) {
  return provider === 'stripe'
    ? stripeEvent(secret, 'refund.updated', {
        id: r.id,
        object: 'refund',
        amount: r.amount,
        currency: 'inr',
        status: 'succeeded',
        payment_intent: r.providerPaymentId,
        metadata: r.reference ?? {},
      })
    : razorpayEvent(secret, 'refund.processed', {
        refund: {
          id: r.id,
          entity: 'refund',
          amount: r.amount,
          currency: 'INR',
          payment_id: r.providerPaymentId,
          status: 'processed',
          notes: r.reference ?? {},
        },
      });
}

/** Outbox rows of one merchant (optionally of one type), oldest first. */
export async function outbox(
  t: TestApp,
  merchantId: string,
  type?: string,
): Promise<{ type: string; mode: string; payload: any }[]> {
  const rows = await t.orm.em
    .getConnection()
    .execute<{ type: string; mode: string; payload: any }[]>(
      `select type, mode, payload from outbox_events where merchant_id = ? ${type ? 'and type = ?' : ''} order by id`,
      type ? [merchantId, type] : [merchantId],
    );
  return rows.map((r) => ({ ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload }));
}

export async function countRows(t: TestApp, table: string, where: string, params: unknown[]): Promise<number> {
  const [row] = await t.orm.em
    .getConnection()
    .execute<{ n: string }[]>(`select count(*)::int as n from ${table} where ${where}`, params);
  return Number(row.n);
}

/**
 * What the gateway sandbox holds for a paid payment (by its provider_payment_id): the amount it charged and the
 * amount it has refunded so far, in ISO subunits (INR: the gateway's own).
 */
export async function gatewayCharge(
  t: TestApp,
  provider: ProviderName,
  providerPaymentId: string,
): Promise<{ charged: number; refunded: number }> {
  const [row] = await t.orm.em
    .getConnection()
    .execute<{ data: any }[]>('select data from sandbox_objects where id = ?', [providerPaymentId]);
  if (!row) throw new Error(`no sandbox object ${providerPaymentId}`);
  return chargeOf(provider, typeof row.data === 'string' ? JSON.parse(row.data) : row.data);
}

/** What a sandbox payment object (`data`) says was charged and refunded, in ISO subunits. */
export function chargeOf(provider: ProviderName, d: any): { charged: number; refunded: number } {
  return provider === 'stripe'
    ? { charged: Number(d.amount_received), refunded: Number(d.latest_charge?.amount_refunded ?? 0) }
    : { charged: Number(d.amount), refunded: Number(d.amount_refunded) };
}

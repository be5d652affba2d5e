import express, { Request, Response, Router } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { fromGatewayAmount } from '../amounts';
import { formatMoney } from '../../money';
import { queueRazorpayEvent, queueStripeEvent } from './events';
import { gid, unix } from './ids';
import { authorizeRazorpaySubscription, createPayment } from './razorpay.billing';
import { CARD_ISSUERS, checkoutDecline, DEFAULT_CARD, Instrument, Method, METHODS, Outcome, OUTCOMES } from './rules';
import { SandboxObject } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { createObject, patch } from './store';
import type { PeriodUnit } from './periods';
import {
  accountOf as stripeAccountOf,
  createPaymentIntent,
  paymentMethodDetails,
  startStripeSubscription,
} from './stripe.billing';
import { bodyChecks } from './http';

/**
 * The hosted checkout page (docs/sandbox.md): GET shows a plain HTML form, POST (form or JSON) completes it. Before the
 * 303 answer the gateway's signed webhooks have been delivered and answered, so the merchant already knows.
 */

type Obj = Record<string, any>;
const CHECKOUT_TYPES = ['checkout_session', 'payment_link', 'subscription'];

export const esc = (s: unknown) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/**
 * A gateway's integer amount as the gateway's page prints it: back to ISO subunits (Stripe's own exponents differ for
 * a few currencies, src/gateways/amounts.ts), then the money kernel's formatting: "₹1,23,456.78" (Indian digit
 * grouping), "$1,234.56", "¥500", "KWD 1.500".
 */
export const money = (provider: 'stripe' | 'razorpay', amount: number, currency: string) =>
  formatMoney(fromGatewayAmount(provider, amount, currency), currency);

/** "/ month", "/ year", "every 3 months". */
const cadence = (unit: PeriodUnit, count: number) => (count === 1 ? `/ ${unit}` : `every ${count} ${unit}s`);

interface View {
  provider: 'stripe' | 'razorpay';
  /** setup: a Stripe setup-mode session, saving a payment method (a new mandate) without a charge. */
  kind: 'payment' | 'subscription' | 'setup';
  currency: string;
  description: string;
  open: boolean;
  /** What the customer pays on this page (gateway amount): a payment's amount, a subscription's first charge. */
  dueNow: number;
  /** A subscription's recurring charge (gateway amount) and its interval. */
  recurring: { amount: number; unit: PeriodUnit; count: number } | null;
  /** Whole days of free trial before the first recurring charge (0: none). */
  trialDays: number;
}

async function view(em: EntityManager, obj: SandboxObject): Promise<View> {
  const d = obj.data;
  if (obj.type === 'checkout_session') {
    const items = (obj.internal.lineItems ?? []) as Array<{ price: string; amount: number; recurring?: boolean }>;
    let recurring: View['recurring'] = null;
    const recurringItems = items.filter((i) => i.recurring);
    if (d.mode === 'subscription' && recurringItems.length) {
      // The interval is the prices' (Checkout takes recurring prices of one interval only).
      const price = await em.findOne(SandboxObject, { id: recurringItems[0].price, type: 'price' });
      const r = (price?.data.recurring ?? {}) as { interval?: PeriodUnit; interval_count?: number };
      recurring = {
        amount: recurringItems.reduce((sum, i) => sum + Number(i.amount), 0),
        unit: r.interval ?? 'month',
        count: Number(r.interval_count ?? 1),
      };
    }
    return {
      provider: 'stripe',
      kind: d.mode,
      currency: d.currency,
      description: obj.internal.description ?? '',
      open: d.status === 'open' && !obj.internal.resolved,
      dueNow: Number(d.amount_total ?? 0),
      recurring,
      trialDays: Number(obj.internal.subscriptionData?.trial_period_days ?? 0),
    };
  }
  if (obj.type === 'payment_link') {
    return {
      provider: 'razorpay',
      kind: 'payment',
      currency: d.currency,
      description: d.description ?? '',
      open: d.status === 'created',
      dueNow: Number(d.amount),
      recurring: null,
      trialDays: 0,
    };
  }
  const plan = await em.findOne(SandboxObject, { id: d.plan_id });
  const si = obj.internal;
  const trialSeconds = Number(si.trialSeconds ?? 0);
  const trialDays = trialSeconds > 0 ? Math.max(1, Math.round(trialSeconds / 86_400)) : 0;
  const planAmount = Number(si.planAmount);
  return {
    provider: 'razorpay',
    kind: 'subscription',
    currency: si.currency,
    description: plan?.data.item?.name ?? 'Subscription',
    open: d.status === 'created',
    // Without a start_at the first cycle (and the add-ons given at creation) is charged on authorisation.
    dueNow: trialDays ? 0 : planAmount + Number(si.pendingAddons ?? 0),
    recurring: { amount: planAmount, unit: si.unit ?? 'month', count: Number(si.count ?? 1) },
    trialDays,
  };
}

/** What the page says the customer pays: "₹499.00", "₹588.82 / month", "7 days free, then ₹588.82 / month". */
function priceLine(v: View): string {
  if (v.kind === 'setup') return 'Nothing is charged now';
  if (!v.recurring) return money(v.provider, v.dueNow, v.currency);
  const recurring = `${money(v.provider, v.recurring.amount, v.currency)} ${cadence(v.recurring.unit, v.recurring.count)}`;
  if (!v.trialDays) return recurring;
  return `${v.trialDays} ${v.trialDays === 1 ? 'day' : 'days'} free, then ${recurring}`;
}

function page(id: string, v: View, declined: string | null = null): string {
  const title = TITLES[v.kind];
  const dueNow = money(v.provider, v.dueNow, v.currency);
  const action =
    v.kind === 'setup'
      ? 'Authorise the new payment method'
      : v.kind === 'subscription'
        ? v.dueNow > 0
          ? `Authorise and pay ${dueNow}`
          : 'Authorise'
        : `Pay ${dueNow}`;
  // Back on the page after a declined attempt that left the checkout open (keep_open).
  const notice =
    declined && v.open
      ? `<p class="declined" role="alert">The last attempt was declined (${esc(declined)}). Try again.</p>\n`
      : '';
  const keepOpen =
    v.kind === 'subscription'
      ? `\n  <label><input type="checkbox" name="keep_open" value="true"> On a decline keep the checkout open for another try, as the real gateways do</label>`
      : '';
  const body = v.open
    ? `${notice}<form method="post" action="/checkout/${esc(id)}">
  <fieldset><legend>Outcome</legend>
    <label><input type="radio" name="outcome" value="success" checked> Success</label>
    <label><input type="radio" name="outcome" value="failure"> Failure</label>
    <label><input type="radio" name="outcome" value="cancel"> Cancel</label>
  </fieldset>
  <label>Method <select name="method">${methodsOf(v)
    .map((m) => `<option value="${m}">${METHOD_LABELS[m]}</option>`)
    .join('')}</select></label>
  <label>Bank (e-mandate; optional for a card or UPI) <select name="bank"><option value="">From the card or VPA</option>${SANDBOX_BANKS.map((b) => `<option value="${b}">${b}</option>`).join('')}</select></label>
  <label>Card number <input name="card_number" value="${DEFAULT_CARD}" inputmode="numeric" maxlength="${FORM_LIMITS.card_number}"></label>
  <label>VPA (UPI) <input name="vpa" placeholder="asha@okhdfcbank" maxlength="${FORM_LIMITS.vpa}"></label>${keepOpen}
  <p class="hint">Test cards: 4000000000000002 declined · 4000000000000341 renewals fail · 4000000000009979 stolen on first renewal · 4000000000000119 first renewal fails, then succeeds. VPAs: declined@sandbox, failure@sandbox.</p>
  <p class="hint">Banks: a card's issuer comes from its BIN (${Object.entries(CARD_ISSUERS)
    .map(([bin, bank]) => `${bin} ${bank}`)
    .join(
      ' · ',
    )}); a VPA's from its handle (@okhdfcbank HDFC · @okicici ICICI · @oksbi SBI · @okaxis AXIS · @ybl YES); an e-mandate's is the one picked.</p>
  <button type="submit">${esc(action)}</button>
</form>`
    : '<p>This checkout is no longer open.</p>';
  const dueToday = v.kind === 'subscription' ? `\n<p class="due">Due today: ${esc(dueNow)}</p>` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - ${v.provider} sandbox</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}label{display:block;margin:.6rem 0}
fieldset label{display:inline;margin-right:1rem}input,select,button{font:inherit;padding:.3rem}button{margin-top:1rem}
.amount{font-size:1.6rem;font-weight:600}.hint{color:#555;font-size:.85rem}.declined{color:#a00}.badge{background:#eee;padding:.1rem .4rem;border-radius:.3rem}</style>
</head><body>
<p><span class="badge">${esc(v.provider)} sandbox</span></p>
<h1>${title}</h1>
<p>${esc(v.description)}</p>
<p class="amount">${esc(priceLine(v))}</p>${dueToday}
${body}
</body></html>`;
}

const TITLES: Record<View['kind'], string> = {
  payment: 'Pay',
  subscription: 'Authorise subscription',
  setup: 'Authorise a new payment method',
};

const METHOD_LABELS: Record<Method, string> = {
  card: 'Card',
  upi: 'UPI autopay',
  emandate: 'e-mandate (bank account)',
};

/** The banks the page offers (any other name posted is taken as it is). */
const SANDBOX_BANKS = ['HDFC', 'ICICI', 'SBI', 'AXIS', 'KOTAK', 'YES'];

/**
 * Methods the page offers: Stripe takes cards and UPI; e-mandates (bank-account debit mandates) are Razorpay's. A
 * posted `emandate` is still accepted at a Stripe checkout, as a sandbox convenience for tests.
 */
const methodsOf = (v: View): Method[] =>
  v.provider === 'razorpay' ? METHODS : METHODS.filter((m) => m !== 'emandate');

/** Longest accepted form values. */
const FORM_LIMITS = { bank: 40, vpa: 100, card_number: 32 } as const;

class FormError extends Error {}

/** A checkbox or JSON flag: `true`, `on` or `1`. */
const flag = (v: unknown) =>
  v === true || (typeof v === 'string' && ['true', 'on', '1'].includes(v.trim().toLowerCase()));

function readForm(body: Obj): { outcome: Outcome; instrument: Instrument; keepOpen: boolean } {
  const outcome = String(body.outcome ?? '') as Outcome;
  if (!OUTCOMES.includes(outcome)) throw new FormError(`outcome must be one of ${OUTCOMES.join(', ')}`);
  const method = String(body.method || 'card') as Method;
  if (!METHODS.includes(method)) throw new FormError(`method must be one of ${METHODS.join(', ')}`);
  for (const [field, max] of Object.entries(FORM_LIMITS)) {
    if (typeof body[field] === 'string' && body[field].length > max)
      throw new FormError(`${field} must be at most ${max} characters`);
  }
  const s = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : null);
  const vpa = s(body.vpa);
  const card = s(body.card_number);
  return {
    outcome,
    keepOpen: flag(body.keep_open),
    instrument: {
      method,
      bank: s(body.bank),
      vpa: method === 'upi' || (vpa && !card) ? vpa : null,
      cardNumber: method === 'card' || (card && !vpa) ? (card ?? (method === 'card' ? DEFAULT_CARD : null)) : null,
    },
  };
}

const withSessionId = (url: string, id: string) => url.split('{CHECKOUT_SESSION_ID}').join(encodeURIComponent(id));

function addQuery(url: string, params: Record<string, string | null | undefined>): string {
  const u = new URL(url);
  for (const [k, v] of Object.entries(params)) if (v != null) u.searchParams.set(k, v);
  return u.toString();
}

interface Completion {
  redirect: string;
  events: string[];
  /** A declined attempt left the checkout open: a later submission may still complete it. */
  open?: boolean;
}

/** Back to the checkout page after a declined attempt that left it open, the decline shown. */
const declinedPage = (checkoutUrl: string, reason: string) => addQuery(checkoutUrl, { declined: reason });

/** Stripe Checkout Session, payment mode. */
function completeStripePayment(em: EntityManager, s: SandboxObject, outcome: Outcome, i: Instrument): Completion {
  const account = stripeAccountOf(s);
  const cancelUrl = s.data.cancel_url ?? s.data.success_url;
  if (outcome === 'cancel') {
    patch(s, { status: 'expired' });
    return {
      redirect: cancelUrl,
      events: [queueStripeEvent(em, account.accountKey, account.livemode, 'checkout.session.expired', s.data)],
    };
  }
  const failure = outcome === 'failure' ? 'payment_failed' : checkoutDecline(i);
  const pid = s.internal.paymentIntentData ?? {};
  const pi = createPaymentIntent(em, account, {
    amount: s.data.amount_total,
    currency: s.data.currency,
    metadata: pid.metadata ?? {},
    description: pid.description,
    customer: s.data.customer,
    instrument: i,
    failure,
  });
  if (failure) {
    // Stripe leaves the session open after a decline (the buyer may retry); the sandbox ends the visit here.
    patch(s, { payment_intent: pi.id });
    return {
      redirect: cancelUrl,
      events: [queueStripeEvent(em, account.accountKey, account.livemode, 'payment_intent.payment_failed', pi.data)],
    };
  }
  const customerId = s.data.customer ?? null;
  patch(s, {
    status: 'complete',
    payment_status: 'paid',
    payment_intent: pi.id,
    customer_details: { email: s.data.customer_email },
  });
  // The event carries the payment intent expanded (method, bank); the stored session keeps only its id.
  const eventObject = { ...s.data, customer: customerId, payment_intent: pi.data };
  return {
    redirect: withSessionId(s.data.success_url, s.id),
    events: [queueStripeEvent(em, account.accountKey, account.livemode, 'checkout.session.completed', eventObject)],
  };
}

/**
 * Stripe Checkout Session, subscription mode. A declined attempt is reported as Stripe does, by its intent's event:
 * setup_intent.setup_failed when nothing is due now (a trial), else payment_intent.payment_failed. Like Stripe's
 * (Checkout refuses payment_intent_data and setup_intent_data in this mode, and since API 2025-03-31.basil creates the
 * subscription only once a payment succeeds) the intent carries nothing of the merchant's. Then the sandbox ends the
 * visit (checkout.session.expired with the declined setup intent, docs/sandbox.md), or with keep_open leaves the
 * session open for another try, as Stripe does.
 */
async function completeStripeSubscription(
  em: EntityManager,
  s: SandboxObject,
  outcome: Outcome,
  i: Instrument,
  now: Date,
  keepOpen: boolean,
): Promise<Completion> {
  const account = stripeAccountOf(s);
  const cancelUrl = s.data.cancel_url ?? s.data.success_url;
  const failure = outcome === 'cancel' ? null : outcome === 'failure' ? 'payment_failed' : checkoutDecline(i);
  const setupIntent = {
    id: gid('seti_'),
    object: 'setup_intent',
    status: failure ? 'requires_payment_method' : outcome === 'cancel' ? 'canceled' : 'succeeded',
    usage: 'off_session',
    customer: null,
    metadata: {},
    latest_attempt: outcome === 'cancel' ? null : gid('setatt_'),
    payment_method: { id: gid('pm_'), object: 'payment_method', ...paymentMethodDetails(i) },
    last_setup_error: failure
      ? {
          type: 'card_error',
          code: failure === 'card_declined' ? 'card_declined' : failure,
          decline_code: failure === 'card_declined' ? 'generic_decline' : undefined,
          message: 'The mandate could not be authorised.',
          payment_method: { object: 'payment_method', ...paymentMethodDetails(i) },
        }
      : null,
    created: unix(now),
    livemode: account.livemode,
  };
  const events: string[] = [];
  if (failure) {
    const trial = Number(s.internal.subscriptionData?.trial_period_days ?? 0) > 0;
    if (trial) {
      events.push(
        queueStripeEvent(
          em,
          account.accountKey,
          account.livemode,
          'setup_intent.setup_failed',
          setupIntent,
          undefined,
          now,
        ),
      );
    } else {
      const pi = createPaymentIntent(em, account, {
        amount: s.data.amount_total,
        currency: s.data.currency,
        metadata: {},
        instrument: i,
        failure,
        at: now,
      });
      events.push(
        queueStripeEvent(
          em,
          account.accountKey,
          account.livemode,
          'payment_intent.payment_failed',
          pi.data,
          undefined,
          now,
        ),
      );
    }
    if (keepOpen) return { redirect: declinedPage(s.data.url, failure), events, open: true };
  }
  if (outcome === 'cancel' || failure) {
    patch(s, { status: 'expired', setup_intent: setupIntent.id });
    const eventObject = { ...s.data, setup_intent: outcome === 'cancel' ? setupIntent.id : setupIntent };
    events.push(
      queueStripeEvent(
        em,
        account.accountKey,
        account.livemode,
        'checkout.session.expired',
        eventObject,
        undefined,
        now,
      ),
    );
    return { redirect: cancelUrl, events };
  }
  const customerId = s.data.customer ?? gid('cus_', 14);
  if (!s.data.customer) {
    createObject(em, account, 'customer', {
      id: customerId,
      object: 'customer',
      email: s.data.customer_email,
      created: unix(now),
      livemode: account.livemode,
    });
  }
  const { sub, afterCompletion } = await startStripeSubscription(em, account, s, i, customerId, now);
  patch(s, {
    status: 'complete',
    payment_status: s.data.amount_total > 0 ? 'paid' : 'no_payment_required',
    subscription: sub.id,
    customer: customerId,
    setup_intent: setupIntent.id,
  });
  // The event carries the subscription expanded (as `expand: ['subscription']` would): its trial end and first period.
  const eventObject = { ...s.data, setup_intent: setupIntent, subscription: sub.data };
  events.push(
    queueStripeEvent(
      em,
      account.accountKey,
      account.livemode,
      'checkout.session.completed',
      eventObject,
      undefined,
      now,
    ),
  );
  events.push(...afterCompletion());
  return { redirect: withSessionId(s.data.success_url, s.id), events };
}

/**
 * Stripe Checkout Session, setup mode: the customer authorises a payment method for later charges (a subscription's
 * new mandate). Success saves a payment method and a succeeded setup intent (carrying the session's
 * `setup_intent_data.metadata`) and reports checkout.session.completed with the intent's id, as Stripe does; the
 * merchant then makes it the subscription's `default_payment_method`. A decline or cancel ends the visit (expired).
 */
function completeStripeSetup(em: EntityManager, s: SandboxObject, outcome: Outcome, i: Instrument, now: Date) {
  const account = stripeAccountOf(s);
  const failure = outcome === 'cancel' ? 'canceled' : outcome === 'failure' ? 'payment_failed' : checkoutDecline(i);
  if (failure) {
    patch(s, { status: 'expired' });
    const expired = queueStripeEvent(em, account.accountKey, account.livemode, 'checkout.session.expired', s.data);
    return { redirect: s.data.cancel_url ?? s.data.success_url, events: [expired] };
  }
  const base = { created: unix(now), livemode: account.livemode, customer: s.data.customer ?? null };
  const pm = createObject(
    em,
    account,
    'payment_method',
    { id: gid('pm_'), object: 'payment_method', ...paymentMethodDetails(i), ...base },
    { instrument: i },
  );
  const intent = createObject(em, account, 'setup_intent', {
    id: gid('seti_'),
    object: 'setup_intent',
    status: 'succeeded',
    usage: 'off_session',
    metadata: s.internal.setupIntentData?.metadata ?? {},
    payment_method: pm.id,
    ...base,
  });
  patch(s, { status: 'complete', payment_status: 'no_payment_required', setup_intent: intent.id });
  const completed = queueStripeEvent(em, account.accountKey, account.livemode, 'checkout.session.completed', s.data);
  return { redirect: withSessionId(s.data.success_url, s.id), events: [completed] };
}

/** Razorpay Payment Link. */
function completeRazorpayLink(em: EntityManager, link: SandboxObject, outcome: Outcome, i: Instrument): Completion {
  const account = { provider: 'razorpay' as const, accountKey: link.accountKey, livemode: false };
  const d = link.data;
  const callback = d.callback_url ? withSessionId(d.callback_url, link.id) : null;
  const cancelBase = d.notes?.cancel_url ? withSessionId(d.notes.cancel_url, link.id) : callback;
  const params = (status: string, paymentId: string | null) => ({
    razorpay_payment_id: paymentId,
    razorpay_payment_link_id: link.id,
    razorpay_payment_link_reference_id: d.reference_id ?? '',
    razorpay_payment_link_status: status,
  });
  if (outcome === 'cancel') {
    patch(link, { status: 'cancelled', cancelled_at: unix() });
    return {
      redirect: cancelBase ? addQuery(cancelBase, params('cancelled', null)) : '',
      events: [queueRazorpayEvent(em, account.accountKey, 'payment_link.cancelled', { payment_link: link.data })],
    };
  }
  const failure = outcome === 'failure' ? 'payment_failed' : checkoutDecline(i);
  const payment = createPayment(em, account, {
    amount: d.amount,
    currency: d.currency,
    notes: { ...(d.notes ?? {}), payment_link_id: link.id },
    email: d.customer?.email,
    contact: d.customer?.contact,
    instrument: i,
    failure,
    description: d.description,
  });
  if (failure) {
    // A failed attempt leaves a real link open; the sandbox closes the visit (the merchant marks it failed).
    patch(link, {}, { resolved: { outcome: 'failure' } });
    return {
      redirect: cancelBase ? addQuery(cancelBase, params('failed', payment.id)) : '',
      events: [queueRazorpayEvent(em, account.accountKey, 'payment.failed', { payment: payment.data })],
    };
  }
  const orderId = gid('order_', 14);
  const order = {
    id: orderId,
    entity: 'order',
    amount: d.amount,
    amount_paid: d.amount,
    amount_due: 0,
    currency: d.currency,
    receipt: d.reference_id,
    status: 'paid',
    created_at: unix(),
  };
  patch(payment, { order_id: orderId });
  patch(link, {
    status: 'paid',
    amount_paid: d.amount,
    order_id: orderId,
    payments: [{ payment_id: payment.id, amount: d.amount, status: 'captured', method: i.method, created_at: unix() }],
  });
  return {
    redirect: callback ? addQuery(callback, params('paid', payment.id)) : '',
    events: [
      queueRazorpayEvent(em, account.accountKey, 'payment_link.paid', {
        payment_link: link.data,
        order,
        payment: payment.data,
      }),
    ],
  };
}

/**
 * Razorpay Subscription (its short_url). Redirects to notes.success_url / notes.cancel_url. A declined authorisation
 * payment is reported as Razorpay does, by payment.failed (the payment names its subscription); then the sandbox ends
 * the visit (subscription.cancelled, docs/sandbox.md), or with keep_open leaves the subscription `created` for another
 * try, as Razorpay does.
 */
function completeRazorpaySubscription(
  em: EntityManager,
  sub: SandboxObject,
  outcome: Outcome,
  i: Instrument,
  now: Date,
  keepOpen: boolean,
): Completion {
  const account = { provider: 'razorpay' as const, accountKey: sub.accountKey, livemode: false };
  const notes = (sub.data.notes ?? {}) as Obj;
  const success = notes.success_url ? withSessionId(notes.success_url, sub.id) : '';
  const cancel = notes.cancel_url ? withSessionId(notes.cancel_url, sub.id) : success;
  const failure = outcome === 'cancel' ? null : outcome === 'failure' ? 'payment_failed' : checkoutDecline(i);
  if (outcome === 'cancel' || failure) {
    const payment = failure
      ? createPayment(em, account, {
          amount: 0,
          currency: sub.internal.currency,
          notes,
          instrument: i,
          failure,
          description: 'Mandate authorisation',
          subscriptionId: sub.id,
          at: now,
        })
      : null;
    const events = payment
      ? [queueRazorpayEvent(em, account.accountKey, 'payment.failed', { payment: payment.data }, now)]
      : [];
    if (failure && keepOpen) return { redirect: declinedPage(sub.data.short_url, failure), events, open: true };
    // Never authorised: no customer_id (the adapter reads that as a failed checkout, not a cancelled subscription).
    patch(sub, { status: 'cancelled', ended_at: unix(now), payment_method: i.method });
    sub.dueAt = null;
    events.push(
      queueRazorpayEvent(
        em,
        account.accountKey,
        'subscription.cancelled',
        { subscription: sub.data, payment: payment?.data },
        now,
      ),
    );
    return { redirect: cancel, events };
  }
  return { redirect: success, events: authorizeRazorpaySubscription(em, sub, i, now) };
}

export function checkoutRouter(sb: Sandbox): Router {
  const r = express.Router();
  r.get('/checkout/:id', async (req: Request, res: Response) => {
    const em = sb.orm.em.fork();
    const obj = await em.findOne(SandboxObject, { id: String(req.params.id), type: { $in: CHECKOUT_TYPES } });
    if (!obj) {
      res.status(404).type('text/plain').send('No such checkout');
      return;
    }
    const declined = typeof req.query.declined === 'string' ? req.query.declined.slice(0, 64) : null;
    res.type('html').send(page(obj.id, await view(em, obj), declined));
  });

  r.post(
    '/checkout/:id',
    express.urlencoded({ extended: false }),
    express.json(),
    bodyChecks,
    async (req: Request, res: Response) => {
      let form: ReturnType<typeof readForm>;
      try {
        form = readForm((req.body ?? {}) as Obj);
      } catch (err) {
        res.status(400).json({ error: { message: (err as Error).message } });
        return;
      }
      const done = await sb.tx(async (em) => {
        const obj = await em.findOne(
          SandboxObject,
          { id: String(req.params.id), type: { $in: CHECKOUT_TYPES } },
          { lockMode: LockMode.PESSIMISTIC_WRITE },
        );
        if (!obj) return null;
        const now = await sb.now(obj.accountKey);
        // A resubmitted form (back button, double click) lands where the first one did, and changes nothing.
        if (obj.internal.resolved) return { redirect: obj.internal.resolved.redirect as string, events: [] };
        if (!(await view(em, obj)).open) return { redirect: '', events: [], closed: true };
        let c: Completion;
        if (obj.type === 'checkout_session') {
          c =
            obj.data.mode === 'subscription'
              ? await completeStripeSubscription(em, obj, form.outcome, form.instrument, now, form.keepOpen)
              : obj.data.mode === 'setup'
                ? completeStripeSetup(em, obj, form.outcome, form.instrument, now)
                : completeStripePayment(em, obj, form.outcome, form.instrument);
        } else if (obj.type === 'payment_link') {
          c = completeRazorpayLink(em, obj, form.outcome, form.instrument);
        } else {
          c = completeRazorpaySubscription(em, obj, form.outcome, form.instrument, now, form.keepOpen);
        }
        // Still open after a declined attempt: the next submission is another attempt, not a resubmission.
        if (!c.open) patch(obj, {}, { resolved: { redirect: c.redirect, outcome: form.outcome } });
        return c;
      });
      if (!done) {
        res.status(404).json({ error: { message: 'No such checkout' } });
        return;
      }
      if ('closed' in done) {
        res.status(409).json({ error: { message: 'This checkout is no longer open.' } });
        return;
      }
      await sb.deliver(done.events);
      if (!done.redirect) {
        res.status(200).type('text/plain').send('Checkout complete.');
        return;
      }
      res.redirect(303, done.redirect);
    },
  );
  return r;
}

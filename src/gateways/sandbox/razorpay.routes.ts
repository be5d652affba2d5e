import express, { NextFunction, Request, Response, Router } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currencyExponent } from '../../core/currency';
import { logger } from '../../core/logger';
import { queueRazorpayEvent } from './events';
import { ApiError, bodyChecks, CreateResult, intParam, listParam, Result, runApi, runCreate, strParam } from './http';
import { accountKeyOf, gid, unix } from './ids';
import {
  addRazorpayAddon,
  cancelRazorpayScheduledChanges,
  changeRazorpayPlan,
  initialInternal,
  retryRazorpayCharge,
  scheduleRazorpayPlan,
} from './razorpay.billing';
import { SandboxObject, SandboxWebhook } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { Account, createObject, Draft, findObject, patch } from './store';

/**
 * The Razorpay API subset the adapter uses, at /razorpay/v1: JSON bodies, Basic auth key_id:key_secret,
 * Razorpay's ids and error envelope. Idempotency: the X-Idempotency-Key header (a sandbox extension).
 */

type Obj = Record<string, any>;

/** Razorpay answers bad input with 400 BAD_REQUEST_ERROR, unknown ids included. */
const bad = (description: string, field: string | null = null, status = 400) =>
  new ApiError(status, description, 'BAD_REQUEST_ERROR', field);
const unknownId = () => bad('The id provided does not exist');
/** The ApiError type of a call the sandbox does not serve. */
const NOT_EMULATED = 'not_emulated';

/**
 * Sandbox credentials (docs/sandbox.md): rzp_test_ / rzp_live_ key ids with any non-empty secret; anything else fails
 * authentication.
 */
function authenticate(req: Request): Account {
  const m = /^Basic\s+(\S+)$/i.exec(req.header('authorization') ?? '');
  const decoded = m ? Buffer.from(m[1], 'base64').toString('utf8') : '';
  const sep = decoded.indexOf(':');
  const keyId = sep > 0 ? decoded.slice(0, sep) : '';
  const secret = sep > 0 ? decoded.slice(sep + 1) : '';
  const mode = /^rzp_(test|live)_\S+$/.exec(keyId)?.[1];
  if (!mode || !secret) throw new ApiError(401, 'Authentication failed', 'BAD_REQUEST_ERROR');
  return { provider: 'razorpay', accountKey: accountKeyOf('razorpay', keyId), livemode: mode === 'live' };
}

function currencyParam(value: unknown, field: string): string {
  const c = String(value ?? 'INR').toUpperCase();
  try {
    currencyExponent(c);
  } catch {
    throw bad(`The currency ${c} is not supported`, field);
  }
  return c;
}

function notes(value: unknown): Record<string, string> {
  if (value == null || value === '') return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('notes must be an object', 'notes');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Obj)) out[k] = String(v);
  return out;
}

const intField = (v: unknown, field: string, min = 0, required = true) => {
  try {
    return intParam(v, field, { required, min });
  } catch {
    throw bad(
      v == null ? `The ${field} field is required.` : `The ${field} must be an integer of at least ${min}.`,
      field,
    );
  }
};

async function createPaymentLink(sb: Sandbox, draft: Draft, b: Obj): Promise<CreateResult> {
  const amount = intField(b.amount, 'amount', 100)!;
  const currency = currencyParam(b.currency, 'currency');
  const id = gid('plink_', 14);
  const link = draft.create('payment_link', {
    id,
    entity: 'payment_link',
    amount,
    amount_paid: 0,
    currency,
    accept_partial: false,
    description: b.description ?? null,
    reference_id: b.reference_id ?? null,
    customer: b.customer ?? {},
    notify: b.notify ?? { sms: false, email: false },
    callback_url: b.callback_url ?? null,
    callback_method: b.callback_method ?? null,
    notes: notes(b.notes),
    short_url: `${sb.publicUrl}/checkout/${id}`,
    status: 'created',
    expire_by: b.expire_by ?? 0,
    payments: null,
    upi_link: false,
    created_at: unix(),
  });
  return { body: link.data };
}

async function refundPayment(em: EntityManager, account: Account, paymentId: string, b: Obj): Promise<Result> {
  const payment = await findObject(em, account, 'payment', paymentId, true);
  if (!payment) throw unknownId();
  if (payment.data.status !== 'captured' && payment.data.status !== 'refunded')
    throw bad('The payment has not been captured');
  const remaining = Number(payment.data.amount) - Number(payment.data.amount_refunded);
  if (remaining <= 0) throw bad('The payment has been fully refunded already');
  const amount = intField(b.amount, 'amount', 100, false) ?? remaining;
  if (amount > remaining) throw bad('The refund amount provided is greater than amount captured', 'amount');
  const refund = createObject(em, account, 'refund', {
    id: gid('rfnd_', 14),
    entity: 'refund',
    amount,
    currency: payment.data.currency,
    payment_id: payment.id,
    notes: notes(b.notes),
    receipt: b.receipt ?? null,
    status: 'processed',
    speed_requested: b.speed ?? 'normal',
    speed_processed: 'normal',
    created_at: unix(),
  });
  const refunded = Number(payment.data.amount_refunded) + amount;
  patch(payment, {
    amount_refunded: refunded,
    refund_status: refunded >= Number(payment.data.amount) ? 'full' : 'partial',
    status: refunded >= Number(payment.data.amount) ? 'refunded' : 'captured',
  });
  return {
    body: refund.data,
    events: [
      queueRazorpayEvent(em, account.accountKey, 'refund.processed', { refund: refund.data, payment: payment.data }),
    ],
  };
}

async function createPlan(draft: Draft, b: Obj): Promise<CreateResult> {
  const period = String(b.period ?? '');
  if (!['daily', 'weekly', 'monthly', 'yearly'].includes(period))
    throw bad('The period must be one of daily, weekly, monthly, yearly.', 'period');
  const interval = intField(b.interval, 'interval', 1)!;
  const item = (b.item ?? {}) as Obj;
  if (!item.name) throw bad('The item.name field is required.', 'item.name');
  const plan = draft.create('plan', {
    id: gid('plan_', 14),
    entity: 'plan',
    interval,
    period,
    item: {
      id: gid('item_', 14),
      active: true,
      name: String(item.name),
      description: item.description ?? null,
      amount: intField(item.amount, 'item.amount', 100)!,
      unit_amount: intField(item.amount, 'item.amount', 100)!,
      currency: currencyParam(item.currency, 'item.currency'),
      type: 'plan',
      created_at: unix(),
    },
    notes: notes(b.notes),
    created_at: unix(),
  });
  return { body: plan.data };
}

async function createSubscription(sb: Sandbox, em: EntityManager, account: Account, b: Obj): Promise<Result> {
  const planId = strParam(b.plan_id, 'plan_id');
  if (!planId) throw bad('The plan_id field is required.', 'plan_id');
  const plan = await findObject(em, account, 'plan', planId);
  if (!plan) throw unknownId();
  const totalCount = intField(b.total_count, 'total_count', 1)!;
  const startAt = intField(b.start_at, 'start_at', 0, false) ?? null;
  let addonsTotal = 0;
  for (const a of listParam(b.addons)) {
    const item = ((a as Obj)?.item ?? {}) as Obj;
    addonsTotal += intField(item.amount, 'addons.item.amount', 0)!;
  }
  const id = gid('sub_', 14);
  const sub = createObject(
    em,
    account,
    'subscription',
    {
      id,
      entity: 'subscription',
      plan_id: plan.id,
      customer_id: b.customer_id ?? null,
      status: 'created',
      current_start: null,
      current_end: null,
      ended_at: null,
      quantity: intField(b.quantity, 'quantity', 1, false) ?? 1,
      notes: notes(b.notes),
      charge_at: startAt,
      start_at: startAt,
      end_at: null,
      auth_attempts: 0,
      total_count: totalCount,
      paid_count: 0,
      remaining_count: totalCount,
      customer_notify: b.customer_notify === 0 || b.customer_notify === false ? false : true,
      created_at: unix(),
      expire_by: b.expire_by ?? null,
      short_url: `${sb.publicUrl}/checkout/${id}`,
      has_scheduled_changes: false,
      change_scheduled_at: null,
      payment_method: null,
      offer_id: null,
    },
    { ...initialInternal(plan, addonsTotal), trialSeconds: startAt ? Math.max(0, startAt - unix()) : 0 },
  );
  return { body: sub.data };
}

async function subscriptionCommand(
  sb: Sandbox,
  em: EntityManager,
  account: Account,
  id: string,
  command: 'pause' | 'resume' | 'cancel' | 'update',
  b: Obj,
): Promise<Result> {
  const sub = await findObject(em, account, 'subscription', id, true);
  if (!sub) throw unknownId();
  const status = sub.data.status as string;
  const now = await sb.now(account.accountKey);
  const queue = (type: string) => [queueRazorpayEvent(em, account.accountKey, type, { subscription: sub.data }, now)];
  switch (command) {
    case 'pause':
      if (status !== 'active') throw bad(`Subscription cannot be paused in ${status} state`);
      patch(sub, { status: 'paused', paused_at: unix(now) });
      return { body: sub.data, events: queue('subscription.paused') };
    case 'resume':
      if (status !== 'paused') throw bad(`Subscription cannot be resumed in ${status} state`);
      patch(sub, { status: 'active', paused_at: null });
      return { body: sub.data, events: queue('subscription.resumed') };
    case 'cancel': {
      if (['cancelled', 'completed', 'expired'].includes(status))
        throw bad(`Subscription cannot be cancelled in ${status} state`);
      const atCycleEnd = b.cancel_at_cycle_end === 1 || b.cancel_at_cycle_end === true || b.cancel_at_cycle_end === '1';
      if (atCycleEnd && sub.dueAt) {
        // Sandbox field cancel_at_cycle_end: the adapter's getSubscription reads it as cancelAtPeriodEnd.
        patch(
          sub,
          {
            has_scheduled_changes: true,
            change_scheduled_at: sub.data.current_end ?? sub.data.charge_at,
            cancel_at_cycle_end: true,
          },
          { cancelAtCycleEnd: true },
        );
        return { body: sub.data };
      }
      patch(sub, { status: 'cancelled', ended_at: unix(now) });
      sub.dueAt = null;
      return { body: sub.data, events: queue('subscription.cancelled') };
    }
    case 'update': {
      if (['cancelled', 'completed', 'expired', 'halted'].includes(status))
        throw bad(`Subscription cannot be updated in ${status} state`);
      // Razorpay refuses updates of UPI and e-mandate subscriptions, in these words.
      if (sub.data.payment_method === 'upi') throw bad('subscriptions cannot be updated when payment mode is UPI');
      if (sub.data.payment_method === 'emandate')
        throw bad('subscriptions cannot be updated when payment mode is emandate');
      const planId = strParam(b.plan_id, 'plan_id');
      const at = strParam(b.schedule_change_at, 'schedule_change_at') ?? 'now';
      if (at !== 'now' && at !== 'cycle_end')
        throw bad('schedule_change_at must be now or cycle_end', 'schedule_change_at');
      if (planId) {
        const plan = await findObject(em, account, 'plan', planId);
        if (!plan) throw unknownId();
        if (plan.data.item.currency !== sub.internal.currency)
          throw bad('The plan currency must match the subscription currency', 'plan_id');
        if (at === 'cycle_end') {
          if (sub.internal.cancelAtCycleEnd) throw bad('Subscription is scheduled to be cancelled at the cycle end');
          scheduleRazorpayPlan(sub, plan);
          return { body: sub.data };
        }
        // An update applied now replaces one scheduled for the cycle's end.
        if (sub.internal.scheduledPlan)
          patch(sub, { has_scheduled_changes: false, change_scheduled_at: null }, { scheduledPlan: null });
        changeRazorpayPlan(sub, plan, now);
      }
      const q = intField(b.quantity, 'quantity', 1, false);
      if (q) patch(sub, { quantity: q });
      return { body: sub.data, events: queue('subscription.updated') };
    }
  }
}

/** POST /subscriptions/:id/addons: item {name, amount, currency}, quantity; charged with the next cycle. */
async function createAddon(sb: Sandbox, em: EntityManager, account: Account, id: string, b: Obj): Promise<Result> {
  const sub = await findObject(em, account, 'subscription', id, true);
  if (!sub) throw unknownId();
  const status = sub.data.status as string;
  if (!['authenticated', 'active', 'pending'].includes(status))
    throw bad(`Addons cannot be created for a subscription in ${status} state`);
  const item = (b.item ?? {}) as Obj;
  const name = strParam(item.name, 'item.name');
  if (!name) throw bad('The item.name field is required.', 'item.name');
  const amount = intField(item.amount, 'item.amount', 1)!;
  const currency = currencyParam(item.currency, 'item.currency');
  if (currency !== sub.internal.currency)
    throw bad('The addon currency must match the subscription currency', 'item.currency');
  const quantity = intField(b.quantity, 'quantity', 1, false) ?? 1;
  const addon = addRazorpayAddon(
    em,
    sub,
    { name, amount, currency, description: strParam(item.description, 'item.description') ?? null },
    quantity,
    await sb.now(account.accountKey),
  );
  return { body: addon.data };
}

/** Test helpers are a sandbox extension of test mode only (as test clocks are at the gateways). */
function testModeOnly(account: Account): void {
  if (account.livemode) throw bad('Test helpers are available with test-mode keys (rzp_test_) only', null);
}

/** Unix seconds (fractions allowed) -> Date. */
function timeParam(value: unknown, field: string): Date {
  const n =
    typeof value === 'number' ? value : typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0) throw bad(`The ${field} field must be a unix timestamp in seconds.`, field);
  return new Date(Math.round(n * 1000));
}

/** Sandbox extension: charges the failed cycle of a pending or halted subscription now; the webhook is delivered first. */
async function retryCharge(sb: Sandbox, em: EntityManager, account: Account, id: string): Promise<Result> {
  testModeOnly(account);
  const sub = await findObject(em, account, 'subscription', id, true);
  if (!sub) throw unknownId();
  const outcome = await retryRazorpayCharge(em, sub, await sb.now(account.accountKey));
  return {
    body: {
      entity: 'subscription_charge_retry',
      subscription_id: sub.id,
      outcome: outcome ? (outcome.failure ? 'failed' : 'succeeded') : 'nothing_due',
      failure_reason: outcome?.failure ?? null,
      payment: outcome?.payment.data ?? null,
      subscription: sub.data,
    },
    events: outcome?.events ?? [],
    deliverFirst: true,
  };
}

export function razorpayRouter(sb: Sandbox): Router {
  const r = express.Router();
  r.use(express.json({ limit: '1mb' }), bodyChecks);
  const reused = () => bad('The idempotency key was already used with different request parameters');
  const post =
    (handler: (em: EntityManager, account: Account, req: Request) => Promise<Result>) =>
    async (req: Request, res: Response) => {
      const account = authenticate(req);
      const key = req.header('x-idempotency-key') || undefined;
      await runApi(sb, req, res, account, key, (em) => handler(em, account, req), reused);
    };
  /** POSTs that only create objects: the same idempotency answers, written in one SQL statement (runCreate). */
  const create =
    (handler: (draft: Draft, req: Request) => Promise<CreateResult>) => async (req: Request, res: Response) => {
      const account = authenticate(req);
      const key = req.header('x-idempotency-key') || undefined;
      await runCreate(sb, req, res, account, key, (draft) => handler(draft, req), reused);
    };
  const get = (type: string) => async (req: Request, res: Response) => {
    const account = authenticate(req);
    const obj = await findObject(sb.orm.em.fork(), account, type, String(req.params.id));
    if (!obj) throw unknownId();
    res.json(obj.data);
  };

  r.get('/plans', (req, res) => {
    authenticate(req);
    res.json({ entity: 'collection', count: 0, items: [] });
  });
  r.post(
    '/plans',
    create((draft, req) => createPlan(draft, req.body ?? {})),
  );
  r.get('/plans/:id', get('plan'));

  r.post(
    '/webhooks',
    post(async (em, account, req) => {
      const b = (req.body ?? {}) as Obj;
      const url = strParam(b.url, 'url');
      const secret = strParam(b.secret, 'secret');
      if (!url) throw bad('The url field is required.', 'url');
      if (!secret) throw bad('The secret field is required.', 'secret');
      // Razorpay's API takes events as a list of names or as {name: true}.
      const events = Array.isArray(b.events)
        ? b.events.map(String)
        : Object.keys((b.events ?? {}) as Obj).filter((k) => (b.events as Obj)[k]);
      let hook = await em.findOne(SandboxWebhook, { provider: 'razorpay', accountKey: account.accountKey });
      if (!hook) {
        hook = Object.assign(new SandboxWebhook(), {
          provider: 'razorpay',
          accountKey: account.accountKey,
          externalId: gid('', 14),
        });
        em.persist(hook);
      }
      Object.assign(hook, { url, secret: sb.secrets.seal(secret), events: events.length ? events : ['*'] });
      return {
        body: {
          id: hook.externalId,
          entity: 'webhook',
          url,
          active: true,
          events: Object.fromEntries(hook.events.map((e) => [e, true])),
          created_at: unix(),
        },
      };
    }),
  );

  r.post(
    '/payment_links',
    create((draft, req) => createPaymentLink(sb, draft, req.body ?? {})),
  );
  r.get('/payment_links/:id', get('payment_link'));
  r.post(
    '/payment_links/:id/cancel',
    post(async (em, account, req) => {
      const link = await findObject(em, account, 'payment_link', String(req.params.id), true);
      if (!link) throw unknownId();
      if (link.data.status !== 'created') throw bad(`Payment link cannot be cancelled in ${link.data.status} state`);
      patch(link, { status: 'cancelled', cancelled_at: unix() }, { resolved: { outcome: 'cancel' } });
      return {
        body: link.data,
        events: [queueRazorpayEvent(em, account.accountKey, 'payment_link.cancelled', { payment_link: link.data })],
      };
    }),
  );

  r.get('/payments/:id', get('payment'));
  r.post(
    '/payments/:id/refund',
    post((em, account, req) => refundPayment(em, account, String(req.params.id), req.body ?? {})),
  );
  r.get('/refunds/:id', get('refund'));

  r.post(
    '/subscriptions',
    post((em, account, req) => createSubscription(sb, em, account, req.body ?? {})),
  );
  r.get('/subscriptions/:id', get('subscription'));
  r.patch(
    '/subscriptions/:id',
    post((em, account, req) => subscriptionCommand(sb, em, account, String(req.params.id), 'update', req.body ?? {})),
  );
  for (const command of ['pause', 'resume', 'cancel'] as const) {
    r.post(
      `/subscriptions/:id/${command}`,
      post((em, account, req) => subscriptionCommand(sb, em, account, String(req.params.id), command, req.body ?? {})),
    );
  }
  r.post(
    '/subscriptions/:id/cancel_scheduled_changes',
    post(async (em, account, req) => {
      const sub = await findObject(em, account, 'subscription', String(req.params.id), true);
      if (!sub) throw unknownId();
      if (['cancelled', 'completed', 'expired'].includes(sub.data.status as string))
        throw bad(`Subscription cannot be updated in ${sub.data.status} state`);
      cancelRazorpayScheduledChanges(sub);
      return { body: sub.data };
    }),
  );
  r.post(
    '/subscriptions/:id/addons',
    post((em, account, req) => createAddon(sb, em, account, String(req.params.id), req.body ?? {})),
  );
  r.get('/addons/:id', get('addon'));

  // Invoices of a subscription, newest first (the adapter's reconciliation reads the latest charge here).
  r.get('/invoices', async (req: Request, res: Response) => {
    const account = authenticate(req);
    const q = req.query as Obj;
    const subscriptionId = typeof q.subscription_id === 'string' ? q.subscription_id : null;
    const count = Math.min(100, Math.max(1, Number(q.count) || 10));
    const skip = Math.max(0, Number(q.skip) || 0);
    const all = await sb.orm.em.fork().find(SandboxObject, {
      provider: 'razorpay',
      accountKey: account.accountKey,
      type: 'invoice',
      ...(subscriptionId ? { data: { subscription_id: subscriptionId } } : {}),
    });
    const items = all
      .map((o) => o.data)
      .sort(
        (a, b) =>
          Number(b.billing_start ?? 0) - Number(a.billing_start ?? 0) || Number(b.created_at) - Number(a.created_at),
      )
      .slice(skip, skip + count);
    res.json({ entity: 'collection', count: items.length, items });
  });
  r.get('/invoices/:id', get('invoice'));

  // Sandbox extensions (test mode): the account's test clock, and a dunning retry of a failed cycle.
  r.post('/test_helpers/advance', async (req: Request, res: Response) => {
    const account = authenticate(req);
    testModeOnly(account);
    const to = timeParam((req.body ?? {}).frozen_time, 'frozen_time');
    const { now, renewals } = await sb.advanceClock(account.accountKey, to);
    res.json({
      entity: 'sandbox_clock',
      frozen_time: now.getTime() / 1000,
      renewals: renewals.map((r) => ({ subscription_id: r.providerSubscriptionId, events: r.events })),
    });
  });
  r.post(
    '/test_helpers/subscriptions/:id/retry_charge',
    post((em, account, req) => retryCharge(sb, em, account, String(req.params.id))),
  );

  // Razorpay answers a URL it does not serve with 400 BAD_REQUEST_ERROR, source/step/reason NA; so does the sandbox,
  // naming the call it does not emulate (docs/sandbox.md lists what it serves).
  r.use((req: Request) => {
    const path = `${req.baseUrl.replace(/^\/razorpay/, '')}${req.path}`;
    throw new ApiError(
      400,
      `The requested URL was not found on the server. The Cadence gateway sandbox does not emulate ${req.method} ${path}: it serves only the Razorpay calls listed in docs/sandbox.md.`,
      'BAD_REQUEST_ERROR',
      null,
      NOT_EMULATED,
    );
  });
  r.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err instanceof ApiError ? err : null;
    const status =
      e?.status ??
      ((err as { status?: number })?.status && (err as { status: number }).status < 500
        ? (err as { status: number }).status
        : 500);
    if (status >= 500) logger.error({ err }, 'gateway sandbox error');
    res.status(status).json({
      error: {
        code: status >= 500 ? 'SERVER_ERROR' : 'BAD_REQUEST_ERROR',
        description: e?.message ?? (status >= 500 ? 'The server encountered an error.' : (err as Error).message),
        source: e && e.type !== NOT_EMULATED ? 'business' : 'NA',
        step: 'NA',
        reason: e && e.type !== NOT_EMULATED ? 'input_validation_failed' : 'NA',
        metadata: {},
        ...(e?.param ? { field: e.param } : {}),
      },
    });
  });
  return r;
}

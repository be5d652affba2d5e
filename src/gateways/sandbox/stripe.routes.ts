import express, { Request, Response, Router } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currencyExponent } from '../../core/currency';
import { queueStripeEvent } from './events';
import {
  ApiError,
  bodyChecks,
  CreateResult,
  intParam,
  listParam,
  metadataParam,
  notEmulated,
  Result,
  runApi,
  runCreate,
  sandboxErrorHandler,
  strParam,
} from './http';
import { accountKeyOf, gid, unix } from './ids';
import { SandboxObject, SandboxWebhook } from './sandbox.entities';
import type { Sandbox } from './sandbox';
import { Account, createObject, Draft, findObject, patch, StoredObject } from './store';
import { changeStripePrice, createStripeManualInvoice, declineError, payStripeInvoice } from './stripe.billing';

/**
 * The Stripe API subset the adapter uses, at /v1, as the official SDK speaks it: form-encoded bodies, Bearer
 * secret keys, Idempotency-Key, Stripe's ids and error envelope.
 */

type Obj = Record<string, any>;

/** Sandbox credentials (docs/sandbox.md): sk_test_ / sk_live_ keys only; anything else is a bad key (401). */
function authenticate(req: Request): Account {
  const auth = req.header('authorization') ?? '';
  const m = /^Bearer\s+(\S+)$/i.exec(auth);
  const key = m?.[1] ?? '';
  const mode = /^sk_(test|live)_\S+$/.exec(key)?.[1];
  if (!mode) {
    const shown = key ? `${key.slice(0, 8)}${'*'.repeat(Math.max(0, Math.min(key.length - 8, 16)))}` : '';
    throw new ApiError(
      401,
      key ? `Invalid API Key provided: ${shown}` : 'You did not provide an API key.',
      null,
      null,
      'invalid_request_error',
    );
  }
  return { provider: 'stripe', accountKey: accountKeyOf('stripe', key), livemode: mode === 'live' };
}

const notFound = (what: string, id: string, param = 'id') =>
  new ApiError(404, `No such ${what}: '${id}'`, 'resource_missing', param);

function currencyParam(value: unknown, param: string): string {
  const c = strParam(value, param, true)!.toLowerCase();
  try {
    currencyExponent(c);
  } catch {
    throw new ApiError(400, `Invalid currency: ${c}.`, 'parameter_invalid', param);
  }
  return c;
}

async function createPrice(draft: Draft, b: Obj, paramPrefix = ''): Promise<StoredObject> {
  const account = draft.account;
  const currency = currencyParam(b.currency, `${paramPrefix}currency`);
  const unitAmount = intParam(b.unit_amount, `${paramPrefix}unit_amount`, { required: true, min: 0 })!;
  let productId = strParam(b.product, `${paramPrefix}product`);
  if (productId) {
    if (!(await draft.find('product', productId))) throw notFound('product', productId, `${paramPrefix}product`);
  } else {
    const name = strParam(b.product_data?.name, `${paramPrefix}product_data[name]`, true)!;
    productId = gid('prod_', 14);
    draft.create('product', {
      id: productId,
      object: 'product',
      name,
      active: true,
      metadata: metadataParam(b.product_data?.metadata),
      created: unix(),
      livemode: account.livemode,
    });
  }
  let recurring: Obj | null = null;
  if (b.recurring) {
    const interval = strParam(b.recurring.interval, `${paramPrefix}recurring[interval]`, true)!;
    if (!['day', 'week', 'month', 'year'].includes(interval)) {
      throw new ApiError(
        400,
        `Invalid recurring[interval]: must be one of day, week, month, or year`,
        'parameter_invalid',
        `${paramPrefix}recurring[interval]`,
      );
    }
    recurring = {
      interval,
      interval_count: intParam(b.recurring.interval_count, `${paramPrefix}recurring[interval_count]`, { min: 1 }) ?? 1,
      usage_type: 'licensed',
    };
  }
  return draft.create('price', {
    id: gid('price_'),
    object: 'price',
    active: true,
    currency,
    unit_amount: unitAmount,
    product: productId,
    recurring,
    type: recurring ? 'recurring' : 'one_time',
    metadata: metadataParam(b.metadata),
    created: unix(),
    livemode: account.livemode,
  });
}

async function createCheckoutSession(sb: Sandbox, draft: Draft, b: Obj): Promise<CreateResult> {
  const account = draft.account;
  const mode = strParam(b.mode, 'mode', true)!;
  if (mode !== 'payment' && mode !== 'subscription' && mode !== 'setup') {
    throw new ApiError(
      400,
      `Invalid mode: must be one of payment, setup, or subscription`,
      'parameter_invalid',
      'mode',
    );
  }
  const successUrl = strParam(b.success_url, 'success_url', true)!;
  const cancelUrl = strParam(b.cancel_url, 'cancel_url');
  const rawItems = listParam(b.line_items);
  // Setup mode saves a payment method for later charges (a new mandate): nothing is bought.
  if (mode === 'setup' && rawItems.length)
    throw new ApiError(400, 'You cannot pass `line_items` in `setup` mode.', 'parameter_invalid', 'line_items');
  if (mode !== 'setup' && rawItems.length === 0)
    throw new ApiError(400, 'Missing required param: line_items.', 'parameter_missing', 'line_items');
  const items: Array<{ price: string; amount: number; currency: string; name: string; recurring: boolean }> = [];
  for (const [i, raw] of rawItems.entries()) {
    const li = (raw ?? {}) as Obj;
    const quantity = intParam(li.quantity, `line_items[${i}][quantity]`, { min: 1 }) ?? 1;
    let price: StoredObject | null;
    if (li.price) {
      price = await draft.find('price', String(li.price));
      if (!price) throw notFound('price', String(li.price), `line_items[${i}][price]`);
    } else if (li.price_data) {
      price = await createPrice(draft, li.price_data, `line_items[${i}][price_data][`);
    } else {
      throw new ApiError(
        400,
        `You must specify either price or price_data in line_items[${i}].`,
        'parameter_missing',
        `line_items[${i}]`,
      );
    }
    const product = await draft.find('product', price.data.product);
    items.push({
      price: price.id,
      amount: Number(price.data.unit_amount) * quantity,
      currency: price.data.currency,
      name: product?.data.name ?? 'Item',
      recurring: Boolean(price.data.recurring),
    });
  }
  const currency = items[0]?.currency ?? (strParam(b.currency, 'currency') ?? 'inr').toLowerCase();
  if (items.some((i) => i.currency !== currency))
    throw new ApiError(400, 'All line_items must share one currency.', 'parameter_invalid', 'line_items');
  if (mode === 'payment' && items.some((i) => i.recurring)) {
    throw new ApiError(
      400,
      'You specified `payment` mode but passed a recurring price. Use `subscription` mode instead.',
      'parameter_invalid',
      'line_items',
    );
  }
  if (mode === 'subscription' && !items.some((i) => i.recurring)) {
    throw new ApiError(
      400,
      'You must provide at least one recurring price in `subscription` mode.',
      'parameter_invalid',
      'line_items',
    );
  }
  const id = gid(account.livemode ? 'cs_live_' : 'cs_test_', 48);
  const now = unix();
  const trialDays =
    intParam(b.subscription_data?.trial_period_days, 'subscription_data[trial_period_days]', { min: 1 }) ?? 0;
  // With a trial nothing is charged at checkout (the setup fee joins the first invoice, at trial end).
  const amountTotal =
    mode === 'setup' ? null : mode === 'subscription' && trialDays > 0 ? 0 : items.reduce((s, i) => s + i.amount, 0);
  const session = draft.create(
    'checkout_session',
    {
      id,
      object: 'checkout.session',
      mode,
      status: 'open',
      payment_status: 'unpaid',
      url: `${sb.publicUrl}/checkout/${id}`,
      amount_subtotal: amountTotal,
      amount_total: amountTotal,
      currency,
      client_reference_id: strParam(b.client_reference_id, 'client_reference_id') ?? null,
      customer: strParam(b.customer, 'customer') ?? null,
      customer_email: strParam(b.customer_email, 'customer_email') ?? null,
      metadata: metadataParam(b.metadata),
      payment_intent: null,
      setup_intent: null,
      subscription: null,
      payment_method_types: ['card'],
      success_url: successUrl,
      cancel_url: cancelUrl ?? null,
      created: now,
      expires_at: now + 24 * 3600,
      livemode: account.livemode,
    },
    {
      lineItems: items,
      description: mode === 'setup' ? 'A payment method for later charges' : items.map((i) => i.name).join(', '),
      paymentIntentData: {
        metadata: metadataParam(b.payment_intent_data?.metadata),
        description: strParam(b.payment_intent_data?.description, 'payment_intent_data[description]') ?? null,
      },
      subscriptionData: { trial_period_days: trialDays, metadata: metadataParam(b.subscription_data?.metadata) },
      setupIntentData: { metadata: metadataParam(b.setup_intent_data?.metadata) },
    },
  );
  return { body: session.data };
}

async function createRefund(em: EntityManager, account: Account, b: Obj): Promise<Result> {
  let piId = strParam(b.payment_intent, 'payment_intent');
  const chargeId = strParam(b.charge, 'charge');
  if (!piId && !chargeId)
    throw new ApiError(
      400,
      'One of the following params should be provided for this request: payment_intent or charge.',
      'parameter_missing',
      'payment_intent',
    );
  if (!piId) {
    const all = await em.find(SandboxObject, {
      provider: 'stripe',
      accountKey: account.accountKey,
      type: 'payment_intent',
    });
    piId = all.find((p) => p.data.latest_charge?.id === chargeId)?.id;
    if (!piId) throw notFound('charge', chargeId!, 'charge');
  }
  const pi = await findObject(em, account, 'payment_intent', piId, true);
  if (!pi) throw notFound('payment_intent', piId, 'payment_intent');
  if (pi.data.status !== 'succeeded') {
    throw new ApiError(
      400,
      `This PaymentIntent (${pi.id}) does not have a successful charge to refund.`,
      'charge_not_refundable',
      'payment_intent',
    );
  }
  const charge = pi.data.latest_charge as Obj;
  const remaining = Number(charge.amount_captured) - Number(charge.amount_refunded);
  if (remaining <= 0)
    throw new ApiError(400, `Charge ${charge.id} has already been refunded.`, 'charge_already_refunded', 'charge');
  const amount = intParam(b.amount, 'amount', { min: 1 }) ?? remaining;
  if (amount > remaining) {
    throw new ApiError(
      400,
      `Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining})`,
      'amount_too_large',
      'amount',
    );
  }
  const refund = createObject(em, account, 'refund', {
    id: gid('re_'),
    object: 'refund',
    amount,
    currency: pi.data.currency,
    charge: charge.id,
    payment_intent: pi.id,
    reason: strParam(b.reason, 'reason') ?? null,
    metadata: metadataParam(b.metadata),
    status: 'succeeded',
    created: unix(),
  });
  const refunded = Number(charge.amount_refunded) + amount;
  const newCharge = { ...charge, amount_refunded: refunded, refunded: refunded >= Number(charge.amount_captured) };
  patch(pi, { latest_charge: newCharge });
  const events = [
    queueStripeEvent(em, account.accountKey, account.livemode, 'refund.created', refund.data),
    queueStripeEvent(em, account.accountKey, account.livemode, 'charge.refunded', newCharge),
  ];
  return { body: refund.data, events };
}

/** pause_collection, cancel_at_period_end, items[0][price] and metadata: what the adapter changes. */
async function updateSubscription(
  sb: Sandbox,
  em: EntityManager,
  account: Account,
  id: string,
  b: Obj,
): Promise<Result> {
  const sub = await findObject(em, account, 'subscription', id, true);
  if (!sub) throw notFound('subscription', id);
  if (sub.data.status === 'canceled') {
    throw new ApiError(
      400,
      'A canceled subscription can only update its cancellation_details and metadata.',
      'resource_missing',
      null,
    );
  }
  const previous: Obj = {};
  const changes: Obj = {};
  if ('pause_collection' in b) {
    const next =
      b.pause_collection === ''
        ? null
        : {
            behavior: pauseBehavior(b.pause_collection?.behavior),
            resumes_at:
              b.pause_collection?.resumes_at == null
                ? null
                : Math.floor(timeParam(b.pause_collection.resumes_at, 'pause_collection[resumes_at]').getTime() / 1000),
          };
    previous.pause_collection = sub.data.pause_collection;
    changes.pause_collection = next;
  }
  if ('cancel_at_period_end' in b) {
    if (sub.data.schedule)
      throw new ApiError(
        400,
        `The subscription is managed by the subscription schedule \`${sub.data.schedule}\`, and updating any cancelation behavior directly is not allowed. Please update the schedule instead.`,
        'parameter_invalid',
        'cancel_at_period_end',
      );
    previous.cancel_at_period_end = sub.data.cancel_at_period_end;
    changes.cancel_at_period_end = String(b.cancel_at_period_end) === 'true';
  }
  const items = listParam(b.items);
  if (items.length) {
    const it = (items[0] ?? {}) as Obj;
    const priceId = strParam(it.price, 'items[0][price]', true)!;
    const price = await findObject(em, account, 'price', priceId);
    if (!price) throw notFound('price', priceId, 'items[0][price]');
    const current = sub.data.items.data[0];
    if (it.id && it.id !== current.id) throw notFound('subscription_item', String(it.id), 'items[0][id]');
    if (price.data.currency !== sub.data.currency)
      throw new ApiError(
        400,
        'The price currency must match the subscription currency.',
        'parameter_invalid',
        'items[0][price]',
      );
    if (!price.data.recurring)
      throw new ApiError(
        400,
        'The price specified is not recurring; a subscription item needs a recurring price.',
        'parameter_invalid',
        'items[0][price]',
      );
    previous.items = sub.data.items;
    changeStripePrice(sub, price.data, await sb.now(account.accountKey));
  }
  if (b.default_payment_method !== undefined) {
    // A payment method a setup-mode Checkout saved (a new mandate): later charges use it.
    const pmId = strParam(b.default_payment_method, 'default_payment_method', true)!;
    const pm = await findObject(em, account, 'payment_method', pmId);
    if (!pm) throw notFound('payment_method', pmId, 'default_payment_method');
    previous.default_payment_method = sub.data.default_payment_method;
    changes.default_payment_method = pm.id;
    patch(sub, {}, { instrument: pm.internal.instrument, attempts: 0 });
  }
  if (b.metadata !== undefined) {
    previous.metadata = sub.data.metadata;
    changes.metadata = { ...sub.data.metadata, ...metadataParam(b.metadata) };
  }
  patch(sub, changes);
  const events = Object.keys(previous).length
    ? [queueStripeEvent(em, account.accountKey, account.livemode, 'customer.subscription.updated', sub.data, previous)]
    : [];
  return { body: sub.data, events };
}

/**
 * Subscription schedules, the subset the adapter uses: made from a subscription (one phase: its current period, or its
 * trial), updated to two phases (the current one, ending at the period's end, then a new price with no proration),
 * released. The next phase is kept on the subscription (stripe.billing.ts nextPhase) and started by its renewal.
 */
async function createSchedule(sb: Sandbox, em: EntityManager, account: Account, b: Obj): Promise<Result> {
  const subId = strParam(b.from_subscription, 'from_subscription', true)!;
  const sub = await findObject(em, account, 'subscription', subId, true);
  if (!sub) throw notFound('subscription', subId, 'from_subscription');
  if (sub.data.status === 'canceled')
    throw new ApiError(400, 'A canceled subscription cannot be migrated to a schedule.', 'parameter_invalid', null);
  if (sub.data.schedule)
    throw new ApiError(
      400,
      `You cannot migrate a subscription that is already attached to a schedule: \`${sub.data.schedule}\`.`,
      'parameter_invalid',
      'from_subscription',
    );
  const item = sub.data.items.data[0];
  const phase = {
    start_date: item.current_period_start,
    end_date: item.current_period_end,
    items: [{ price: item.price.id, quantity: 1 }],
    proration_behavior: 'create_prorations',
    trial_end: sub.data.status === 'trialing' ? sub.data.trial_end : null,
  };
  const id = gid('sub_sched_');
  const schedule = createObject(em, account, 'subscription_schedule', {
    id,
    object: 'subscription_schedule',
    status: 'active',
    subscription: sub.id,
    customer: sub.data.customer,
    end_behavior: 'release',
    current_phase: { start_date: phase.start_date, end_date: phase.end_date },
    phases: [phase],
    released_at: null,
    released_subscription: null,
    created: unix(await sb.now(account.accountKey)),
    livemode: account.livemode,
  });
  patch(sub, { schedule: id });
  return { body: schedule.data };
}

/** A schedule as it stands: released once its subscription no longer names it (the last phase started, or ended). */
async function scheduleView(em: EntityManager, account: Account, id: string, lock = false) {
  const schedule = await findObject(em, account, 'subscription_schedule', id, lock);
  if (!schedule) throw notFound('subscription_schedule', id);
  if (schedule.data.status === 'active') {
    const sub = await findObject(em, account, 'subscription', schedule.data.subscription, lock);
    if (!sub || sub.data.schedule !== id)
      patch(schedule, {
        status: 'released',
        released_at: schedule.data.current_phase?.end_date ?? null,
        released_subscription: schedule.data.subscription,
        subscription: null,
      });
    return { schedule, sub: sub?.data.schedule === id ? sub : null };
  }
  return { schedule, sub: null };
}

/** A schedule still managing its subscription, as update and release need it (Stripe's refusal otherwise). */
async function activeSchedule(em: EntityManager, account: Account, id: string, verb: 'update' | 'release') {
  const { schedule, sub } = await scheduleView(em, account, id, true);
  if (!sub || schedule.data.status !== 'active')
    throw new ApiError(
      400,
      `You cannot ${verb} a subscription schedule that is currently in the \`${schedule.data.status}\` status.`,
      'resource_missing',
      null,
    );
  return { schedule, sub };
}

async function updateSchedule(sb: Sandbox, em: EntityManager, account: Account, id: string, b: Obj): Promise<Result> {
  const { schedule, sub } = await activeSchedule(em, account, id, 'update');
  const now = unix(await sb.now(account.accountKey));
  const phases = listParam(b.phases) as Obj[];
  if (!phases.length) throw new ApiError(400, 'Missing required param: phases.', 'parameter_missing', 'phases');
  if (phases.length > 2)
    throw new ApiError(400, 'The sandbox supports at most two phases.', 'parameter_invalid', 'phases');
  const current = schedule.data.current_phase;
  const first = phases[0];
  const start = intParam(first.start_date, 'phases[0][start_date]') ?? current.start_date;
  if (start !== current.start_date)
    throw new ApiError(
      400,
      'You can not modify the start date of the current phase.',
      'parameter_invalid',
      'phases[0][start_date]',
    );
  const item = sub.data.items.data[0];
  const firstPrice = strParam(
    listParam(first.items)[0] && (listParam(first.items)[0] as Obj).price,
    'phases[0][items][0][price]',
    true,
  )!;
  if (firstPrice !== item.price.id)
    throw new ApiError(
      400,
      'The sandbox keeps the current phase on the current price.',
      'parameter_invalid',
      'phases[0][items][0][price]',
    );
  const end = intParam(first.end_date, 'phases[0][end_date]');
  let nextPhase: { schedule: string; at: number; price: Obj } | null = null;
  const stored: Obj[] = [{ ...schedule.data.phases[0], start_date: start, end_date: end ?? current.end_date }];
  if (phases.length === 2) {
    if (end == null)
      throw new ApiError(
        400,
        'Every phase but the last needs an end_date.',
        'parameter_missing',
        'phases[0][end_date]',
      );
    if (end <= now)
      throw new ApiError(
        400,
        'The end_date of phase 0 must be in the future.',
        'parameter_invalid',
        'phases[0][end_date]',
      );
    if (end !== item.current_period_end)
      throw new ApiError(
        400,
        'The sandbox starts the next phase at the end of the current period (or trial) only.',
        'parameter_invalid',
        'phases[0][end_date]',
      );
    const second = phases[1];
    const priceId = strParam(
      listParam(second.items)[0] && (listParam(second.items)[0] as Obj).price,
      'phases[1][items][0][price]',
      true,
    )!;
    const price = await findObject(em, account, 'price', priceId);
    if (!price) throw notFound('price', priceId, 'phases[1][items][0][price]');
    if (price.data.currency !== sub.data.currency || !price.data.recurring)
      throw new ApiError(
        400,
        'The price must be recurring and in the subscription currency.',
        'parameter_invalid',
        'phases[1][items][0][price]',
      );
    nextPhase = { schedule: id, at: end, price: price.data };
    stored.push({
      start_date: end,
      end_date: null,
      items: [{ price: priceId, quantity: 1 }],
      proration_behavior: strParam(second.proration_behavior, 'phases[1][proration_behavior]') ?? 'create_prorations',
      trial_end: null,
    });
  }
  patch(schedule, {
    phases: stored,
    end_behavior: strParam(b.end_behavior, 'end_behavior') ?? schedule.data.end_behavior,
  });
  patch(sub, {}, { nextPhase });
  return { body: schedule.data };
}

async function releaseSchedule(em: EntityManager, account: Account, id: string): Promise<Result> {
  const { schedule, sub } = await activeSchedule(em, account, id, 'release');
  patch(schedule, {
    status: 'released',
    released_at: unix(new Date()),
    released_subscription: sub.id,
    subscription: null,
  });
  // The subscription keeps its current price; the phases not started never will.
  patch(sub, { schedule: null }, { nextPhase: null });
  return { body: schedule.data };
}

async function cancelSubscription(sb: Sandbox, em: EntityManager, account: Account, id: string): Promise<Result> {
  const sub = await findObject(em, account, 'subscription', id, true);
  if (!sub) throw notFound('subscription', id);
  if (sub.data.status === 'canceled') return { body: sub.data };
  const now = unix(await sb.now(account.accountKey));
  patch(sub, { status: 'canceled', canceled_at: now, ended_at: now });
  sub.dueAt = null;
  return {
    body: sub.data,
    events: [queueStripeEvent(em, account.accountKey, account.livemode, 'customer.subscription.deleted', sub.data)],
  };
}

/**
 * POST /v1/invoices/:id/pay: charges an open invoice again now (the service's dunning retry). A decline answers
 * Stripe's 402 card_error (stored with the idempotency key like any answer). The invoice's webhook is delivered and
 * answered before this answers, so the caller's state has moved when its call returns.
 */
async function payInvoice(sb: Sandbox, em: EntityManager, account: Account, id: string): Promise<Result> {
  const invoice = await findObject(em, account, 'invoice', id, true);
  if (!invoice) throw notFound('invoice', id);
  if (invoice.data.status === 'paid') throw new ApiError(400, 'Invoice is already paid', 'invoice_already_paid', null);
  // Stripe finalises a draft it is asked to pay, then charges it.
  if (invoice.data.status !== 'open' && invoice.data.status !== 'draft') {
    throw new ApiError(
      400,
      `You can only pay an invoice that is open (this one is ${invoice.data.status}).`,
      'invoice_not_open',
      null,
    );
  }
  const subId = invoice.data.parent?.subscription_details?.subscription as string | undefined;
  const sub = subId ? await findObject(em, account, 'subscription', subId, true) : null;
  if (!sub)
    throw new ApiError(400, 'This invoice has no subscription to charge (sandbox).', 'invoice_no_subscription', null);
  const { failure, pi, events } = payStripeInvoice(em, sub, invoice, await sb.now(account.accountKey));
  if (!failure) return { body: invoice.data, events, deliverFirst: true };
  const error = declineError(failure, sub.internal.instrument);
  return {
    status: 402,
    body: {
      error: {
        ...error,
        charge: pi.data.latest_charge?.id,
        payment_intent: pi.data,
        doc_url: `https://stripe.com/docs/error-codes/${error.code}`,
      },
    },
    events,
    deliverFirst: true,
  };
}

/** POST /v1/invoiceitems: a pending amount for the customer's next invoice (amount + currency; a subscription's, when given). */
async function createInvoiceItem(sb: Sandbox, em: EntityManager, account: Account, b: Obj): Promise<Result> {
  const customer = strParam(b.customer, 'customer', true)!;
  const currency = currencyParam(b.currency, 'currency');
  const amount = intParam(b.amount, 'amount', { required: true })!;
  const subId = strParam(b.subscription, 'subscription');
  if (subId) {
    const sub = await findObject(em, account, 'subscription', subId);
    if (!sub) throw notFound('subscription', subId, 'subscription');
    if (sub.data.customer !== customer)
      throw new ApiError(
        400,
        `Subscription ${subId} does not belong to customer ${customer}.`,
        'parameter_invalid',
        'subscription',
      );
    if (sub.data.currency !== currency)
      throw new ApiError(400, 'The currency must match the subscription currency.', 'parameter_invalid', 'currency');
  }
  const nowS = unix(await sb.now(account.accountKey));
  const item = createObject(em, account, 'invoiceitem', {
    id: gid('ii_'),
    object: 'invoiceitem',
    customer,
    subscription: subId ?? null,
    amount,
    currency,
    description: strParam(b.description, 'description') ?? null,
    invoice: null,
    period: { start: nowS, end: nowS },
    metadata: metadataParam(b.metadata),
    date: nowS,
    livemode: account.livemode,
  });
  return { body: item.data };
}

/** POST /v1/invoices: a draft of the customer's pending invoice items (see createStripeManualInvoice). */
async function createInvoice(sb: Sandbox, em: EntityManager, account: Account, b: Obj): Promise<Result> {
  const customer = strParam(b.customer, 'customer', true)!;
  const subId = strParam(b.subscription, 'subscription');
  const sub = subId ? await findObject(em, account, 'subscription', subId) : null;
  if (subId && !sub) throw notFound('subscription', subId, 'subscription');
  if (sub && sub.data.customer !== customer)
    throw new ApiError(
      400,
      `Subscription ${subId} does not belong to customer ${customer}.`,
      'parameter_invalid',
      'subscription',
    );
  const behavior = strParam(b.pending_invoice_items_behavior, 'pending_invoice_items_behavior') ?? 'exclude';
  if (behavior !== 'include' && behavior !== 'exclude') {
    throw new ApiError(
      400,
      'Invalid pending_invoice_items_behavior: must be one of exclude or include',
      'parameter_invalid',
      'pending_invoice_items_behavior',
    );
  }
  const invoice = await createStripeManualInvoice(em, account, {
    customer,
    subscription: sub,
    includePending: behavior === 'include',
    autoAdvance: b.auto_advance === undefined ? true : String(b.auto_advance) === 'true',
    metadata: metadataParam(b.metadata),
    now: await sb.now(account.accountKey),
  });
  return { body: invoice.data };
}

/** pause_collection[behavior]: what Stripe does with the invoices of a paused subscription. */
function pauseBehavior(value: unknown): string {
  const behavior = strParam(value, 'pause_collection[behavior]', true)!;
  if (!['void', 'keep_as_draft', 'mark_uncollectible'].includes(behavior))
    throw new ApiError(
      400,
      'Invalid pause_collection[behavior]: must be one of void, keep_as_draft, or mark_uncollectible',
      'parameter_invalid',
      'pause_collection[behavior]',
    );
  return behavior;
}

/** Unix seconds (fractions allowed: the service's clock has milliseconds) -> Date. */
function timeParam(value: unknown, param: string): Date {
  const n =
    typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : typeof value === 'number' ? value : NaN;
  if (!Number.isFinite(n) || n <= 0)
    throw new ApiError(400, `Invalid timestamp: ${param} must be a unix time in seconds.`, 'parameter_invalid', param);
  return new Date(Math.round(n * 1000));
}

export function stripeRouter(sb: Sandbox): Router {
  const r = express.Router();
  r.use(express.urlencoded({ extended: true, limit: '1mb', parameterLimit: 10_000 }), bodyChecks);

  const reused = () =>
    new ApiError(
      400,
      'Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than the one used in the original request.',
      'idempotency_key_in_use',
      null,
      'idempotency_error',
    );
  /** POSTs run through the idempotency layer; reads answer straight from the store. */
  const post =
    (handler: (em: EntityManager, account: Account, req: Request) => Promise<Result>) =>
    async (req: Request, res: Response) => {
      const account = authenticate(req);
      const key = req.header('idempotency-key') || undefined;
      await runApi(sb, req, res, account, key, (em) => handler(em, account, req), reused);
    };
  /** POSTs that only create objects: the same idempotency answers, written in one SQL statement (runCreate). */
  const create =
    (handler: (draft: Draft, req: Request) => Promise<CreateResult>) => async (req: Request, res: Response) => {
      const account = authenticate(req);
      const key = req.header('idempotency-key') || undefined;
      await runCreate(sb, req, res, account, key, (draft) => handler(draft, req), reused);
    };
  const get = (type: string, what: string) => async (req: Request, res: Response) => {
    const account = authenticate(req);
    const obj = await findObject(sb.orm.em.fork(), account, type, String(req.params.id));
    if (!obj) throw notFound(what, String(req.params.id));
    res.json(obj.data);
  };

  r.get('/balance', (req, res) => {
    const account = authenticate(req);
    res.json({ object: 'balance', available: [], pending: [], livemode: account.livemode });
  });

  r.post(
    '/webhook_endpoints',
    post(async (em, account, req) => {
      const b = req.body as Obj;
      const url = strParam(b.url, 'url', true)!;
      const secret = strParam(b.metadata?.signing_secret, 'metadata[signing_secret]', true)!;
      if (!/^whsec_\S+$/.test(secret))
        throw new ApiError(
          400,
          'metadata[signing_secret] must be a whsec_ secret (sandbox extension).',
          'parameter_invalid',
          'metadata[signing_secret]',
        );
      const events = listParam(b.enabled_events).map(String);
      if (events.length === 0)
        throw new ApiError(400, 'Missing required param: enabled_events.', 'parameter_missing', 'enabled_events');
      let hook = await em.findOne(SandboxWebhook, { provider: 'stripe', accountKey: account.accountKey });
      if (!hook) {
        hook = Object.assign(new SandboxWebhook(), {
          provider: 'stripe',
          accountKey: account.accountKey,
          externalId: gid('we_'),
        });
        em.persist(hook);
      }
      Object.assign(hook, { url, secret: sb.secrets.seal(secret), events });
      return {
        body: {
          id: hook.externalId,
          object: 'webhook_endpoint',
          url,
          enabled_events: events,
          secret,
          status: 'enabled',
          metadata: {},
          created: unix(),
          livemode: account.livemode,
        },
      };
    }),
  );

  r.post(
    '/products',
    create(async (draft, req) => {
      const b = req.body as Obj;
      const account = draft.account;
      const product = draft.create('product', {
        id: gid('prod_', 14),
        object: 'product',
        name: strParam(b.name, 'name', true),
        active: true,
        metadata: metadataParam(b.metadata),
        created: unix(),
        livemode: account.livemode,
      });
      return { body: product.data };
    }),
  );
  r.get('/products/:id', get('product', 'product'));
  r.post(
    '/prices',
    create(async (draft, req) => ({ body: (await createPrice(draft, req.body as Obj)).data })),
  );
  r.get('/prices/:id', get('price', 'price'));

  r.post(
    '/checkout/sessions',
    create((draft, req) => createCheckoutSession(sb, draft, req.body as Obj)),
  );
  r.get('/checkout/sessions/:id', get('checkout_session', 'checkout.session'));
  r.post(
    '/checkout/sessions/:id/expire',
    post(async (em, account, req) => {
      const s = await findObject(em, account, 'checkout_session', String(req.params.id), true);
      if (!s) throw notFound('checkout.session', String(req.params.id));
      if (s.data.status !== 'open')
        throw new ApiError(
          400,
          `Only Checkout Sessions with a status in ["open"] can be expired.`,
          'checkout_session_not_open',
          null,
        );
      patch(s, { status: 'expired' }, { resolved: { redirect: s.data.cancel_url ?? s.data.success_url } });
      return {
        body: s.data,
        events: [queueStripeEvent(em, account.accountKey, account.livemode, 'checkout.session.expired', s.data)],
      };
    }),
  );

  r.get('/payment_intents/:id', get('payment_intent', 'payment_intent'));
  r.post(
    '/refunds',
    post((em, account, req) => createRefund(em, account, req.body as Obj)),
  );
  r.get('/refunds/:id', get('refund', 'refund'));

  r.get('/setup_intents/:id', get('setup_intent', 'setup_intent'));
  r.get('/payment_methods/:id', get('payment_method', 'payment_method'));
  r.get('/subscriptions/:id', get('subscription', 'subscription'));
  r.post(
    '/subscriptions/:id',
    post((em, account, req) => updateSubscription(sb, em, account, String(req.params.id), req.body as Obj)),
  );
  r.delete(
    '/subscriptions/:id',
    post((em, account, req) => cancelSubscription(sb, em, account, String(req.params.id))),
  );

  r.post(
    '/subscription_schedules',
    post((em, account, req) => createSchedule(sb, em, account, req.body as Obj)),
  );
  r.get('/subscription_schedules/:id', async (req: Request, res: Response) => {
    const account = authenticate(req);
    const { schedule } = await scheduleView(sb.orm.em.fork(), account, String(req.params.id));
    res.json(schedule.data);
  });
  r.post(
    '/subscription_schedules/:id',
    post((em, account, req) => updateSchedule(sb, em, account, String(req.params.id), req.body as Obj)),
  );
  r.post(
    '/subscription_schedules/:id/release',
    post((em, account, req) => releaseSchedule(em, account, String(req.params.id))),
  );
  r.post(
    '/invoiceitems',
    post((em, account, req) => createInvoiceItem(sb, em, account, req.body as Obj)),
  );
  r.get('/invoiceitems/:id', get('invoiceitem', 'invoiceitem'));
  r.post(
    '/invoices',
    post((em, account, req) => createInvoice(sb, em, account, req.body as Obj)),
  );
  r.get('/invoices/:id', get('invoice', 'invoice'));
  r.post(
    '/invoices/:id/pay',
    post((em, account, req) => payInvoice(sb, em, account, String(req.params.id))),
  );

  // Sandbox extension: the customer revokes the subscription's mandate at the bank (or it expires). Stripe clears the
  // payment method from the subscription (customer.subscription.updated); later charges fail with mandate_revoked
  // until a new payment method is set.
  r.post(
    '/test_helpers/sandbox/subscriptions/:id/revoke_mandate',
    post(async (em, account, req) => {
      const id = String(req.params.id);
      const sub = await findObject(em, account, 'subscription', id, true);
      if (!sub) throw notFound('subscription', id);
      const previous = { default_payment_method: sub.data.default_payment_method };
      patch(sub, { default_payment_method: null }, { instrument: { ...sub.internal.instrument, revoked: true } });
      return {
        body: sub.data,
        events: [
          queueStripeEvent(
            em,
            account.accountKey,
            account.livemode,
            'customer.subscription.updated',
            sub.data,
            previous,
          ),
        ],
        deliverFirst: true, // applied by the service before this answers, as the other test helpers are
      };
    }),
  );

  // Sandbox extension (Stripe's own test clocks are objects of their own; here each account has one clock): moves
  // the account's clock to frozen_time and charges what falls due on the way before answering.
  r.post('/test_helpers/sandbox/advance', async (req: Request, res: Response) => {
    const account = authenticate(req);
    if (account.livemode)
      throw new ApiError(
        400,
        'Test helpers can only be used with a test-mode secret key (sk_test_).',
        'livemode_mismatch',
        null,
      );
    const to = timeParam((req.body as Obj).frozen_time, 'frozen_time');
    const { now, renewals } = await sb.advanceClock(account.accountKey, to);
    res.json({
      object: 'test_helpers.sandbox_clock',
      frozen_time: now.getTime() / 1000,
      status: 'ready',
      renewals: renewals.map((x) => ({ subscription: x.providerSubscriptionId, events: x.events })),
      livemode: false,
    });
  });

  r.use((req: Request) => {
    throw notEmulated(req.method, `${req.baseUrl}${req.path}`);
  });
  r.use(sandboxErrorHandler);
  return r;
}

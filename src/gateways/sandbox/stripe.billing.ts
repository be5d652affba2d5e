import type { EntityManager } from '@mikro-orm/postgresql';
import { queueStripeEvent } from './events';
import { gid, unix } from './ids';
import { addUnits, PeriodUnit } from './periods';
import { AUTHENTICATION_REQUIRED, bankOf, cardNetwork, Instrument, last4, laterDebitFailure, pageBase } from './rules';
import { SandboxObject } from './sandbox.entities';
import { Account, createObject, findObject, patch, Persister } from './store';

/**
 * Stripe-side money movements of the sandbox: payment intents with their charge, subscriptions and invoices.
 * Objects in events carry `payment_intent.latest_charge` / `setup_intent.payment_method` expanded (Stripe's
 * expandable fields) so the adapter can read the method, bank and decline reason from one event.
 */

export const accountOf = (obj: SandboxObject): Account => ({
  provider: 'stripe',
  accountKey: obj.accountKey,
  livemode: Boolean(obj.data.livemode),
});

export function paymentMethodDetails(i: Instrument) {
  if (i.method === 'card') {
    return {
      type: 'card',
      card: {
        brand: cardNetwork(i).brand,
        last4: last4(i) ?? '4242',
        funding: 'credit',
        country: 'IN',
        issuer: bankOf(i),
      },
    };
  }
  if (i.method === 'upi') return { type: 'upi', upi: { vpa: i.vpa, issuer: i.bank } };
  return { type: 'emandate', emandate: { issuer: i.bank } };
}

/** Stripe's error object for a decline: card declines carry a decline_code; processing_error is a code of its own. */
export function declineError(code: string, i: Instrument) {
  const declined =
    code === 'card_declined' || code === 'insufficient_funds' || code === 'stolen_card' || code === 'lost_card';
  return {
    type: 'card_error',
    code: declined ? 'card_declined' : code,
    decline_code: declined ? (code === 'card_declined' ? 'generic_decline' : code) : undefined,
    message: declined
      ? 'Your card was declined.'
      : code === AUTHENTICATION_REQUIRED
        ? 'Your card was declined. This transaction requires authentication.'
        : 'An error occurred while processing your card. Try again in a little bit.',
    payment_method: { id: gid('pm_'), object: 'payment_method', ...paymentMethodDetails(i) },
  };
}

/** A PaymentIntent with its (expanded) charge, succeeded or failed; stored so refunds can find it. */
export function createPaymentIntent(
  em: Persister,
  account: Account,
  p: {
    amount: number;
    currency: string;
    metadata: Record<string, string>;
    description?: string | null;
    customer?: string | null;
    instrument: Instrument;
    failure: string | null;
    at?: Date;
  },
): SandboxObject {
  const id = gid('pi_');
  const now = unix(p.at);
  const charge = {
    id: gid('ch_'),
    object: 'charge',
    amount: p.amount,
    amount_captured: p.failure ? 0 : p.amount,
    amount_refunded: 0,
    currency: p.currency,
    captured: !p.failure,
    paid: !p.failure,
    refunded: false,
    status: p.failure ? 'failed' : 'succeeded',
    failure_code: p.failure,
    payment_intent: id,
    payment_method_details: paymentMethodDetails(p.instrument),
    metadata: p.metadata,
    created: now,
    livemode: account.livemode,
  };
  return createObject(em, account, 'payment_intent', {
    id,
    object: 'payment_intent',
    amount: p.amount,
    amount_received: p.failure ? 0 : p.amount,
    currency: p.currency,
    // Authentication asked for: the intent waits for the customer (Stripe's next_action), nothing was charged.
    status:
      p.failure === AUTHENTICATION_REQUIRED ? 'requires_action' : p.failure ? 'requires_payment_method' : 'succeeded',
    customer: p.customer ?? null,
    description: p.description ?? null,
    metadata: p.metadata,
    latest_charge: charge,
    last_payment_error: p.failure ? declineError(p.failure, p.instrument) : null,
    payment_method_types: [p.instrument.method],
    created: now,
    livemode: account.livemode,
  });
}

interface SubInternal {
  instrument: Instrument;
  /** Charges attempted after authorisation (the card rules count these). */
  attempts: number;
  unit: PeriodUnit;
  count: number;
  /** Unix seconds: the start of the first paid period; periods are anchor + k * count units. */
  anchor: number;
  cycle: number;
  pendingSetupFee: number;
  openInvoice: string | null;
  /** The sandbox's pages (pageBase): where an invoice's authentication page is. */
  pages?: string;
  /**
   * The next phase of the subscription's schedule (stripe.routes.ts subscription_schedules): its price from `at`
   * (unix seconds, the end of the current period or trial), with no proration.
   */
  nextPhase?: { schedule: string; at: number; price: Record<string, any> } | null;
}

const periodBounds = (si: SubInternal, cycle: number) => ({
  start: unix(addUnits(new Date(si.anchor * 1000), si.unit, si.count * cycle)),
  end: unix(addUnits(new Date(si.anchor * 1000), si.unit, si.count * (cycle + 1))),
});

/**
 * Creates the subscription behind a completed subscription-mode session; without a trial the first period is
 * charged at once (the card already passed the checkout). Returns the subscription and the queued event ids.
 */
export async function startStripeSubscription(
  em: EntityManager,
  account: Account,
  session: SandboxObject,
  instrument: Instrument,
  customerId: string,
  now: Date,
): Promise<{ sub: SandboxObject; afterCompletion: () => string[] }> {
  const items = session.internal.lineItems as Array<{
    price?: string;
    amount: number;
    currency: string;
    recurring?: boolean;
  }>;
  const recurring = items.find((i) => i.recurring);
  if (!recurring?.price) throw new Error('subscription session without a recurring price');
  const price = await findObject(em, account, 'price', recurring.price);
  if (!price) throw new Error(`price ${recurring.price} vanished`);
  const setupFee = items.filter((i) => !i.recurring).reduce((s, i) => s + i.amount, 0);
  const subData = (session.internal.subscriptionData ?? {}) as {
    trial_period_days?: number;
    metadata?: Record<string, string>;
  };
  const trialDays = Number(subData.trial_period_days ?? 0);
  const nowS = unix(now);
  const trialEnd = trialDays > 0 ? nowS + trialDays * 86_400 : null;
  const si: SubInternal = {
    instrument,
    attempts: 0,
    unit: price.data.recurring.interval,
    count: Number(price.data.recurring.interval_count ?? 1),
    anchor: trialEnd ?? nowS,
    cycle: 0,
    pendingSetupFee: setupFee,
    openInvoice: null,
    pages: pageBase(String(session.data.url ?? '')),
  };
  const period = trialEnd ? { start: nowS, end: trialEnd } : periodBounds(si, 0);
  const id = gid('sub_');
  const sub = createObject(
    em,
    account,
    'subscription',
    {
      id,
      object: 'subscription',
      status: trialEnd ? 'trialing' : 'active',
      customer: customerId,
      currency: price.data.currency,
      items: {
        object: 'list',
        data: [
          {
            id: gid('si_'),
            object: 'subscription_item',
            price: price.data,
            quantity: 1,
            current_period_start: period.start,
            current_period_end: period.end,
          },
        ],
      },
      metadata: subData.metadata ?? {},
      trial_start: trialEnd ? nowS : null,
      trial_end: trialEnd,
      cancel_at_period_end: false,
      canceled_at: null,
      ended_at: null,
      pause_collection: null,
      schedule: null,
      latest_invoice: null,
      default_payment_method: gid('pm_'),
      start_date: nowS,
      created: nowS,
      livemode: account.livemode,
    },
    si,
    new Date(period.end * 1000),
  );
  return {
    sub,
    // The first invoice is reported after checkout.session.completed, as Stripe's own event order usually is.
    afterCompletion: () => (trialEnd ? [] : [chargeInvoice(em, sub, 'subscription_create', null, now).eventId]),
  };
}

function subscriptionAmount(sub: SandboxObject): number {
  return Number(sub.data.items.data[0].price.unit_amount);
}

const invoicePayments = (pi: SandboxObject, paid: boolean) => ({
  object: 'list',
  data: [
    {
      object: 'invoice_payment',
      status: paid ? 'paid' : 'open',
      payment: { type: 'payment_intent', payment_intent: pi.data },
    },
  ],
});

/**
 * Creates and charges one invoice for the subscription's current period; `failure` null means it is paid. A setup fee
 * not yet paid is a one-time line of its own (period start = end, as Stripe shows one-time items). Returns the queued
 * event id.
 */
function chargeInvoice(
  em: Persister,
  sub: SandboxObject,
  billingReason: string,
  failure: string | null,
  now: Date,
  opts: { draft?: boolean } = {},
) {
  const si = sub.internal as SubInternal;
  const account = accountOf(sub);
  const recurring = subscriptionAmount(sub);
  const amount = recurring + si.pendingSetupFee;
  const item = sub.data.items.data[0];
  const currency = sub.data.currency;
  const pi = opts.draft
    ? null
    : createPaymentIntent(em, account, {
        amount,
        currency,
        metadata: {},
        customer: sub.data.customer,
        instrument: si.instrument,
        failure,
        at: now,
      });
  const nowS = unix(now);
  const lines = [
    {
      id: gid('il_'),
      object: 'line_item',
      amount: recurring,
      currency,
      description: `1 x ${item.price.id}`,
      pricing: { type: 'price_details', price_details: { price: item.price.id } },
      period: { start: item.current_period_start, end: item.current_period_end },
      parent: {
        type: 'subscription_item_details',
        subscription_item_details: { subscription: sub.id, subscription_item: item.id },
      },
    },
    ...(si.pendingSetupFee > 0
      ? [
          {
            id: gid('il_'),
            object: 'line_item',
            amount: si.pendingSetupFee,
            currency,
            description: 'Setup fee',
            period: { start: nowS, end: nowS },
            parent: null,
          },
        ]
      : []),
  ];
  const invoiceId = gid('in_');
  const unpaid = failure !== null || !pi;
  const invoice = createObject(em, account, 'invoice', {
    id: invoiceId,
    object: 'invoice',
    status: pi ? (failure ? 'open' : 'paid') : 'draft',
    customer: sub.data.customer,
    currency,
    amount_due: amount,
    amount_paid: unpaid ? 0 : amount,
    amount_remaining: unpaid ? amount : 0,
    attempt_count: pi ? 1 : 0,
    attempted: Boolean(pi),
    billing_reason: billingReason,
    parent: {
      type: 'subscription_details',
      subscription_details: { subscription: sub.id, metadata: sub.data.metadata },
    },
    period_start: item.current_period_start,
    period_end: item.current_period_end,
    lines: { object: 'list', data: lines },
    payments: pi ? invoicePayments(pi, !failure) : { object: 'list', data: [] },
    // The page where the customer authenticates the debit (Stripe's hosted invoice page).
    hosted_invoice_url: failure === AUTHENTICATION_REQUIRED ? authenticationUrl(si, invoiceId) : null,
    status_transitions: { finalized_at: pi ? nowS : null, paid_at: unpaid ? null : nowS },
    created: nowS,
    livemode: account.livemode,
  });
  // The fee is on this invoice now, paid, open or draft: no later invoice carries it again.
  patch(sub, { latest_invoice: invoiceId }, { pendingSetupFee: 0, openInvoice: unpaid ? invoiceId : null });
  return {
    invoice,
    eventId: queueStripeEvent(
      em,
      account.accountKey,
      account.livemode,
      !pi ? 'invoice.created' : failure ? 'invoice.payment_failed' : 'invoice.paid',
      invoice.data,
      undefined,
      now,
    ),
  };
}

/**
 * What happens to a subscription when its period (or trial) ends, at `at` (its due time on the account's clock):
 * cancel at period end, skip while collection is paused, or renew: advance the period and charge it following the
 * card rules. Returns the queued event ids.
 */
export function renewStripeSubscription(em: Persister, sub: SandboxObject, at: Date): string[] {
  const si = sub.internal as SubInternal;
  const account = accountOf(sub);
  const item = sub.data.items.data[0];
  const endedAt = item.current_period_end as number;
  if (sub.data.cancel_at_period_end) {
    patch(sub, { status: 'canceled', canceled_at: unix(at), ended_at: endedAt });
    sub.dueAt = null;
    return [
      queueStripeEvent(
        em,
        account.accountKey,
        account.livemode,
        'customer.subscription.deleted',
        sub.data,
        undefined,
        at,
      ),
    ];
  }
  const wasTrial = sub.data.status === 'trialing';
  if (si.nextPhase && si.nextPhase.at <= endedAt) startNextPhase(sub, endedAt, wasTrial);
  const cycle = wasTrial ? 0 : (sub.internal as SubInternal).cycle + 1;
  const bounds = periodBounds(sub.internal as SubInternal, cycle);
  const current = sub.data.items.data[0];
  const items = {
    ...sub.data.items,
    data: [{ ...current, current_period_start: bounds.start, current_period_end: bounds.end }],
  };
  patch(sub, { items }, { cycle });
  sub.dueAt = new Date(bounds.end * 1000);
  const pause = collectionPause(sub, endedAt);
  if (pause === 'void') return []; // Stripe voids invoices while collection is paused.
  // Kept as a draft: the invoice is made but not charged; paying it (POST /v1/invoices/:id/pay) charges it later.
  const reason = wasTrial ? 'subscription_create' : 'subscription_cycle';
  if (pause === 'keep_as_draft') {
    patch(sub, { status: 'active' });
    return [chargeInvoice(em, sub, reason, null, at, { draft: true }).eventId];
  }
  const attempts = si.attempts + 1;
  const failure = laterDebitFailure(si.instrument, attempts, {
    currency: sub.data.currency,
    amount: subscriptionAmount(sub) + si.pendingSetupFee,
    limit: sub.data.metadata?.mandate_afa_limit,
    validUntil: sub.data.metadata?.mandate_valid_until,
    at: endedAt,
  });
  patch(sub, { status: failure ? 'past_due' : 'active' }, { attempts });
  return [chargeInvoice(em, sub, reason, failure, at).eventId];
}

/**
 * How collection is paused at `at` (unix seconds): `void` or `keep_as_draft`, or null when it is not (a pause whose
 * `resumes_at` has come is over: Stripe clears it then).
 */
function collectionPause(sub: SandboxObject, at: number): 'void' | 'keep_as_draft' | null {
  const pause = sub.data.pause_collection;
  if (!pause) return null;
  if (pause.resumes_at != null && Number(pause.resumes_at) <= at) {
    patch(sub, { pause_collection: null });
    return null;
  }
  return pause.behavior === 'keep_as_draft' ? 'keep_as_draft' : 'void';
}

/**
 * The schedule's next phase starts at the end of the period (or trial) `at`: the subscription's item takes its price
 * without proration; another cadence anchors its periods there (Stripe resets the billing cycle anchor when the
 * interval changes). The sandbox releases the schedule when its last phase starts (Stripe: when that phase ends);
 * nothing reads it after that.
 */
function startNextPhase(sub: SandboxObject, at: number, wasTrial: boolean): void {
  const si = sub.internal as SubInternal;
  const price = si.nextPhase!.price;
  const unit = price.recurring.interval as PeriodUnit;
  const count = Number(price.recurring.interval_count ?? 1);
  const next: Partial<SubInternal> = { unit, count, nextPhase: null };
  // The renewal computes the new period as cycle + 1 from the anchor (cycle 0 after a trial).
  if (!wasTrial && (unit !== si.unit || count !== si.count)) Object.assign(next, { anchor: at, cycle: -1 });
  const item = sub.data.items.data[0];
  patch(sub, { items: { ...sub.data.items, data: [{ ...item, price }] }, schedule: null }, next);
}

/**
 * Charges an open invoice of the subscription again (POST /v1/invoices/:id/pay, the dunning retry): the card rules
 * count it as one more later charge. Answers the failure (null: paid) and the queued event ids.
 */
export function payStripeInvoice(
  em: EntityManager,
  sub: SandboxObject,
  invoice: SandboxObject,
  now: Date,
  authenticated = false,
): { failure: string | null; pi: SandboxObject; events: string[] } {
  const si = sub.internal as SubInternal;
  const account = accountOf(sub);
  const attempts = si.attempts + 1;
  // Off the customer's session (a retry, or a one-off invoice such as a plan change's adjustment) a debit above the
  // limit needs the customer's authentication; the authentication page pays it (`authenticated`).
  const failure = laterDebitFailure(si.instrument, attempts, {
    currency: invoice.data.currency,
    amount: Number(invoice.data.amount_due),
    limit: sub.data.metadata?.mandate_afa_limit,
    validUntil: sub.data.metadata?.mandate_valid_until,
    at: Math.floor(now.getTime() / 1000),
    onSession: authenticated,
  });
  // A one-off invoice (billing_reason manual) is charged like any later charge (the card rules count it) but is no
  // period's invoice: the subscription's status, latest and open invoice stay as they are.
  const manual = invoice.data.billing_reason === 'manual';
  const pi = createPaymentIntent(em, account, {
    amount: invoice.data.amount_due,
    currency: invoice.data.currency,
    metadata: {},
    customer: sub.data.customer,
    instrument: si.instrument,
    failure,
    at: now,
  });
  const finalized = invoice.data.status_transitions?.finalized_at ?? unix(now); // paying a draft finalises it first
  patch(invoice, {
    status: failure ? 'open' : 'paid',
    amount_paid: failure ? 0 : invoice.data.amount_due,
    amount_remaining: failure ? invoice.data.amount_due : 0,
    attempt_count: Number(invoice.data.attempt_count) + 1,
    payments: invoicePayments(pi, !failure),
    ...(failure === AUTHENTICATION_REQUIRED ? { hosted_invoice_url: authenticationUrl(si, invoice.id) } : {}),
    status_transitions: {
      ...(invoice.data.status_transitions ?? {}),
      finalized_at: finalized,
      paid_at: failure ? null : unix(now),
    },
  });
  if (manual) {
    patch(sub, {}, { attempts });
    const type = failure ? 'invoice.payment_failed' : 'invoice.paid';
    return {
      failure,
      pi,
      events: [queueStripeEvent(em, account.accountKey, account.livemode, type, invoice.data, undefined, now)],
    };
  }
  const paidOpen = !failure && si.openInvoice === invoice.id;
  const live = sub.data.status !== 'canceled';
  patch(
    sub,
    live ? { status: failure ? 'past_due' : sub.data.status === 'past_due' ? 'active' : sub.data.status } : {},
    { attempts, openInvoice: paidOpen ? null : si.openInvoice },
  );
  return {
    failure,
    pi,
    events: [
      queueStripeEvent(
        em,
        account.accountKey,
        account.livemode,
        failure ? 'invoice.payment_failed' : 'invoice.paid',
        invoice.data,
        undefined,
        now,
      ),
    ],
  };
}

/** Retries the open invoice of a past_due subscription (dunning). */
export async function retryStripeInvoice(em: EntityManager, sub: SandboxObject, now: Date): Promise<string[]> {
  const si = sub.internal as SubInternal;
  if (!si.openInvoice) return [];
  const invoice = await findObject(em, accountOf(sub), 'invoice', si.openInvoice, true);
  if (!invoice || invoice.data.status !== 'open') return [];
  return payStripeInvoice(em, sub, invoice, now).events;
}

/**
 * A new price for the subscription (items[0][price]). The same cadence keeps the period (the new amount is charged
 * from the next renewal); another cadence starts a new period at `now` when the subscription is running, or from the
 * trial's end in a trial. Nothing is charged here: the service bills its own proration.
 */
export function changeStripePrice(sub: SandboxObject, price: Record<string, any>, now: Date): void {
  const si = sub.internal as SubInternal;
  const item = sub.data.items.data[0];
  const unit = price.recurring.interval as PeriodUnit;
  const count = Number(price.recurring.interval_count ?? 1);
  const sameCadence = unit === si.unit && count === si.count;
  let period = { start: item.current_period_start, end: item.current_period_end };
  const next: Partial<SubInternal> = { unit, count };
  if (!sameCadence && sub.data.status !== 'trialing') {
    Object.assign(next, { anchor: unix(now), cycle: 0 });
    period = periodBounds({ ...si, ...next } as SubInternal, 0);
    sub.dueAt = new Date(period.end * 1000);
  }
  patch(
    sub,
    {
      items: {
        ...sub.data.items,
        data: [{ ...item, price, current_period_start: period.start, current_period_end: period.end }],
      },
    },
    next,
  );
}

/**
 * POST /v1/invoices for a subscription: a draft invoice (billing_reason manual, as Stripe marks invoices made through
 * the API) of the customer's pending invoice items (pending_invoice_items_behavior include), those of `subscription`
 * only when it is given. The items are on this invoice from now on.
 */
export async function createStripeManualInvoice(
  em: EntityManager,
  account: Account,
  p: {
    customer: string;
    subscription: SandboxObject | null;
    includePending: boolean;
    autoAdvance: boolean;
    metadata: Record<string, string>;
    now: Date;
  },
): Promise<SandboxObject> {
  const nowS = unix(p.now);
  const pending = p.includePending
    ? (
        await em.find(
          SandboxObject,
          { provider: 'stripe', accountKey: account.accountKey, type: 'invoiceitem' },
          { orderBy: { createdAt: 'asc' } },
        )
      ).filter(
        (i) =>
          i.data.customer === p.customer &&
          i.data.invoice == null &&
          (!p.subscription || i.data.subscription === p.subscription.id),
      )
    : [];
  const currency = pending[0]?.data.currency ?? p.subscription?.data.currency ?? 'usd';
  const amount = pending.reduce((s, i) => s + Number(i.data.amount), 0);
  const id = gid('in_');
  const lines = pending.map((i) => ({
    id: gid('il_'),
    object: 'line_item',
    amount: i.data.amount,
    currency: i.data.currency,
    description: i.data.description,
    period: i.data.period,
    parent: {
      type: 'invoice_item_details',
      invoice_item_details: { invoice_item: i.id, subscription: i.data.subscription },
    },
  }));
  for (const i of pending) patch(i, { invoice: id });
  return createObject(em, account, 'invoice', {
    id,
    object: 'invoice',
    status: 'draft',
    auto_advance: p.autoAdvance,
    customer: p.customer,
    currency,
    amount_due: amount,
    amount_paid: 0,
    amount_remaining: amount,
    attempt_count: 0,
    attempted: false,
    billing_reason: 'manual',
    metadata: p.metadata,
    parent: p.subscription
      ? {
          type: 'subscription_details',
          subscription_details: { subscription: p.subscription.id, metadata: p.subscription.data.metadata },
        }
      : null,
    period_start: nowS,
    period_end: nowS,
    lines: { object: 'list', data: lines },
    payments: { object: 'list', data: [] },
    status_transitions: { finalized_at: null, paid_at: null },
    created: nowS,
    livemode: account.livemode,
  });
}

/** The sandbox's authentication page of an invoice (authentication.ts). */
export const authenticationUrl = (si: { pages?: string }, invoiceId: string) =>
  `${si.pages ?? ''}/authenticate/${invoiceId}`;

import Stripe from 'stripe';
import { fromGatewayAmount, toGatewayAmount } from './amounts';
import {
  ChangeSubscriptionInput,
  CheckoutResult,
  GatewayError,
  GatewayEvent,
  GatewayPort,
  PaymentCheckoutInput,
  RefundInput,
  RefundResult,
  RegisterPriceInput,
  StripeCredentials,
  SubscriptionCheckoutInput,
} from './port';

export interface AdapterOptions {
  /** The gateway sandbox's base URL (e.g. http://127.0.0.1:4100); unset: the real gateway. */
  sandboxUrl?: string;
  /** Per call, in ms (default 10 s). */
  timeoutMs?: number;
}

/** The events Cadence needs from Stripe; registerWebhook subscribes to exactly these. */
export const STRIPE_EVENTS = [
  'checkout.session.completed',
  'checkout.session.expired',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'payment_intent.payment_failed',
  'charge.refunded',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.updated',
  'customer.subscription.deleted',
];

const INTERVAL: Record<RegisterPriceInput['frequency'], Stripe.PriceCreateParams.Recurring.Interval> = {
  daily: 'day',
  weekly: 'week',
  monthly: 'month',
  yearly: 'year',
};

/** Stripe errors -> GatewayError: no answer, timeouts, 429 and 5xx are "unavailable"; other 4xx are Stripe's "no". */
export function stripeError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { type?: string; statusCode?: number; message?: string };
  if (e && typeof e === 'object' && typeof e.statusCode === 'number' && e.statusCode < 500 && e.statusCode !== 429) {
    return new GatewayError('gateway_rejected', `Stripe: ${e.message ?? 'request rejected'}`, err);
  }
  return new GatewayError('gateway_unavailable', `Stripe unavailable: ${e?.message ?? String(err)}`, err);
}

const idOf = (v: unknown): string | null =>
  v == null ? null : typeof v === 'string' ? v : typeof (v as { id?: unknown }).id === 'string' ? (v as { id: string }).id : null;

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

export class StripeAdapter implements GatewayPort {
  readonly provider = 'stripe' as const;
  private readonly stripe: Stripe;

  constructor(private readonly credentials: StripeCredentials, opts: AdapterOptions = {}) {
    const config: ConstructorParameters<typeof Stripe>[1] = {
      timeout: opts.timeoutMs ?? 10_000,
      // Retrying is the caller's job (it holds the idempotency key); a down gateway must fail fast.
      maxNetworkRetries: 0,
      telemetry: false,
    };
    if (opts.sandboxUrl) {
      const u = new URL(opts.sandboxUrl);
      config.host = u.hostname;
      config.port = u.port || (u.protocol === 'https:' ? 443 : 80);
      config.protocol = u.protocol === 'https:' ? 'https' : 'http';
    }
    this.stripe = new Stripe(credentials.secret_key || 'sk_missing', config);
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw stripeError(err);
    }
  }

  async verifyCredentials(): Promise<void> {
    if (!/^whsec_\S+$/.test(this.credentials.webhook_secret ?? '')) {
      throw new GatewayError('gateway_rejected', 'Stripe: webhook_secret must be a whsec_ signing secret.');
    }
    await this.call(() => this.stripe.balance.retrieve());
  }

  async registerWebhook(url: string): Promise<void> {
    await this.call(() =>
      this.stripe.webhookEndpoints.create({
        url,
        enabled_events: STRIPE_EVENTS as Stripe.WebhookEndpointCreateParams.EnabledEvent[],
        // Sandbox extension: real Stripe generates the secret; the sandbox signs with the one Cadence holds.
        metadata: { signing_secret: this.credentials.webhook_secret },
      }),
    );
  }

  async createPaymentCheckout(input: PaymentCheckoutInput): Promise<CheckoutResult> {
    const amount = toGatewayAmount('stripe', input.amount, input.currency);
    return this.checkout(
      {
        mode: 'payment',
        client_reference_id: input.paymentId,
        line_items: [
          {
            quantity: 1,
            price_data: { currency: input.currency.toLowerCase(), unit_amount: amount, product_data: { name: input.description } },
          },
        ],
        metadata: { payment_id: input.paymentId },
        payment_intent_data: { metadata: { payment_id: input.paymentId }, description: input.description },
      },
      input,
    );
  }

  /** A Checkout Session for the customer, answered as the port's CheckoutResult. */
  private async checkout(
    params: Stripe.Checkout.SessionCreateParams,
    input: Pick<PaymentCheckoutInput, 'customer' | 'successUrl' | 'cancelUrl' | 'idempotencyKey'>,
  ): Promise<CheckoutResult> {
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create(
        { ...params, customer_email: input.customer.email, success_url: input.successUrl, cancel_url: input.cancelUrl },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    return {
      checkoutSessionId: session.id,
      checkoutUrl: session.url ?? '',
      providerPaymentId: idOf(session.payment_intent),
      providerSubscriptionId: idOf(session.subscription),
      providerCustomerId: idOf(session.customer),
    };
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    const refund = await this.call(() =>
      this.stripe.refunds.create(
        {
          payment_intent: input.providerPaymentId,
          amount: toGatewayAmount('stripe', input.amount, input.currency),
          ...(input.reason && ['duplicate', 'fraudulent', 'requested_by_customer'].includes(input.reason)
            ? { reason: input.reason as Stripe.RefundCreateParams.Reason }
            : {}),
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    return { providerRefundId: refund.id, status: refundStatus(refund.status) ?? 'pending' };
  }

  async registerPrice(input: RegisterPriceInput): Promise<{ providerPriceId: string }> {
    const price = await this.call(() =>
      this.stripe.prices.create(
        {
          currency: input.currency.toLowerCase(),
          unit_amount: toGatewayAmount('stripe', input.amount, input.currency),
          recurring: { interval: INTERVAL[input.frequency], interval_count: input.interval },
          product_data: { name: `${input.productName} - ${input.planName}` },
          metadata: { price_id: input.priceId },
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    return { providerPriceId: price.id };
  }

  async createSubscriptionCheckout(input: SubscriptionCheckoutInput): Promise<CheckoutResult> {
    const lineItems: Stripe.Checkout.SessionCreateParams.LineItem[] = [{ price: input.providerPriceId, quantity: 1 }];
    if (input.setupFee > 0) {
      // A one-time price in a subscription-mode Checkout is billed once, on the first invoice.
      lineItems.push({
        quantity: 1,
        price_data: {
          currency: input.currency.toLowerCase(),
          unit_amount: toGatewayAmount('stripe', input.setupFee, input.currency),
          product_data: { name: 'Setup fee' },
        },
      });
    }
    return this.checkout(
      {
        mode: 'subscription',
        client_reference_id: input.subscriptionId,
        line_items: lineItems,
        metadata: { subscription_id: input.subscriptionId },
        subscription_data: {
          metadata: { subscription_id: input.subscriptionId },
          ...(input.trialDays > 0 ? { trial_period_days: input.trialDays } : {}),
        },
      },
      input,
    );
  }

  async pauseSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() => this.stripe.subscriptions.update(providerSubscriptionId, { pause_collection: { behavior: 'void' } }));
  }

  async resumeSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() => this.stripe.subscriptions.update(providerSubscriptionId, { pause_collection: '' }));
  }

  async cancelSubscription(providerSubscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<void> {
    if (opts.atPeriodEnd) {
      await this.call(() => this.stripe.subscriptions.update(providerSubscriptionId, { cancel_at_period_end: true }));
    } else {
      await this.call(() => this.stripe.subscriptions.cancel(providerSubscriptionId));
    }
  }

  async changeSubscriptionPrice(input: ChangeSubscriptionInput): Promise<void> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId));
    const item = sub.items.data[0];
    // Cadence computes and bills its own proration; Stripe only learns the new recurring price.
    await this.call(() =>
      this.stripe.subscriptions.update(
        input.providerSubscriptionId,
        { items: [{ id: item.id, price: input.providerPriceId }], proration_behavior: 'none' },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
  }

  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): GatewayEvent {
    const signature = header(headers, 'stripe-signature');
    if (!signature) throw new GatewayError('signature_invalid', 'Missing Stripe-Signature header');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.credentials.webhook_secret);
    } catch (err) {
      throw new GatewayError('signature_invalid', `Stripe signature verification failed: ${(err as Error).message}`, err);
    }
    return normaliseStripeEvent(event);
  }
}

function refundStatus(status: string | null | undefined): RefundResult['status'] | null {
  if (status === 'succeeded') return 'succeeded';
  if (status === 'failed' || status === 'canceled') return 'failed';
  if (status === 'pending' || status === 'requires_action') return 'pending';
  return null;
}

type Obj = Record<string, any>;

/** Payment method, bank and failure reason from a PaymentIntent or Charge when the event carries them expanded. */
function paymentDetails(pi: unknown): { method: string | null; bank: string | null; failureReason: string | null; providerPaymentId: string | null } {
  const out = { method: null as string | null, bank: null as string | null, failureReason: null as string | null, providerPaymentId: idOf(pi) };
  if (!pi || typeof pi !== 'object') return out;
  const p = pi as Obj;
  const err = p.last_payment_error ?? p.last_setup_error;
  if (err) out.failureReason = err.decline_code && err.decline_code !== 'generic_decline' ? err.decline_code : err.code ?? null;
  const charge = typeof p.latest_charge === 'object' && p.latest_charge ? (p.latest_charge as Obj) : null;
  const pmd: Obj | null = charge?.payment_method_details ?? (typeof p.payment_method === 'object' ? p.payment_method : null) ?? err?.payment_method ?? null;
  if (pmd?.type) {
    out.method = pmd.type;
    out.bank = pmd[pmd.type]?.issuer ?? null;
  }
  return out;
}

/** Stripe's event -> GatewayEvent. Exported for tests; parseEvent verifies the signature first. */
export function normaliseStripeEvent(event: Stripe.Event): GatewayEvent {
  const obj = event.data.object as unknown as Obj;
  const base: GatewayEvent = {
    provider: 'stripe',
    eventId: event.id,
    rawType: event.type,
    kind: 'ignored',
    occurredAt: new Date(event.created * 1000),
    raw: event,
  };
  const money = (amount: unknown, currency: unknown) =>
    typeof amount === 'number' && typeof currency === 'string'
      ? { amount: fromGatewayAmount('stripe', amount, currency), currency: currency.toUpperCase() }
      : {};

  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      if (obj.mode === 'subscription') {
        const d = paymentDetails(obj.setup_intent);
        return {
          ...base,
          kind: event.type === 'checkout.session.completed' ? 'subscription.authorized' : 'ignored',
          subscriptionId: obj.metadata?.subscription_id ?? obj.client_reference_id ?? null,
          checkoutSessionId: obj.id,
          providerSubscriptionId: idOf(obj.subscription),
          providerCustomerId: idOf(obj.customer),
          method: d.method,
          bank: d.bank,
        };
      }
      // A completed session whose payment is still processing (bank debits) is settled by async_payment_*.
      if (obj.payment_status !== 'paid' && obj.payment_status !== 'no_payment_required') return base;
      const d = paymentDetails(obj.payment_intent);
      return {
        ...base,
        kind: 'payment.succeeded',
        paymentId: obj.metadata?.payment_id ?? obj.client_reference_id ?? null,
        checkoutSessionId: obj.id,
        providerPaymentId: d.providerPaymentId,
        providerCustomerId: idOf(obj.customer),
        ...money(obj.amount_total, obj.currency),
        method: d.method,
        bank: d.bank,
      };
    }
    case 'checkout.session.expired':
    case 'checkout.session.async_payment_failed': {
      const expired = event.type === 'checkout.session.expired';
      if (obj.mode === 'subscription') {
        const d = paymentDetails(obj.setup_intent);
        return {
          ...base,
          kind: 'subscription.cancelled',
          subscriptionId: obj.metadata?.subscription_id ?? obj.client_reference_id ?? null,
          checkoutSessionId: obj.id,
          failureReason: d.failureReason,
          method: d.method,
          bank: d.bank,
        };
      }
      const d = paymentDetails(obj.payment_intent);
      return {
        ...base,
        kind: expired ? 'payment.expired' : 'payment.failed',
        paymentId: obj.metadata?.payment_id ?? obj.client_reference_id ?? null,
        checkoutSessionId: obj.id,
        providerPaymentId: d.providerPaymentId,
        ...money(obj.amount_total, obj.currency),
        failureReason: expired ? null : d.failureReason ?? 'payment_failed',
        method: d.method,
        bank: d.bank,
      };
    }
    case 'payment_intent.payment_failed': {
      const d = paymentDetails(obj);
      const paymentId = obj.metadata?.payment_id ?? null;
      // Renewal PaymentIntents belong to invoices: invoice.payment_failed reports those.
      if (!paymentId) return base;
      return {
        ...base,
        kind: 'payment.failed',
        paymentId,
        providerPaymentId: obj.id,
        ...money(obj.amount, obj.currency),
        failureReason: d.failureReason ?? 'payment_failed',
        method: d.method,
        bank: d.bank,
      };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed': {
      const status = event.type === 'refund.failed' ? 'failed' : refundStatus(obj.status);
      if (status !== 'succeeded' && status !== 'failed') return base;
      return {
        ...base,
        kind: status === 'succeeded' ? 'refund.succeeded' : 'refund.failed',
        paymentId: obj.metadata?.payment_id ?? null,
        providerPaymentId: idOf(obj.payment_intent),
        providerRefundId: obj.id,
        ...money(obj.amount, obj.currency),
        failureReason: obj.failure_reason ?? null,
      };
    }
    // charge.refunded carries the cumulative refunded amount, not one refund: refund.* events report each refund.
    case 'invoice.paid':
    case 'invoice.payment_failed': {
      const sd = obj.parent?.subscription_details;
      const providerSubscriptionId = idOf(sd?.subscription ?? obj.subscription);
      if (!providerSubscriptionId) return base;
      const pi = obj.payments?.data?.[0]?.payment?.payment_intent ?? obj.payment_intent ?? null;
      const d = paymentDetails(pi);
      const paid = event.type === 'invoice.paid';
      return {
        ...base,
        kind: paid ? 'subscription.charged' : 'subscription.charge_failed',
        subscriptionId: sd?.metadata?.subscription_id ?? obj.subscription_details?.metadata?.subscription_id ?? null,
        providerSubscriptionId,
        providerCustomerId: idOf(obj.customer),
        providerPaymentId: d.providerPaymentId,
        ...money(paid ? obj.amount_paid : obj.amount_due, obj.currency),
        failureReason: paid ? null : d.failureReason ?? 'payment_failed',
        method: d.method,
        bank: d.bank,
      };
    }
    case 'customer.subscription.updated': {
      const prev = (event.data as { previous_attributes?: Obj }).previous_attributes ?? {};
      if (!('pause_collection' in prev)) return base;
      return {
        ...base,
        kind: obj.pause_collection ? 'subscription.paused' : 'subscription.resumed',
        subscriptionId: obj.metadata?.subscription_id ?? null,
        providerSubscriptionId: obj.id,
        providerCustomerId: idOf(obj.customer),
      };
    }
    case 'customer.subscription.deleted':
      return {
        ...base,
        kind: 'subscription.cancelled',
        subscriptionId: obj.metadata?.subscription_id ?? null,
        providerSubscriptionId: obj.id,
        providerCustomerId: idOf(obj.customer),
      };
    default:
      return base;
  }
}

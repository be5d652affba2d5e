import Stripe from 'stripe';
import { toGatewayAmount } from './amounts';
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
import { idOf, normaliseStripeEvent, refundStatus, STRIPE_EVENTS } from './stripe.events';

export interface AdapterOptions {
  /** The gateway sandbox's base URL (e.g. http://127.0.0.1:4100); unset: the real gateway. */
  sandboxUrl?: string;
  /** Per call, in ms (default 10 s). */
  timeoutMs?: number;
}

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

import Stripe from 'stripe';
import { fromGatewayAmount, toGatewayAmount } from './amounts';
import {
  AdvanceOptions,
  ChangeSubscriptionInput,
  CheckoutResult,
  AUTHENTICATION_REQUIRED,
  GatewayError,
  GatewayEvent,
  GatewayPort,
  GatewayCheckout,
  GatewaySubscription,
  MandateSetupInput,
  mandateNotes,
  OneOffChargeInput,
  OneOffChargeResult,
  PaymentCheckoutInput,
  RefundInput,
  RefundResult,
  RegisterPriceInput,
  RetryChargeResult,
  StripeCredentials,
  SubscriptionCheckoutInput,
} from './port';
import { advanceTimeoutMs, ClientOptions, stripeClient } from './transport';
import {
  fromUnix,
  idOf,
  invoicePeriod,
  isRenewalHold,
  normaliseStripeEvent,
  paymentDetails,
  PERIOD_BILLING_REASONS,
  refundStatus,
  STRIPE_EVENTS,
  subscriptionPeriod,
} from './stripe.events';

/** `sandboxUrl` (e.g. http://127.0.0.1:4100; unset: the real gateway) and `timeoutMs`, each call's bound (transport.ts). */
export type AdapterOptions = ClientOptions;

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

const STATUS: Record<string, GatewaySubscription['status']> = {
  incomplete: 'pending_authorization',
  incomplete_expired: 'cancelled',
  trialing: 'trialing',
  active: 'active',
  past_due: 'past_due',
  unpaid: 'halted',
  paused: 'paused',
  canceled: 'cancelled',
};

/** A card error's reason: the decline code when it says more than "generic", else the error code. */
const declineReason = (e: { decline_code?: string; code?: string }) =>
  e.decline_code && e.decline_code !== 'generic_decline' ? e.decline_code : (e.code ?? 'payment_failed');

/** Stripe's answer to a charge it declined (a 402 card_error): the charge's outcome, not a failed call. */
const isDecline = (err: unknown) => {
  const e = err as { type?: string; statusCode?: number } | null;
  return e?.type === 'StripeCardError' || e?.statusCode === 402;
};

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

export class StripeAdapter implements GatewayPort {
  readonly provider = 'stripe' as const;
  private readonly stripe: Stripe;
  private readonly sandbox: boolean;
  /** The client of test-clock advances that charge what falls due (a longer bound: transport.ts), made when first used. */
  private advancing: Stripe | null = null;

  constructor(
    private readonly credentials: StripeCredentials,
    private readonly opts: AdapterOptions = {},
  ) {
    this.sandbox = Boolean(opts.sandboxUrl);
    this.stripe = stripeClient(credentials.secret_key, opts);
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
            price_data: {
              currency: input.currency.toLowerCase(),
              unit_amount: amount,
              product_data: { name: input.description },
            },
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
          ...(input.refundId || input.creditInvoiceId
            ? {
                metadata: {
                  ...(input.refundId ? { refund_id: input.refundId } : {}),
                  ...(input.creditInvoiceId ? { credit_invoice_id: input.creditInvoiceId } : {}),
                },
              }
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
          metadata: {
            subscription_id: input.subscriptionId,
            ...mandateNotes(input),
          },
          ...(input.trialDays > 0 ? { trial_period_days: input.trialDays } : {}),
        },
      },
      input,
    );
  }

  /** A setup-mode Checkout Session for the subscription's customer; its completion names the subscription. */
  async createMandateSetup(input: MandateSetupInput): Promise<CheckoutResult> {
    const ids = { subscription_id: input.subscriptionId };
    const session = await this.call(() =>
      this.stripe.checkout.sessions.create(
        {
          mode: 'setup',
          currency: input.currency.toLowerCase(),
          client_reference_id: input.subscriptionId,
          ...(input.providerCustomerId
            ? { customer: input.providerCustomerId }
            : { customer_email: input.customer.email }),
          metadata: ids,
          setup_intent_data: { metadata: ids },
          success_url: input.successUrl,
          cancel_url: input.cancelUrl,
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    return {
      checkoutSessionId: session.id,
      checkoutUrl: session.url ?? '',
      providerSubscriptionId: input.providerSubscriptionId,
      providerCustomerId: idOf(session.customer),
    };
  }

  /** The setup intent's payment method becomes the subscription's default_payment_method. */
  async replaceSubscriptionMandate(input: {
    providerSubscriptionId: string;
    setupId: string;
    idempotencyKey: string;
  }): Promise<{ method: string | null; bank: string | null }> {
    const intent = await this.call(() =>
      this.stripe.setupIntents.retrieve(input.setupId, { expand: ['payment_method'] }),
    );
    const pm = intent.payment_method;
    const pmId = idOf(pm);
    if (intent.status !== 'succeeded' || !pmId)
      throw new GatewayError('gateway_rejected', `setup intent ${input.setupId} holds no authorised payment method`);
    await this.call(() =>
      this.stripe.subscriptions.update(
        input.providerSubscriptionId,
        { default_payment_method: pmId },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    // Expanded by Stripe; read on its own where the expansion is not served.
    const method = typeof pm === 'object' && pm ? pm : await this.call(() => this.stripe.paymentMethods.retrieve(pmId));
    const d = paymentDetails({ payment_method: method });
    return { method: d.method, bank: d.bank };
  }

  async pauseSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() =>
      this.stripe.subscriptions.update(providerSubscriptionId, { pause_collection: { behavior: 'void' } }),
    );
  }

  async resumeSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() => this.stripe.subscriptions.update(providerSubscriptionId, { pause_collection: '' }));
  }

  async holdRenewal(input: { providerSubscriptionId: string; until: Date }): Promise<void> {
    const s = await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId));
    if (s.status === 'canceled') return; // ended meanwhile: no renewal to hold
    if (s.pause_collection && !isRenewalHold(s.pause_collection)) return; // paused by the service: nothing is charged
    await this.call(() =>
      this.stripe.subscriptions.update(input.providerSubscriptionId, {
        pause_collection: { behavior: 'keep_as_draft', resumes_at: Math.ceil(input.until.getTime() / 1000) },
      }),
    );
  }

  async releaseRenewal(input: { providerSubscriptionId: string; idempotencyKey: string }): Promise<void> {
    const s = await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId));
    if (s.status === 'canceled') return; // ended meanwhile: nothing to charge
    if (s.pause_collection && !isRenewalHold(s.pause_collection)) return; // paused by the service since
    if (s.pause_collection)
      await this.call(() => this.stripe.subscriptions.update(input.providerSubscriptionId, { pause_collection: '' }));
    const invoiceId = idOf(s.latest_invoice);
    if (!invoiceId) return;
    const invoice = await this.call(() => this.stripe.invoices.retrieve(invoiceId));
    // Stripe leaves an invoice made while collection was kept as a draft a draft: paying it finalises and charges it.
    if (invoice.status !== 'draft' || !PERIOD_BILLING_REASONS.has(String(invoice.billing_reason))) return;
    try {
      await this.stripe.invoices.pay(invoiceId, {}, { idempotencyKey: `${input.idempotencyKey}-pay` });
    } catch (err) {
      // A decline is the renewal's outcome, which invoice.payment_failed reports (dunning follows).
      if (!isDecline(err)) throw stripeError(err);
    }
  }

  async cancelSubscription(providerSubscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<void> {
    if (opts.atPeriodEnd) {
      await this.releaseAnySchedule(providerSubscriptionId);
      await this.call(() => this.stripe.subscriptions.update(providerSubscriptionId, { cancel_at_period_end: true }));
    } else {
      await this.call(() => this.stripe.subscriptions.cancel(providerSubscriptionId));
    }
  }

  /** Expires the Checkout Session; one no longer open (completed, or expired by Stripe at its expires_at) is read back. */
  async expireSubscriptionCheckout(checkout: {
    checkoutSessionId: string | null;
    providerSubscriptionId: string | null;
  }): Promise<'expired' | 'completed'> {
    const id = checkout.checkoutSessionId;
    if (!id) return 'expired';
    try {
      await this.call(() => this.stripe.checkout.sessions.expire(id));
      return 'expired';
    } catch (err) {
      if (!(err instanceof GatewayError && err.code === 'gateway_rejected')) throw err;
      const session = await this.call(() => this.stripe.checkout.sessions.retrieve(id));
      if (session.status === 'complete') return 'completed';
      if (session.status === 'expired') return 'expired';
      throw err;
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

  /**
   * A subscription schedule made from the subscription (or the one it has): the current phase runs to the end of the
   * period (or trial), the next one bills the new price from then, without proration, and the schedule releases the
   * subscription after it.
   */
  async scheduleSubscriptionPriceChange(input: ChangeSubscriptionInput): Promise<{ effectiveAt: Date }> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId));
    const s = sub as unknown as Record<string, any>;
    const item = sub.items.data[0] as unknown as Record<string, any>;
    const end = Number(sub.status === 'trialing' && s.trial_end ? s.trial_end : item.current_period_end);
    let scheduleId = idOf(s.schedule);
    if (!scheduleId) {
      const made = await this.call(() =>
        this.stripe.subscriptionSchedules.create(
          { from_subscription: input.providerSubscriptionId },
          { idempotencyKey: `${input.idempotencyKey}-schedule` },
        ),
      );
      scheduleId = made.id;
    }
    const id = scheduleId;
    const schedule = await this.call(() => this.stripe.subscriptionSchedules.retrieve(id));
    const current = (schedule.current_phase ?? schedule.phases[0]) as unknown as Record<string, any>;
    const updated = await this.call(() =>
      this.stripe.subscriptionSchedules.update(
        id,
        {
          end_behavior: 'release',
          phases: [
            {
              items: [{ price: String(item.price.id), quantity: 1 }],
              start_date: Number(current.start_date),
              end_date: end,
              ...(sub.status === 'trialing' ? { trial_end: end } : {}),
            },
            {
              items: [{ price: input.providerPriceId, quantity: 1 }],
              proration_behavior: 'none',
            },
          ],
        },
        { idempotencyKey: input.idempotencyKey },
      ),
    );
    const next = updated.phases[1] as unknown as Record<string, any> | undefined;
    return { effectiveAt: new Date(Number(next?.start_date ?? end) * 1000) };
  }

  /** Releases the subscription's schedule: the subscription keeps the price it has now. */
  async removeScheduledPriceChange(input: {
    providerSubscriptionId: string;
    providerPriceId: string;
    idempotencyKey: string;
  }): Promise<'removed' | 'applied'> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId));
    const price = (sub.items.data[0] as unknown as Record<string, any>).price?.id;
    const applied = price === input.providerPriceId ? 'applied' : 'removed';
    const id = idOf((sub as unknown as Record<string, any>).schedule);
    if (!id) return applied;
    const schedule = await this.call(() => this.stripe.subscriptionSchedules.retrieve(id));
    if (schedule.status !== 'active' && schedule.status !== 'not_started') return applied;
    await this.call(() => this.stripe.subscriptionSchedules.release(id, {}, { idempotencyKey: input.idempotencyKey }));
    return applied;
  }

  /**
   * Stripe refuses to change the cancellation of a subscription a schedule manages: one still attached (its last phase
   * running after a scheduled change took effect) is released first; the subscription keeps its price.
   */
  private async releaseAnySchedule(providerSubscriptionId: string): Promise<void> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(providerSubscriptionId));
    const id = idOf((sub as unknown as Record<string, any>).schedule);
    if (!id) return;
    const schedule = await this.call(() => this.stripe.subscriptionSchedules.retrieve(id));
    if (schedule.status === 'active' || schedule.status === 'not_started')
      await this.call(() => this.stripe.subscriptionSchedules.release(id));
  }

  async keepSubscription(providerSubscriptionId: string, idempotencyKey: string): Promise<void> {
    await this.releaseAnySchedule(providerSubscriptionId);
    await this.call(() =>
      this.stripe.subscriptions.update(providerSubscriptionId, { cancel_at_period_end: false }, { idempotencyKey }),
    );
  }

  async retrySubscriptionCharge(providerSubscriptionId: string, idempotencyKey: string): Promise<RetryChargeResult> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(providerSubscriptionId));
    const invoiceId = idOf(sub.latest_invoice);
    if (!invoiceId) return { outcome: 'nothing_due', failureReason: null };
    const invoice = await this.call(() => this.stripe.invoices.retrieve(invoiceId));
    // Paid already (by an earlier retry whose answer was lost, or otherwise), or voided: nothing to charge.
    if (invoice.status !== 'open') return { outcome: 'nothing_due', failureReason: null };
    try {
      await this.stripe.invoices.pay(invoiceId, {}, { idempotencyKey });
      return { outcome: 'succeeded', failureReason: null };
    } catch (err) {
      // A decline is Stripe's 402 card_error: the retry's outcome, not a gateway failure.
      const e = err as { type?: string; statusCode?: number; decline_code?: string; code?: string };
      if (isDecline(e)) return { outcome: 'failed', failureReason: declineReason(e) };
      throw stripeError(err);
    }
  }

  /**
   * An invoice item on the subscription, an invoice of it (not auto-advanced: Cadence pays it at once) and its payment
   * from the subscription's default payment method. Each step has its own idempotency key derived from the caller's.
   */
  async chargeSubscriptionOneOff(input: OneOffChargeInput): Promise<OneOffChargeResult> {
    const customer =
      input.providerCustomerId ??
      idOf((await this.call(() => this.stripe.subscriptions.retrieve(input.providerSubscriptionId))).customer);
    if (!customer)
      throw new GatewayError(
        'gateway_rejected',
        `Stripe: subscription ${input.providerSubscriptionId} has no customer.`,
      );
    await this.call(() =>
      this.stripe.invoiceItems.create(
        {
          customer,
          subscription: input.providerSubscriptionId,
          amount: toGatewayAmount('stripe', input.amount, input.currency),
          currency: input.currency.toLowerCase(),
          description: input.description,
        },
        { idempotencyKey: `${input.idempotencyKey}-item` },
      ),
    );
    const invoice = await this.call(() =>
      this.stripe.invoices.create(
        {
          customer,
          subscription: input.providerSubscriptionId,
          auto_advance: false,
          pending_invoice_items_behavior: 'include',
          ...(input.invoiceId ? { metadata: { invoice_id: input.invoiceId } } : {}),
        },
        { idempotencyKey: `${input.idempotencyKey}-invoice` },
      ),
    );
    try {
      const paid = await this.stripe.invoices.pay(invoice.id!, {}, { idempotencyKey: `${input.idempotencyKey}-pay` });
      const pi = (paid as unknown as Record<string, any>).payments?.data?.[0]?.payment?.payment_intent;
      return { outcome: 'succeeded', providerPaymentId: idOf(pi), failureReason: null };
    } catch (err) {
      // A decline is Stripe's 402 card_error: the charge's outcome, not a gateway failure.
      const e = err as {
        type?: string;
        statusCode?: number;
        decline_code?: string;
        code?: string;
        payment_intent?: unknown;
      };
      if (isDecline(e)) {
        const reason = e.code === 'invoice_payment_intent_requires_action' ? AUTHENTICATION_REQUIRED : declineReason(e);
        return {
          outcome: 'failed',
          providerPaymentId: idOf(e.payment_intent),
          failureReason: reason,
          // Above the mandate's limit the invoice stays open for the customer, on its hosted page.
          authenticationUrl:
            reason === AUTHENTICATION_REQUIRED
              ? ((await this.call(() => this.stripe.invoices.retrieve(invoice.id!))).hosted_invoice_url ?? null)
              : null,
        };
      }
      throw stripeError(err);
    }
  }

  async getPaymentCheckout(checkoutSessionId: string): Promise<GatewayCheckout> {
    const s = (await this.call(() =>
      this.stripe.checkout.sessions.retrieve(checkoutSessionId, { expand: ['payment_intent.latest_charge'] }),
    )) as unknown as Record<string, any>;
    const d = paymentDetails(s.payment_intent);
    const paid = s.status === 'complete' && (s.payment_status === 'paid' || s.payment_status === 'no_payment_required');
    return {
      status: paid ? 'paid' : s.status === 'expired' ? 'expired' : 'open',
      providerPaymentId: d.providerPaymentId,
      method: d.method,
      bank: d.bank,
    };
  }

  async getSubscription(providerSubscriptionId: string): Promise<GatewaySubscription> {
    const sub = await this.call(() => this.stripe.subscriptions.retrieve(providerSubscriptionId));
    const s = sub as unknown as Record<string, any>;
    const period = subscriptionPeriod(s);
    const invoiceId = idOf(sub.latest_invoice);
    const invoice = invoiceId
      ? ((await this.call(() =>
          this.stripe.invoices.retrieve(invoiceId, { expand: ['payments.data.payment.payment_intent'] }),
        )) as unknown as Record<string, any>)
      : null;
    let latestCharge: GatewaySubscription['latestCharge'] = null;
    // A zero-amount invoice (Stripe's at a trial's start) charged nothing; draft and void ones were never charged.
    if (invoice && Number(invoice.amount_due) > 0 && ['paid', 'open', 'uncollectible'].includes(invoice.status)) {
      const paid = invoice.status === 'paid';
      const bounds = invoicePeriod(invoice);
      const pi = invoice.payments?.data?.[0]?.payment?.payment_intent;
      latestCharge = {
        status: paid ? 'succeeded' : 'failed',
        failureReason: paid ? null : (paymentDetails(pi).failureReason ?? 'payment_failed'),
        periodStart: bounds.start,
        periodEnd: bounds.end,
        amount: fromGatewayAmount(
          'stripe',
          Number(paid ? invoice.amount_paid : invoice.amount_due),
          String(invoice.currency),
        ),
      };
    }
    const paused =
      s.pause_collection != null &&
      !isRenewalHold(s.pause_collection) &&
      ['active', 'past_due', 'trialing'].includes(sub.status);
    return {
      status: paused ? 'paused' : (STATUS[sub.status] ?? 'active'),
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      trialEnd: fromUnix(s.trial_end),
      cancelAtPeriodEnd: Boolean(s.cancel_at_period_end),
      latestCharge,
    };
  }

  async advanceTestClock(to: Date, opts: AdvanceOptions = {}): Promise<void> {
    if (!this.sandbox) {
      throw new GatewayError(
        'gateway_rejected',
        "Stripe: the account clock is a gateway sandbox extension; use Stripe's own test clocks against the real Stripe.",
      );
    }
    const client = opts.nothingDue
      ? this.stripe
      : (this.advancing ??= stripeClient(this.credentials.secret_key, {
          ...this.opts,
          timeoutMs: advanceTimeoutMs(this.opts),
        }));
    await this.call(() =>
      client.rawRequest('POST', '/v1/test_helpers/sandbox/advance', { frozen_time: to.getTime() / 1000 }),
    );
  }

  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): GatewayEvent {
    const signature = header(headers, 'stripe-signature');
    if (!signature) throw new GatewayError('signature_invalid', 'Missing Stripe-Signature header');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.credentials.webhook_secret);
    } catch (err) {
      throw new GatewayError(
        'signature_invalid',
        `Stripe signature verification failed: ${(err as Error).message}`,
        err,
      );
    }
    return normaliseStripeEvent(event);
  }
}

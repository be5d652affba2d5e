import crypto from 'node:crypto';
import { fromGatewayAmount, toGatewayAmount } from './amounts';
import {
  AdvanceOptions,
  ChangeSubscriptionInput,
  CheckoutResult,
  GatewayError,
  GatewayEvent,
  GatewayPort,
  GatewayCheckout,
  GatewaySubscription,
  mandateNotes,
  OneOffChargeInput,
  OneOffChargeResult,
  PaymentCheckoutInput,
  RazorpayCredentials,
  RefundInput,
  RefundResult,
  RegisterPriceInput,
  RetryChargeResult,
  SubscriptionCheckoutInput,
} from './port';
import { normaliseRazorpayEvent, RAZORPAY_EVENTS, refundStatus } from './razorpay.events';
import type { AdapterOptions } from './stripe.adapter';
import { advanceTimeoutMs, RAZORPAY_IDEMPOTENCY_HEADER, razorpayClient, RazorpayClient } from './transport';
import { razorpayPost } from '../core/adapters/razorpay-http';

/**
 * Razorpay needs a finite total_count; "until cancelled" becomes a count no subscription reaches in practice
 * (Cadence cancels or completes subscriptions itself).
 */
const UNBOUNDED_CYCLES = 1000;

/**
 * Header carrying Cadence's idempotency key. Razorpay's public API has no idempotency header, so the real gateway
 * ignores it; the sandbox honours it (same key + same body -> the first answer).
 */
export { RAZORPAY_IDEMPOTENCY_HEADER };

/** Razorpay SDK errors -> GatewayError. The SDK throws `{statusCode, error}` for answers and raw errors otherwise. */
export function razorpayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const e = err as { statusCode?: number; error?: { description?: string; code?: string } };
  if (e && typeof e === 'object' && typeof e.statusCode === 'number') {
    const msg = e.error?.description ?? e.error?.code ?? `HTTP ${e.statusCode}`;
    if (e.statusCode < 500 && e.statusCode !== 429)
      return new GatewayError('gateway_rejected', `Razorpay: ${msg}`, err);
    return new GatewayError('gateway_unavailable', `Razorpay unavailable: ${msg}`, err);
  }
  // Network errors make the SDK's own error handler throw a TypeError (it reads err.response.status): no answer.
  return new GatewayError(
    'gateway_unavailable',
    `Razorpay unavailable: ${(err as Error)?.message ?? String(err)}`,
    err,
  );
}

const STATUS: Record<string, GatewaySubscription['status']> = {
  created: 'pending_authorization',
  authenticated: 'trialing',
  active: 'active',
  pending: 'past_due',
  halted: 'halted',
  paused: 'paused',
  cancelled: 'cancelled',
  expired: 'cancelled',
  completed: 'completed',
};

const fromUnix = (v: unknown): Date | null => (typeof v === 'number' && v > 0 ? new Date(v * 1000) : null);

const header = (headers: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
};

/** Constant-time check of Razorpay's hex HMAC-SHA256 of the raw body. */
export function verifyRazorpaySignature(rawBody: Buffer, signature: string, secret: string): boolean {
  const expected = crypto.createHmac('sha256', secret).update(rawBody).digest();
  if (!/^[0-9a-f]+$/i.test(signature) || signature.length !== expected.length * 2) return false;
  return crypto.timingSafeEqual(expected, Buffer.from(signature, 'hex'));
}

type Obj = Record<string, any>;

const RENEWAL_NOT_HELD =
  "Razorpay: a subscription's renewal cannot be held; Razorpay debits a mandate only after its own pre-debit notification.";

export class RazorpayAdapter implements GatewayPort {
  readonly provider = 'razorpay' as const;
  private readonly shared: RazorpayClient;

  constructor(
    private readonly credentials: RazorpayCredentials,
    private readonly opts: AdapterOptions = {},
  ) {
    this.shared = this.client();
  }

  /** A configured SDK instance (transport.ts); one with an idempotency key is the call's own. */
  private client(idempotencyKey?: string, timeoutMs?: number): RazorpayClient {
    return razorpayClient(this.credentials, timeoutMs ? { ...this.opts, timeoutMs } : this.opts, idempotencyKey);
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw razorpayError(err);
    }
  }

  async verifyCredentials(): Promise<void> {
    if (!this.credentials.key_secret || !this.credentials.webhook_secret) {
      throw new GatewayError('gateway_rejected', 'Razorpay: key_secret and webhook_secret are required.');
    }
    await this.call(() => this.shared.plans.all({ count: 1 }));
  }

  async registerWebhook(url: string): Promise<void> {
    await this.call(() =>
      this.shared.webhooks.create({
        url,
        secret: this.credentials.webhook_secret,
        events: RAZORPAY_EVENTS,
        alert_email: '',
      } as any),
    );
  }

  async createPaymentCheckout(input: PaymentCheckoutInput): Promise<CheckoutResult> {
    const link = (await this.call(() =>
      this.client(input.idempotencyKey).paymentLink.create({
        amount: toGatewayAmount('razorpay', input.amount, input.currency),
        currency: input.currency.toUpperCase(),
        description: input.description,
        reference_id: input.paymentId,
        customer: {
          email: input.customer.email,
          ...(input.customer.name ? { name: input.customer.name } : {}),
          ...(input.customer.phone ? { contact: input.customer.phone } : {}),
        },
        notify: { sms: false, email: false },
        callback_url: input.successUrl,
        callback_method: 'get',
        // Razorpay has one callback URL for every outcome; the sandbox sends failures to notes.cancel_url.
        notes: { payment_id: input.paymentId, cancel_url: input.cancelUrl },
      } as any),
    )) as Obj;
    return { checkoutSessionId: link.id, checkoutUrl: link.short_url, providerPaymentId: null };
  }

  async refund(input: RefundInput): Promise<RefundResult> {
    const refund = (await this.call(() =>
      this.client(input.idempotencyKey).payments.refund(input.providerPaymentId, {
        amount: toGatewayAmount('razorpay', input.amount, input.currency),
        speed: 'normal',
        notes: {
          ...(input.reason ? { reason: input.reason } : {}),
          ...(input.refundId ? { refund_id: input.refundId } : {}),
          ...(input.creditInvoiceId ? { credit_invoice_id: input.creditInvoiceId } : {}),
        },
      } as any),
    )) as Obj;
    return { providerRefundId: refund.id, status: refundStatus(refund.status) ?? 'pending' };
  }

  async registerPrice(input: RegisterPriceInput): Promise<{ providerPriceId: string }> {
    const plan = (await this.call(() =>
      this.client(input.idempotencyKey).plans.create({
        period: input.frequency,
        interval: input.interval,
        item: {
          name: `${input.productName} - ${input.planName}`,
          amount: toGatewayAmount('razorpay', input.amount, input.currency),
          currency: input.currency.toUpperCase(),
        },
        notes: { price_id: input.priceId },
      } as any),
    )) as Obj;
    return { providerPriceId: plan.id };
  }

  async createSubscriptionCheckout(input: SubscriptionCheckoutInput): Promise<CheckoutResult> {
    const params: Obj = {
      plan_id: input.providerPriceId,
      total_count: input.maxCycles ?? UNBOUNDED_CYCLES,
      quantity: 1,
      customer_notify: 0,
      // Razorpay's hosted page has no redirect parameters; the sandbox reads these notes (a sandbox convention).
      notes: {
        subscription_id: input.subscriptionId,
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
        ...mandateNotes(input),
      },
    };
    // A trial is a later first charge: the mandate is authorised now, charging starts at start_at.
    if (input.trialDays > 0) params.start_at = Math.floor(Date.now() / 1000) + input.trialDays * 86_400;
    if (input.setupFee > 0) {
      params.addons = [
        {
          item: {
            name: 'Setup fee',
            amount: toGatewayAmount('razorpay', input.setupFee, input.currency),
            currency: input.currency.toUpperCase(),
          },
        },
      ];
    }
    const sub = (await this.call(() => this.client(input.idempotencyKey).subscriptions.create(params as any))) as Obj;
    return {
      checkoutSessionId: sub.id,
      checkoutUrl: sub.short_url,
      providerSubscriptionId: sub.id,
      providerCustomerId: sub.customer_id ?? null,
    };
  }

  async pauseSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() => this.shared.subscriptions.pause(providerSubscriptionId, { pause_at: 'now' }));
  }

  async resumeSubscription(providerSubscriptionId: string): Promise<void> {
    await this.call(() => this.shared.subscriptions.resume(providerSubscriptionId, { resume_at: 'now' }));
  }

  async cancelSubscription(providerSubscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<void> {
    await this.call(() => this.shared.subscriptions.cancel(providerSubscriptionId, opts.atPeriodEnd));
  }

  /** Razorpay has no way to hold one renewal (its pause skips the cycle); it debits after its own pre-debit notice. */
  async holdRenewal(): Promise<void> {
    throw new GatewayError('gateway_rejected', RENEWAL_NOT_HELD);
  }

  async releaseRenewal(): Promise<void> {
    throw new GatewayError('gateway_rejected', RENEWAL_NOT_HELD);
  }

  /**
   * The checkout of a Razorpay subscription is the subscription itself while it is `created`: cancelling it closes its
   * short_url. Read first, so a mandate authorised meanwhile is never cancelled here; a cancel refused because it ended
   * in between is read again.
   */
  async expireSubscriptionCheckout(checkout: {
    checkoutSessionId: string | null;
    providerSubscriptionId: string | null;
  }): Promise<'expired' | 'completed'> {
    const id = checkout.providerSubscriptionId ?? checkout.checkoutSessionId;
    if (!id) return 'expired';
    const outcome = async (): Promise<'expired' | 'completed' | null> => {
      const sub = (await this.call(() => this.shared.subscriptions.fetch(id))) as Obj;
      if (sub.status === 'created') return null;
      return ['cancelled', 'expired'].includes(sub.status) ? 'expired' : 'completed';
    };
    const now = await outcome();
    if (now) return now;
    try {
      await this.call(() => this.shared.subscriptions.cancel(id, false));
      return 'expired';
    } catch (err) {
      if (!(err instanceof GatewayError && err.code === 'gateway_rejected')) throw err;
      const then = await outcome();
      if (!then) throw err;
      return then;
    }
  }

  async changeSubscriptionPrice(input: ChangeSubscriptionInput): Promise<void> {
    // Razorpay has no proration of its own; Cadence bills the difference. The new plan applies from now.
    await this.call(() =>
      this.client(input.idempotencyKey).subscriptions.update(input.providerSubscriptionId, {
        plan_id: input.providerPriceId,
        schedule_change_at: 'now',
        customer_notify: 0,
      } as any),
    );
  }

  /** Razorpay's own scheduled update: the new plan from the next cycle (the first charge, in a trial). */
  async scheduleSubscriptionPriceChange(input: ChangeSubscriptionInput): Promise<{ effectiveAt: Date }> {
    const sub = (await this.call(() =>
      this.client(input.idempotencyKey).subscriptions.update(input.providerSubscriptionId, {
        plan_id: input.providerPriceId,
        schedule_change_at: 'cycle_end',
        customer_notify: 0,
      } as any),
    )) as Obj;
    const at = Number(sub.change_scheduled_at ?? sub.current_end ?? sub.charge_at);
    return { effectiveAt: new Date(at * 1000) };
  }

  /** Cancels the subscription's scheduled changes (`cancel_scheduled_changes`): it stays on its plan. */
  async removeScheduledPriceChange(input: {
    providerSubscriptionId: string;
    providerPriceId: string;
    idempotencyKey: string;
  }): Promise<'removed' | 'applied'> {
    const sub = (await this.call(() => this.shared.subscriptions.fetch(input.providerSubscriptionId))) as Obj;
    if (!sub.has_scheduled_changes) return sub.plan_id === input.providerPriceId ? 'applied' : 'removed';
    await this.call(() =>
      this.client(input.idempotencyKey).subscriptions.cancelScheduledChanges(input.providerSubscriptionId),
    );
    return 'removed';
  }

  /**
   * Razorpay's API has no page that replaces a running subscription's mandate (its token belongs to the subscription
   * authorised at checkout): refused, and the service answers 409 `mandate_update_unsupported` before asking.
   */
  async createMandateSetup(): Promise<CheckoutResult> {
    throw new GatewayError('gateway_rejected', 'Razorpay cannot replace the mandate of a running subscription');
  }

  async replaceSubscriptionMandate(): Promise<{ method: string | null; bank: string | null }> {
    throw new GatewayError('gateway_rejected', 'Razorpay cannot replace the mandate of a running subscription');
  }

  /** A cancellation at the cycle's end is a scheduled change at Razorpay: cancelling scheduled changes clears it. */
  async keepSubscription(providerSubscriptionId: string, idempotencyKey: string): Promise<void> {
    const sub = (await this.call(() => this.shared.subscriptions.fetch(providerSubscriptionId))) as Obj;
    if (!sub.has_scheduled_changes) return;
    await this.call(() => this.client(idempotencyKey).subscriptions.cancelScheduledChanges(providerSubscriptionId));
  }

  /** A POST to a sandbox extension route through the SDK's own HTTP client (its auth, base URL and error shape). */
  private sandboxPost(rzp: RazorpayClient, url: string, data: Obj): Promise<Obj> {
    return this.call(() => razorpayPost(rzp, url, data));
  }

  async retrySubscriptionCharge(providerSubscriptionId: string, idempotencyKey: string): Promise<RetryChargeResult> {
    // The real Razorpay retries a pending subscription on its own schedule and has no API to charge it now.
    if (!this.opts.sandboxUrl) return { outcome: 'nothing_due', failureReason: null };
    const answer = await this.sandboxPost(
      this.client(idempotencyKey),
      `/test_helpers/subscriptions/${encodeURIComponent(providerSubscriptionId)}/retry_charge`,
      {},
    );
    const outcome = answer.outcome === 'succeeded' || answer.outcome === 'failed' ? answer.outcome : 'nothing_due';
    return { outcome, failureReason: outcome === 'failed' ? String(answer.failure_reason ?? 'payment_failed') : null };
  }

  /**
   * Razorpay has no immediate off-session charge on a subscription: the amount becomes an add-on, which Razorpay puts
   * on the next cycle's invoice and charges with it. Hence outcome pending.
   */
  async chargeSubscriptionOneOff(input: OneOffChargeInput): Promise<OneOffChargeResult> {
    await this.call(() =>
      this.client(input.idempotencyKey).subscriptions.createAddon(input.providerSubscriptionId, {
        item: {
          name: input.description,
          amount: toGatewayAmount('razorpay', input.amount, input.currency),
          currency: input.currency.toUpperCase(),
        },
        quantity: 1,
      } as any),
    );
    return { outcome: 'pending', providerPaymentId: null, failureReason: null };
  }

  /** A payment link: paid (its first captured payment), cancelled or expired, else still open. */
  async getPaymentCheckout(checkoutSessionId: string): Promise<GatewayCheckout> {
    const link = (await this.call(() => this.shared.paymentLink.fetch(checkoutSessionId))) as Obj;
    const payment = ((link.payments as Obj[] | null) ?? []).find((p) => p?.status === 'captured') ?? null;
    const status =
      link.status === 'paid' ? 'paid' : link.status === 'cancelled' || link.status === 'expired' ? 'expired' : 'open';
    return { status, providerPaymentId: payment?.payment_id ?? null, method: payment?.method ?? null, bank: null };
  }

  async getSubscription(providerSubscriptionId: string): Promise<GatewaySubscription> {
    const sub = (await this.call(() => this.shared.subscriptions.fetch(providerSubscriptionId))) as Obj;
    const invoices = (await this.call(() =>
      this.shared.invoices.all({ subscription_id: providerSubscriptionId, count: 5 } as any),
    )) as Obj;
    // The newest invoice of a billing cycle (not the mandate authorisation's).
    const invoice =
      ((invoices.items ?? []) as Obj[]).find((i) => i.billing_start != null && Number(i.amount) > 0) ?? null;
    let latestCharge: GatewaySubscription['latestCharge'] = null;
    if (invoice && (invoice.status === 'paid' || invoice.payment_id)) {
      const paid = invoice.status === 'paid';
      let failureReason: string | null = null;
      if (!paid) {
        const payment = (await this.call(() => this.shared.payments.fetch(invoice.payment_id))) as Obj;
        failureReason = payment.error_reason ?? payment.error_code ?? 'payment_failed';
      }
      latestCharge = {
        status: paid ? 'succeeded' : 'failed',
        failureReason,
        periodStart: fromUnix(invoice.billing_start),
        periodEnd: fromUnix(invoice.billing_end),
        amount: fromGatewayAmount('razorpay', Number(invoice.amount), String(invoice.currency ?? 'INR')),
      };
    }
    const trialing = sub.status === 'authenticated';
    return {
      status: STATUS[sub.status] ?? 'active',
      currentPeriodStart: fromUnix(sub.current_start),
      currentPeriodEnd: fromUnix(sub.current_end),
      // Razorpay reports the trial (a later start_at) only while it runs.
      trialEnd: trialing ? fromUnix(sub.start_at ?? sub.charge_at) : null,
      // cancel_at_cycle_end on the entity is the sandbox's; the real gateway shows the scheduled change otherwise.
      cancelAtPeriodEnd: Boolean(sub.cancel_at_cycle_end),
      latestCharge,
    };
  }

  async advanceTestClock(to: Date, opts: AdvanceOptions = {}): Promise<void> {
    if (!this.opts.sandboxUrl) {
      throw new GatewayError(
        'gateway_rejected',
        'Razorpay: the account clock is a gateway sandbox extension; the real Razorpay has no test clock.',
      );
    }
    await this.sandboxPost(
      opts.nothingDue ? this.shared : this.client(undefined, advanceTimeoutMs(this.opts)),
      '/test_helpers/advance',
      { frozen_time: to.getTime() / 1000 },
    );
  }

  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): GatewayEvent {
    const signature = header(headers, 'x-razorpay-signature');
    if (!signature || !verifyRazorpaySignature(rawBody, signature, this.credentials.webhook_secret)) {
      throw new GatewayError('signature_invalid', 'Razorpay signature verification failed');
    }
    let body: Obj;
    try {
      body = JSON.parse(rawBody.toString('utf8'));
    } catch (err) {
      throw new GatewayError('signature_invalid', 'Razorpay webhook body is not JSON', err);
    }
    // X-Razorpay-Event-Id identifies the event across redeliveries; without it, the body itself does.
    const eventId =
      header(headers, 'x-razorpay-event-id') ??
      `body_${crypto.createHash('sha256').update(rawBody).digest('hex').slice(0, 32)}`;
    return normaliseRazorpayEvent(body, eventId);
  }
}

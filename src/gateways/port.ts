/**
 * The gateway port: everything Cadence asks of a payment gateway. Two adapters implement it over the official
 * SDKs (`stripe.adapter.ts`, `razorpay.adapter.ts`); with SANDBOX on (the default) both SDKs talk to the local
 * gateway sandbox (`sandbox/`), which speaks the same API subsets.
 *
 * Amounts here are always ISO 4217 subunits; each adapter converts to its gateway's own rules (amounts.ts).
 * Every call is bounded by GATEWAY_TIMEOUT_MS, connection setup included (transport.ts builds every SDK client); failures
 * surface as GatewayError (-> 502 gateway_unavailable / gateway_rejected).
 * Calls that create something take an idempotency key, passed to the gateway where it accepts one.
 */
export type ProviderName = 'stripe' | 'razorpay';
export const PROVIDERS: ProviderName[] = ['stripe', 'razorpay'];

export interface StripeCredentials {
  secret_key: string;
  webhook_secret: string;
}
export interface RazorpayCredentials {
  key_id: string;
  key_secret: string;
  webhook_secret: string;
}
export type Credentials = StripeCredentials | RazorpayCredentials;

/**
 * A sandbox clock advance charges what falls due on the way, so it is bounded at ADVANCE_TIMEOUT_FACTOR times
 * GATEWAY_TIMEOUT_MS (transport.ts). `nothingDue`: the caller only brings the clock up to the merchant's (nothing is
 * expected to fall due), so the call has the ordinary GATEWAY_TIMEOUT_MS bound.
 */
export interface AdvanceOptions {
  nothingDue?: boolean;
}

export type BillingFrequency = 'daily' | 'weekly' | 'monthly' | 'yearly';

export interface CustomerInfo {
  email: string;
  name?: string | null;
  phone?: string | null;
}

export interface PaymentCheckoutInput {
  /** Cadence payment id; the gateway carries it back in its events (client_reference_id / reference_id / notes). */
  paymentId: string;
  amount: number;
  currency: string;
  customer: CustomerInfo;
  description: string;
  /** Already has {PAYMENT_ID} substituted; {CHECKOUT_SESSION_ID} is left for the gateway to fill. */
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

export interface CheckoutResult {
  checkoutSessionId: string;
  checkoutUrl: string;
  /** Known at creation for some gateways (Stripe payment intent appears later; Razorpay link id). */
  providerPaymentId?: string | null;
  providerSubscriptionId?: string | null;
  providerCustomerId?: string | null;
}

export interface RefundInput {
  providerPaymentId: string;
  amount: number;
  currency: string;
  idempotencyKey: string;
  reason?: string | null;
  /**
   * Cadence's refund id, carried on the gateway's refund (Stripe metadata, Razorpay notes) so its refund event names
   * it: the event alone settles a refund whose call got no answer (docs/durable-work.md).
   */
  refundId?: string | null;
  /**
   * The Cadence invoice whose credit (from earlier credit notes) this refund returns on the charge that paid it, carried
   * the same way (`credit_invoice_id`): its event is then known as that return, already counted in what the payment
   * collected, not as a refund made at the gateway.
   */
  creditInvoiceId?: string | null;
}

export interface RefundResult {
  providerRefundId: string;
  status: 'pending' | 'succeeded' | 'failed';
}

export interface RegisterPriceInput {
  priceId: string;
  productName: string;
  planName: string;
  amount: number;
  currency: string;
  frequency: BillingFrequency;
  interval: number;
  idempotencyKey: string;
}

/**
 * The mandate's limit and terms as both adapters send them with a subscription (Stripe metadata, Razorpay notes):
 * strings, absent when not INR.
 */
export function mandateNotes(
  input: Pick<SubscriptionCheckoutInput, 'mandateAfaLimit' | 'mandate'>,
): Record<string, string> {
  return {
    ...(input.mandateAfaLimit != null ? { mandate_afa_limit: String(input.mandateAfaLimit) } : {}),
    ...(input.mandate
      ? {
          mandate_max_amount: String(input.mandate.maxAmount),
          mandate_frequency: input.mandate.frequency,
          mandate_valid_until: String(Math.floor(input.mandate.validUntil.getTime() / 1000)),
        }
      : {}),
  };
}

export interface SubscriptionCheckoutInput {
  subscriptionId: string;
  providerPriceId: string;
  amount: number;
  currency: string;
  setupFee: number;
  trialDays: number;
  /** Total billed cycles (null: until cancelled). */
  maxCycles: number | null;
  /**
   * INR: the merchant's limit for a debit without the customer's authentication (subunits), sent with the
   * subscription as `mandate_afa_limit` (metadata / notes). The real gateways apply the card networks' and NPCI's own
   * rule; the sandbox applies this one (docs/india.md).
   */
  mandateAfaLimit?: number | null;
  /**
   * INR: the terms the mandate is registered with (docs/india.md "Mandates"), sent as `mandate_max_amount`,
   * `mandate_frequency` and `mandate_valid_until` (unix seconds) in metadata / notes; the sandbox enforces them.
   */
  mandate?: { maxAmount: number; frequency: string; validUntil: Date } | null;
  customer: CustomerInfo;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

/** A hosted page where a running subscription's customer authorises a new mandate (payment method). */
export interface MandateSetupInput {
  subscriptionId: string;
  providerSubscriptionId: string;
  /** The gateway's customer the new mandate belongs to. */
  providerCustomerId: string | null;
  currency: string;
  customer: CustomerInfo;
  successUrl: string;
  cancelUrl: string;
  idempotencyKey: string;
}

export interface ChangeSubscriptionInput {
  providerSubscriptionId: string;
  providerPriceId: string;
  amount: number;
  currency: string;
  idempotencyKey: string;
}

/** A verified inbound gateway event, normalised for Cadence's services. */
export interface GatewayEvent {
  provider: ProviderName;
  /** The gateway's own event id: stored unique per provider so a repeat is a no-op. */
  eventId: string;
  /** The gateway's own event type (e.g. checkout.session.completed, payment_link.paid). */
  rawType: string;
  /**
   * subscription.authorization_failed: a payment attempt on a subscription failed without changing it. At its checkout
   * that is a declined attempt to authorise the mandate, and the checkout stays open for another. Razorpay's
   * payment.failed does not say whether its payment was the authorisation or a renewal charge (whose outcome
   * subscription.pending / .halted report): the subscriptions module counts it only while the subscription still
   * waits at its checkout.
   */
  kind:
    | 'payment.succeeded'
    | 'payment.failed'
    | 'payment.expired'
    | 'refund.succeeded'
    | 'refund.failed'
    | 'subscription.authorized'
    | 'subscription.authorization_failed'
    | 'subscription.charged'
    | 'subscription.charge_failed'
    | 'subscription.cancelled'
    | 'subscription.completed'
    | 'subscription.paused'
    | 'subscription.resumed'
    | 'subscription.mandate_setup'
    | 'subscription.mandate_revoked'
    | 'subscription.collection_paid'
    | 'ignored';
  /** Cadence ids carried through the gateway (payment, subscription or refund id), when present. */
  paymentId?: string | null;
  refundId?: string | null;
  /** On refund events: the invoice whose credit the refund returned (RefundInput.creditInvoiceId). */
  creditInvoiceId?: string | null;
  subscriptionId?: string | null;
  checkoutSessionId?: string | null;
  providerPaymentId?: string | null;
  providerSubscriptionId?: string | null;
  providerCustomerId?: string | null;
  providerRefundId?: string | null;
  /**
   * On subscription.collection_paid: the Cadence invoice a one-off charge of the subscription collected (Stripe: its
   * manual invoice's metadata), paid after the customer authenticated it.
   */
  invoiceId?: string | null;
  /** On subscription.mandate_setup: the gateway's record of the new mandate (Stripe: the setup intent). */
  setupId?: string | null;
  /** Subunits (ISO 4217), converted back from the gateway's own representation. */
  amount?: number | null;
  currency?: string | null;
  /** Why the payment or mandate authorisation failed (the gateway's decline or error reason). */
  failureReason?: string | null;
  /**
   * On subscription.charge_failed with failureReason `authentication_required`: the gateway's page where the customer
   * authenticates the debit (Stripe: the invoice's hosted_invoice_url; Razorpay: the invoice's short_url).
   */
  authenticationUrl?: string | null;
  /** How it was paid / how the mandate was set up: the gateway's method name (`card`, `upi`, `emandate`, ...). */
  method?: string | null;
  /** The bank behind it (card issuer, UPI PSP bank from the VPA's handle, e-mandate bank), normalised by banks.ts. */
  bank?: string | null;
  /**
   * Subscription kinds: the period the event is about, as the gateway counts it (to the second). On charged /
   * charge_failed: the charged period (Stripe: the invoice line's period; Razorpay: current_start / current_end).
   * On authorized without a trial: the first period, when the event carries it.
   */
  periodStart?: Date | null;
  periodEnd?: Date | null;
  /** On authorized with a trial: when the gateway ends the trial and first charges. */
  trialEnd?: Date | null;
  /** On charged / charge_failed: the charge attempt for that period (1 = the scheduled charge, 2.. = retries), when known. */
  attempt?: number | null;
  /**
   * On subscription.cancelled: true when a subscription checkout failed, expired or was cancelled before the mandate
   * was authorised (created -> cancelled); false when the gateway ended a running subscription.
   */
  checkoutFailed?: boolean;
  occurredAt: Date;
  raw: unknown;
}

/** A one-off payment's hosted checkout as the gateway holds it now (reconciliation: what its webhook should have said). */
export interface GatewayCheckout {
  /** open: not paid yet (or still processing); expired: it can no longer be paid (expired or cancelled). */
  status: 'open' | 'paid' | 'expired';
  providerPaymentId: string | null;
  method: string | null;
  bank: string | null;
}

/** A subscription as the gateway holds it now (reconciliation: what webhooks may have failed to say). */
export interface GatewaySubscription {
  status:
    'pending_authorization' | 'trialing' | 'active' | 'past_due' | 'paused' | 'cancelled' | 'completed' | 'halted';
  currentPeriodStart: Date | null;
  currentPeriodEnd: Date | null;
  trialEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  /** The newest charge of a period (not the mandate authorisation, not a zero-amount trial invoice); null: none yet. */
  latestCharge: GatewayCharge | null;
}

export interface GatewayCharge {
  status: 'succeeded' | 'failed';
  failureReason: string | null;
  periodStart: Date | null;
  periodEnd: Date | null;
  /** Subunits (ISO 4217). */
  amount: number | null;
}

export interface RetryChargeResult {
  /** nothing_due: no open charge to retry (already paid, or the gateway retries on its own schedule). */
  outcome: 'succeeded' | 'failed' | 'nothing_due';
  failureReason: string | null;
}

export interface OneOffChargeInput {
  providerSubscriptionId: string;
  /** The gateway's customer, when Cadence knows it (Stripe: read from the subscription otherwise). */
  providerCustomerId: string | null;
  /** Subunits (ISO 4217). */
  amount: number;
  currency: string;
  description: string;
  idempotencyKey: string;
  /** The Cadence invoice the charge collects, carried on the gateway's invoice so its later payment maps back. */
  invoiceId?: string | null;
}

/** The failure reason of a mandate debit above its limit, waiting for the customer's authentication (docs/india.md). */
export const AUTHENTICATION_REQUIRED = 'authentication_required';

export interface OneOffChargeResult {
  /** pending: the gateway collects it later (Razorpay: an add-on charged with the next cycle). */
  outcome: 'succeeded' | 'failed' | 'pending';
  providerPaymentId: string | null;
  failureReason: string | null;
  /**
   * With failureReason `authentication_required` (a debit above the mandate's limit): the gateway's page where the
   * customer authenticates it; the gateway's invoice stays open until then (Stripe: its hosted_invoice_url).
   */
  authenticationUrl?: string | null;
}

export interface GatewayPort {
  readonly provider: ProviderName;
  /** One cheap authenticated call; throws GatewayError('gateway_rejected') for bad credentials. */
  verifyCredentials(): Promise<void>;
  /** Points the gateway's event notifications at Cadence (sandbox: registers url + signing secret). */
  registerWebhook(url: string): Promise<void>;
  createPaymentCheckout(input: PaymentCheckoutInput): Promise<CheckoutResult>;
  refund(input: RefundInput): Promise<RefundResult>;
  registerPrice(input: RegisterPriceInput): Promise<{ providerPriceId: string }>;
  createSubscriptionCheckout(input: SubscriptionCheckoutInput): Promise<CheckoutResult>;
  pauseSubscription(providerSubscriptionId: string): Promise<void>;
  resumeSubscription(providerSubscriptionId: string): Promise<void>;
  /**
   * Holds the next renewal's debit until `until` (docs/india.md, a pre-debit notice sent late): the gateway still
   * renews the period but makes its invoice without charging it (Stripe: pause_collection keep_as_draft). Nothing is
   * changed when the service's own pause holds the subscription. Razorpay refuses: it debits only after its own
   * pre-debit notification.
   */
  holdRenewal(input: { providerSubscriptionId: string; until: Date }): Promise<void>;
  /**
   * Ends a hold: collection resumes, and a renewal invoice kept as a draft meanwhile is charged now (its outcome
   * reported by the gateway's events, as a renewal's). Nothing when the service's own pause holds the subscription.
   */
  releaseRenewal(input: { providerSubscriptionId: string; idempotencyKey: string }): Promise<void>;
  cancelSubscription(providerSubscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<void>;
  changeSubscriptionPrice(input: ChangeSubscriptionInput): Promise<void>;
  /**
   * Moves the subscription to a price at the end of its current period (or trial), changing nothing before then and
   * replacing a change scheduled earlier (Stripe: a subscription schedule whose next phase has the new price, no
   * proration; Razorpay: an update with `schedule_change_at: cycle_end`). Answers when the gateway applies it.
   */
  scheduleSubscriptionPriceChange(input: ChangeSubscriptionInput): Promise<{ effectiveAt: Date }>;
  /**
   * Drops a scheduled price change: the gateway goes on charging the current price (nothing scheduled: done).
   * `applied`: the gateway already moved to `providerPriceId` (the period ended meanwhile), so nothing was dropped.
   */
  removeScheduledPriceChange(input: {
    providerSubscriptionId: string;
    providerPriceId: string;
    idempotencyKey: string;
  }): Promise<'removed' | 'applied'>;
  /**
   * A hosted page where the customer of a running subscription authorises a new mandate (Stripe: a setup-mode Checkout
   * Session for the subscription's customer, reported by subscription.mandate_setup). Razorpay offers no such page for
   * a subscription: GatewayError('gateway_rejected').
   */
  createMandateSetup(input: MandateSetupInput): Promise<CheckoutResult>;
  /**
   * Makes a new mandate (`setupId`, from subscription.mandate_setup) the one the subscription's later charges use
   * (Stripe: the setup intent's payment method as `default_payment_method`). Repeating it changes nothing more.
   */
  replaceSubscriptionMandate(input: {
    providerSubscriptionId: string;
    setupId: string;
    idempotencyKey: string;
  }): Promise<{
    method: string | null;
    bank: string | null;
  }>;
  /** Clears a cancellation at the period's end: the subscription renews (none set: done). */
  keepSubscription(providerSubscriptionId: string, idempotencyKey: string): Promise<void>;
  /**
   * Charges the subscription's open (failed) charge again now: Stripe pays its latest open invoice; Razorpay (sandbox
   * only; the real Razorpay retries on its own schedule and answers nothing_due here) retries the pending cycle.
   * A decline is an outcome, not an error. In the sandbox the resulting webhook has been delivered and answered when
   * this returns.
   */
  retrySubscriptionCharge(providerSubscriptionId: string, idempotencyKey: string): Promise<RetryChargeResult>;
  /**
   * Collects a one-off amount (a plan change's adjustment) from the subscription's mandate: Stripe invoices and pays it
   * now (a decline is outcome failed, not an error); Razorpay has no immediate off-session charge on a subscription and
   * adds it to the next cycle's invoice (outcome pending).
   */
  chargeSubscriptionOneOff(input: OneOffChargeInput): Promise<OneOffChargeResult>;
  /**
   * Ends a subscription's hosted mandate checkout that nobody completed, so it can no longer be completed (Stripe:
   * expires the Checkout Session; Razorpay: cancels the still-`created` subscription). A checkout that is already
   * over is an answer, not an error: `expired` when it can no longer complete (expired, cancelled, failed), `completed`
   * when the customer authorised the mandate first (its event moves the subscription).
   */
  expireSubscriptionCheckout(checkout: {
    checkoutSessionId: string | null;
    providerSubscriptionId: string | null;
  }): Promise<'expired' | 'completed'>;
  /** A one-off payment's checkout as the gateway holds it (Stripe: the Checkout Session; Razorpay: the payment link). */
  getPaymentCheckout(checkoutSessionId: string): Promise<GatewayCheckout>;
  /** The subscription as the gateway holds it, with its latest charge. */
  getSubscription(providerSubscriptionId: string): Promise<GatewaySubscription>;
  /**
   * Sandbox only (a real gateway: GatewayError('gateway_rejected')): moves the sandbox account's clock to `to`
   * (never backwards) and first charges every renewal, trial end and period-end cancellation due by then, in time
   * order, each webhook delivered and answered before this returns.
   */
  advanceTestClock(to: Date, opts?: AdvanceOptions): Promise<void>;
  /** Verifies the signature (constant time) and normalises the event; throws GatewayError('signature_invalid'). */
  parseEvent(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): GatewayEvent;
}

export class GatewayError extends Error {
  constructor(
    readonly code: 'gateway_unavailable' | 'gateway_rejected' | 'signature_invalid',
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'GatewayError';
  }
}

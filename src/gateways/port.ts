/**
 * The gateway port: everything Cadence asks of a payment gateway. Two adapters implement it over the official
 * SDKs (`stripe.adapter.ts`, `razorpay.adapter.ts`); with SANDBOX on (the default) both SDKs talk to the local
 * gateway sandbox (`sandbox/`), which speaks the same API subsets.
 *
 * Amounts here are always ISO 4217 subunits; each adapter converts to its gateway's own rules (amounts.ts).
 * Every call has a timeout; failures surface as GatewayError (-> 502 gateway_unavailable / gateway_rejected).
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

export interface SubscriptionCheckoutInput {
  subscriptionId: string;
  providerPriceId: string;
  amount: number;
  currency: string;
  setupFee: number;
  trialDays: number;
  /** Total billed cycles (null: until cancelled). */
  maxCycles: number | null;
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
  kind:
    | 'payment.succeeded'
    | 'payment.failed'
    | 'payment.expired'
    | 'refund.succeeded'
    | 'refund.failed'
    | 'subscription.authorized'
    | 'subscription.charged'
    | 'subscription.charge_failed'
    | 'subscription.cancelled'
    | 'subscription.completed'
    | 'subscription.paused'
    | 'subscription.resumed'
    | 'ignored';
  /** Cadence ids carried through the gateway (payment or subscription id), when present. */
  paymentId?: string | null;
  subscriptionId?: string | null;
  checkoutSessionId?: string | null;
  providerPaymentId?: string | null;
  providerSubscriptionId?: string | null;
  providerCustomerId?: string | null;
  providerRefundId?: string | null;
  /** Subunits (ISO 4217), converted back from the gateway's own representation. */
  amount?: number | null;
  currency?: string | null;
  failureReason?: string | null;
  method?: string | null;
  bank?: string | null;
  occurredAt: Date;
  raw: unknown;
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
  cancelSubscription(providerSubscriptionId: string, opts: { atPeriodEnd: boolean }): Promise<void>;
  changeSubscriptionPrice(input: ChangeSubscriptionInput): Promise<void>;
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

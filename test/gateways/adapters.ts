import crypto from 'node:crypto';
import { createGateway, GatewayEvent, GatewayPort } from '../../src/gateways';
import type { Credentials, RazorpayCredentials, RegisterPriceInput, StripeCredentials } from '../../src/gateways/port';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { useGatewaySandbox } from '../harness/sandbox';

/** Shared by the adapter tests: each gateway adapter against the sandbox, and what differs between them. */

export const randomKey = (prefix: string) => `${prefix}${crypto.randomBytes(12).toString('hex')}`;

export type PaymentInput = Parameters<GatewayPort['createPaymentCheckout']>[0];
export type SubscriptionInput = Parameters<GatewayPort['createSubscriptionCheckout']>[0];

/**
 * What the contract suite needs to know of one adapter: its credentials, and the provider's own spelling of the
 * same port behaviour (id prefixes, raw event names, a success URL's placeholders).
 */
export interface AdapterProfile<C extends Credentials = Credentials> {
  provider: 'stripe' | 'razorpay';
  credentials(): C;
  /** Credentials the gateway refuses (wrong key prefixes, another provider's key). */
  badCredentials(good: C): C[];
  customer: PaymentInput['customer'];
  successUrl(paymentId: string): string;
  /** Prefix of a registered price's id. */
  priceId: RegExp;
  /** The success URL of a subscription checkout, and where the sandbox sends the buyer for it. */
  subscriptionSuccess: { url: string; location(checkoutSessionId: string): string };
  /** The raw event names of a renewal charge. */
  renewalEvents: string[];
  /** Changes the amount in a delivered event body (so its signature no longer matches). */
  tamper(body: string): string;
  /** A checkout form that authorises a mandate, and what the events then say of the method and bank. */
  mandateForm: { method: string; bank: string };
  /** The raw event that says a subscription's mandate is authorised. */
  authorizedRawType: string;
  /** The raw event of a failed later charge with this decline reason. */
  failedRawType(reason: string): string;
  /** getSubscription's status after a later charge failed with this reason. */
  failedStatus(reason: string): string;
  /** The raw events of a subscription checkout that ended without a mandate, and of a running subscription's end. */
  cancelledRawType: { checkout: string; running: string };
  /**
   * The event of a declined attempt to authorise a mandate (without a trial), sent before the checkout ends or while it
   * stays open, and what the adapter makes of it: Razorpay's payment.failed names the subscription; Stripe's
   * PaymentIntent of a subscription-mode Checkout names nothing of the merchant's (ignored).
   */
  declinedAttempt: { rawType: string; kind: string };
  /** Whether the gateway itself ends a subscription after max_cycles (Razorpay's total_count; Stripe has none). */
  endsAfterMaxCycles: boolean;
  /** Payment methods whose subscriptions the gateway refuses to move to another plan. */
  planChangeRefused: string[];
}

export const STRIPE: AdapterProfile<StripeCredentials> = {
  provider: 'stripe',
  credentials: () => ({ secret_key: randomKey('sk_test_'), webhook_secret: randomKey('whsec_') }),
  badCredentials: () =>
    ['pk_test_abc', 'sk_prod_abc', 'rzp_test_abc'].map((secret_key) => ({ secret_key, webhook_secret: 'whsec_x' })),
  customer: { email: 'buyer@example.com', name: 'Buyer' },
  successUrl: (paymentId) => `https://merchant.example/ok?payment=${paymentId}&session={CHECKOUT_SESSION_ID}`,
  priceId: /^price_/,
  subscriptionSuccess: {
    url: 'https://merchant.example/sub/ok?s={CHECKOUT_SESSION_ID}',
    location: (session) => `https://merchant.example/sub/ok?s=${session}`,
  },
  renewalEvents: ['invoice.paid'],
  tamper: (body) => body.replace('"amount_total":49900', '"amount_total":1'),
  mandateForm: { method: 'card', bank: 'ICICI' },
  authorizedRawType: 'checkout.session.completed',
  failedRawType: () => 'invoice.payment_failed',
  failedStatus: () => 'past_due',
  cancelledRawType: { checkout: 'checkout.session.expired', running: 'customer.subscription.deleted' },
  declinedAttempt: { rawType: 'payment_intent.payment_failed', kind: 'ignored' },
  endsAfterMaxCycles: false,
  planChangeRefused: [],
};

export const RAZORPAY: AdapterProfile<RazorpayCredentials> = {
  provider: 'razorpay',
  credentials: () => ({ key_id: randomKey('rzp_test_'), key_secret: randomKey(''), webhook_secret: randomKey('') }),
  badCredentials: (good) => ['rzp_prod_x', 'sk_test_abc', ''].map((key_id) => ({ ...good, key_id })),
  customer: { email: 'buyer@example.com', name: 'Buyer', phone: '+919999999999' },
  successUrl: (paymentId) => `https://merchant.example/ok?payment=${paymentId}`,
  priceId: /^plan_/,
  subscriptionSuccess: { url: 'https://merchant.example/sub/ok', location: () => 'https://merchant.example/sub/ok' },
  renewalEvents: ['subscription.charged'],
  tamper: (body) => body.replace('49900', '1'),
  mandateForm: { method: 'emandate', bank: 'SBI' },
  authorizedRawType: 'subscription.authenticated',
  failedRawType: (reason) => (reason === 'stolen_card' ? 'subscription.halted' : 'subscription.pending'),
  failedStatus: (reason) => (reason === 'stolen_card' ? 'halted' : 'past_due'),
  cancelledRawType: { checkout: 'subscription.cancelled', running: 'subscription.cancelled' },
  declinedAttempt: { rawType: 'payment.failed', kind: 'subscription.authorization_failed' },
  endsAfterMaxCycles: true,
  planChangeRefused: ['upi', 'emandate'],
};

export const ADAPTERS: AdapterProfile[] = [STRIPE, RAZORPAY] as AdapterProfile[];

export interface AdapterUnderTest<C extends Credentials = Credentials> {
  profile: AdapterProfile<C>;
  credentials: C;
  /** The adapter, verified and with its webhook registered on the harness's receiver. */
  readonly gw: GatewayPort;
  readonly env: ReturnType<typeof useGatewaySandbox>;
  /** Everything the receiver got since the last call, verified and normalised by the adapter. */
  events(): GatewayEvent[];
  paymentInput(over?: Partial<PaymentInput>): PaymentInput;
  subscriptionInput(over?: Partial<SubscriptionInput>): SubscriptionInput;
  /** Registers a monthly INR 999.00 price (in the file's or block's beforeAll) and answers its provider id; others with `over`. */
  registerPrice(over?: Partial<RegisterPriceInput>): Promise<string>;
  /** The sandbox account of these credentials. */
  readonly accountKey: string;
  /** The sandbox account's clock. */
  now(): Promise<Date>;
}

/** One adapter against its own sandbox for the file or describe block it is called in (registers the hooks). */
export function useAdapter<C extends Credentials>(profile: AdapterProfile<C>): AdapterUnderTest<C> {
  const env = useGatewaySandbox();
  const credentials = profile.credentials();
  let gw: GatewayPort | null = null;
  let priceId = '';
  beforeAll(async () => {
    gw = createGateway(profile.provider, credentials, { sandboxUrl: env.sandbox.url });
    await gw.verifyCredentials();
    await gw.registerWebhook(`${env.receiver.url}/hook`);
  });
  const adapter = () => {
    if (!gw) throw new Error('useAdapter: read before its beforeAll ran');
    return gw;
  };
  return {
    profile,
    credentials,
    get gw() {
      return adapter();
    },
    env,
    events: () => env.receiver.take().map((r) => adapter().parseEvent(r.raw, r.headers)),
    paymentInput(over = {}) {
      const paymentId = crypto.randomUUID();
      return {
        paymentId,
        amount: 49900,
        currency: 'INR',
        customer: profile.customer,
        description: 'Pro pack',
        successUrl: profile.successUrl(paymentId),
        cancelUrl: 'https://merchant.example/cancelled',
        idempotencyKey: crypto.randomUUID(),
        ...over,
      };
    },
    subscriptionInput(over = {}) {
      return {
        subscriptionId: crypto.randomUUID(),
        providerPriceId: priceId,
        amount: 99900,
        currency: 'INR',
        setupFee: 0,
        trialDays: 0,
        maxCycles: null,
        customer: { email: 'sub@example.com' },
        successUrl: profile.subscriptionSuccess.url,
        cancelUrl: 'https://merchant.example/sub/cancel',
        idempotencyKey: crypto.randomUUID(),
        ...over,
      };
    },
    async registerPrice(over = {}) {
      const { providerPriceId } = await adapter().registerPrice({
        priceId: crypto.randomUUID(),
        productName: 'Cadence Pro',
        planName: 'Monthly',
        amount: 99900,
        currency: 'INR',
        frequency: 'monthly',
        interval: 1,
        idempotencyKey: crypto.randomUUID(),
        ...over,
      });
      // The default price of subscriptionInput() is the first one registered without overrides.
      if (!priceId && Object.keys(over).length === 0) priceId = providerPriceId;
      return providerPriceId;
    },
    get accountKey() {
      return sandboxAccountKey(profile.provider, credentials);
    },
    now() {
      return env.sandbox.sandbox.now(sandboxAccountKey(profile.provider, credentials));
    },
  };
}

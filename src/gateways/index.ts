import { GatewayPort, ProviderName, RazorpayCredentials, StripeCredentials, Credentials } from './port';
import { RazorpayAdapter } from './razorpay.adapter';
import { AdapterOptions, StripeAdapter } from './stripe.adapter';

export * from './port';
export { toGatewayAmount, fromGatewayAmount, gatewayExponent } from './amounts';
export { StripeAdapter } from './stripe.adapter';
export { STRIPE_EVENTS } from './stripe.events';
export type { AdapterOptions } from './stripe.adapter';
export { RazorpayAdapter } from './razorpay.adapter';
export { RAZORPAY_EVENTS } from './razorpay.events';

/**
 * The adapter for one connection. With `sandboxUrl` (the service default) both SDKs talk to the local sandbox;
 * without it, to the real gateways.
 */
export function createGateway(
  provider: ProviderName,
  credentials: Credentials,
  opts: AdapterOptions = {},
): GatewayPort {
  switch (provider) {
    case 'stripe':
      return new StripeAdapter(credentials as StripeCredentials, opts);
    case 'razorpay':
      return new RazorpayAdapter(credentials as RazorpayCredentials, opts);
    default:
      throw new Error(`Unknown provider: ${String(provider)}`);
  }
}

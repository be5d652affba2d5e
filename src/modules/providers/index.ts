/**
 * Gateway connections (Stripe, Razorpay) of a merchant.
 * The module's public surface: other modules import it only through this file.
 */
export { Provider, ProviderConnection } from './provider-connection.entities';
export { DeletedObject, ProviderResolver } from './provider.resolver';
export { fromGatewayError, ProviderService } from './provider.service';

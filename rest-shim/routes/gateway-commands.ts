import type { Route } from '../routes';

/** Durable gateway commands (src/modules/gateway-commands): what the service asked of a gateway after a change. */
export const GATEWAY_COMMAND_ROUTES: Route[] = [
  {
    method: 'get',
    path: '/gateway-commands',
    tag: 'Gateway commands',
    summary:
      'List gateway calls made after changes committed, newest first (filters: subscription_id, payment_id, status): each retried until the gateway has done it, or given up (event gateway_command.failed).',
    document: `query($first: Int, $after: String, $subscriptionId: ID, $paymentId: ID, $status: GatewayCommandStatus) {
      gatewayCommands(first: $first, after: $after, subscriptionId: $subscriptionId, paymentId: $paymentId, status: $status) {
        edges { node { ...GatewayCommandFields } } pageInfo { hasNextPage endCursor } } }`,
  },
];

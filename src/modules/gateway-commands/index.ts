/**
 * Durable gateway calls after commits (docs/durable-work.md).
 * The module's public surface: other modules import it only through this file.
 */
export { GatewayCommand, GatewayCommandStatus } from './gateway-command.entities';
export { commandsByPayment, commandsBySubscription, gatewayCommandResolvers } from './gateway-command.resolver';
export { GatewayCommands } from './gateway-command.service';
export type { CommandHandler, NewCommand, ServiceCommand } from './gateway-command.service';
export { commandQueueDepth, LATEST_COMMANDS } from './gateway-command.store';
export type { CommandJob } from './gateway-command.store';

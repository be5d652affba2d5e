/** Durable gateway calls after commits (docs/durable-work.md): the public surface other modules use. */
export { GatewayCommands } from './gateway-command.service';
export type { CommandHandler, NewCommand } from './gateway-command.service';
export type { CommandJob } from './gateway-command.store';
export { GatewayCommand, GatewayCommandStatus } from './gateway-command.entities';

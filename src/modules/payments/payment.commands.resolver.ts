import { Ctx as C, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { commandsByPayment, GatewayCommand, LATEST_COMMANDS } from '../gateway-commands';
import { Payment } from './payment.entities';

@Resolver(() => Payment)
export class PaymentCommandsResolver {
  @FieldResolver(() => [GatewayCommand], {
    description: `The gateway calls this payment's changes led to (refunds), newest first (the latest ${LATEST_COMMANDS}).`,
  })
  gatewayCommands(@Root() payment: Payment, @C() ctx: Ctx) {
    return commandsByPayment(ctx).load(payment.id);
  }
}

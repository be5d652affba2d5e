import { Ctx as C, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { commandsBySubscription, GatewayCommand, LATEST_COMMANDS } from '../gateway-commands';
import { BillingSubscription } from './subscription.entities';

@Resolver(() => BillingSubscription)
export class SubscriptionCommandsResolver {
  @FieldResolver(() => [GatewayCommand], {
    description: `The gateway calls this subscription's changes led to, newest first (the latest ${LATEST_COMMANDS}).`,
  })
  gatewayCommands(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return commandsBySubscription(ctx).load(sub.id);
  }
}

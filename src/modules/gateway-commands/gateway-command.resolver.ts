import { Args, ArgsType, Ctx as C, Field, FieldResolver, ID, Query, Resolver, Root } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { Payment } from '../payments/payment.entities';
import { BillingSubscription } from '../subscriptions/subscription.entities';
import { GatewayCommand, GatewayCommandStatus } from './gateway-command.entities';
import { latestCommandsOf, LATEST_COMMANDS } from './gateway-command.store';

export const GatewayCommandConnection = ConnectionType(GatewayCommand);

@ArgsType()
export class GatewayCommandsArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) subscriptionId?: string | null;
  @Field(() => ID, { nullable: true }) paymentId?: string | null;
  @Field(() => GatewayCommandStatus, { nullable: true }) status?: GatewayCommandStatus | null;
}

const bySubscription = defineLoader<string, GatewayCommand[]>('commandsBySubscription', async (ctx, ids) =>
  groupBy(ids, await latestCommandsOf(ctx.em, 'subscription_id', ids), (c) => c.subscriptionId!),
);
const byPayment = defineLoader<string, GatewayCommand[]>('commandsByPayment', async (ctx, ids) =>
  groupBy(ids, await latestCommandsOf(ctx.em, 'payment_id', ids), (c) => c.paymentId!),
);

@Resolver(() => GatewayCommand)
export class GatewayCommandResolver {
  @Query(() => GatewayCommandConnection, { description: 'Gateway calls made after changes committed, newest first (durable: retried until done or given up).' })
  gatewayCommands(@C() ctx: Ctx, @Args() args: GatewayCommandsArgs) {
    return services(ctx).commands.list(ctx, args);
  }
}

@Resolver(() => BillingSubscription)
export class SubscriptionCommandsResolver {
  @FieldResolver(() => [GatewayCommand], { description: `The gateway calls this subscription's changes led to, newest first (the latest ${LATEST_COMMANDS}).` })
  gatewayCommands(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return bySubscription(ctx).load(sub.id);
  }
}

@Resolver(() => Payment)
export class PaymentCommandsResolver {
  @FieldResolver(() => [GatewayCommand], { description: `The gateway calls this payment's changes led to (refunds), newest first (the latest ${LATEST_COMMANDS}).` })
  gatewayCommands(@Root() payment: Payment, @C() ctx: Ctx) {
    return byPayment(ctx).load(payment.id);
  }
}

export const gatewayCommandResolvers: ClassType[] = [GatewayCommandResolver, SubscriptionCommandsResolver, PaymentCommandsResolver];

import { Args, ArgsType, Ctx as C, Field, ID, Query, Resolver } from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { GatewayCommand, GatewayCommandStatus } from './gateway-command.entities';
import { latestCommandsOf } from './gateway-command.store';

export const GatewayCommandConnection = ConnectionType(GatewayCommand);

@ArgsType()
export class GatewayCommandsArgs extends PageArgs {
  @Field(() => ID, { nullable: true }) subscriptionId?: string | null;
  @Field(() => ID, { nullable: true }) paymentId?: string | null;
  @Field(() => GatewayCommandStatus, { nullable: true }) status?: GatewayCommandStatus | null;
}

/** The latest commands of each subscription, one query per page (BillingSubscription.gatewayCommands). */
export const commandsBySubscription = defineLoader<string, GatewayCommand[]>(
  'commandsBySubscription',
  async (ctx, ids) => groupBy(ids, await latestCommandsOf(ctx.em, 'subscription_id', ids), (c) => c.subscriptionId!),
);
/** The latest commands of each payment, one query per page (Payment.gatewayCommands). */
export const commandsByPayment = defineLoader<string, GatewayCommand[]>('commandsByPayment', async (ctx, ids) =>
  groupBy(ids, await latestCommandsOf(ctx.em, 'payment_id', ids), (c) => c.paymentId!),
);

@Resolver(() => GatewayCommand)
export class GatewayCommandResolver {
  @Query(() => GatewayCommandConnection, {
    description: 'Gateway calls made after changes committed, newest first (durable: retried until done or given up).',
  })
  gatewayCommands(@C() ctx: Ctx, @Args() args: GatewayCommandsArgs) {
    return services(ctx).commands.list(ctx, args);
  }
}

export const gatewayCommandResolvers: ClassType[] = [GatewayCommandResolver];

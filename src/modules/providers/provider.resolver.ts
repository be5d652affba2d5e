import { Arg, Args, Ctx as C, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { ProviderConnection } from './provider-connection.entities';
import { ConnectProviderInput } from './provider.inputs';

@ObjectType()
export class DeletedObject {
  @Field(() => ID) id!: string;
  @Field() object!: string;
  @Field() deleted!: boolean;
}

export const ProviderConnectionConnection = ConnectionType(ProviderConnection);

@Resolver(() => ProviderConnection)
export class ProviderResolver {
  @Query(() => ProviderConnectionConnection, { description: "This mode's gateway connections, newest first." })
  providerConnections(@C() ctx: Ctx, @Args() args: PageArgs) {
    return services(ctx).providers.list(ctx, args);
  }

  @Mutation(() => ProviderConnection, {
    description: 'Connects a gateway account; credentials are checked, sealed and never returned.',
  })
  connectProvider(@C() ctx: Ctx, @Arg('input') input: ConnectProviderInput) {
    return services(ctx).providers.connect(ctx, input);
  }

  @Mutation(() => DeletedObject)
  async deleteProviderConnection(@C() ctx: Ctx, @Arg('id', () => ID) id: string): Promise<DeletedObject> {
    await services(ctx).providers.remove(ctx, id);
    return { id, object: 'provider_connection', deleted: true };
  }
}

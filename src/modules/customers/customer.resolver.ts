import { Arg, Args, ArgsType, Ctx as C, Field, ID, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { Money } from '../../core/scalars';
import { services } from '../../services';
import { Customer } from './customer.entities';

export const CustomerConnection = ConnectionType(Customer);

/** An amount in one currency (Customer.lifetimeRevenue: the payments module answers it). */
@ObjectType()
export class CurrencyAmount {
  @Field() currency!: string;
  @Field(() => Money) amount!: number;
}

@ArgsType()
class CustomersArgs extends PageArgs {
  @Field(() => String, { nullable: true }) email?: string | null;
}

@Resolver(() => Customer)
export class CustomerResolver {
  @Query(() => Customer)
  customer(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).customers.customer(ctx, id);
  }

  @Query(() => CustomerConnection, { description: 'Customers, newest first.' })
  customers(@C() ctx: Ctx, @Args() args: CustomersArgs) {
    return services(ctx).customers.customers(ctx, args);
  }
}

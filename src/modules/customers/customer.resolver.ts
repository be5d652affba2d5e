import { Arg, Args, ArgsType, Ctx as C, Field, ID, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { Money } from '../../core/scalars';
import { services } from '../../services';
import { IDEMPOTENCY_KEY, storedEntity, withIdempotency } from '../idempotency';
import { Customer } from './customer.entities';
import { CreateCustomerInput, UpdateCustomerInput } from './customer.inputs';

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

  @Mutation(() => Customer, {
    description:
      'Makes a customer before any purchase (201 over REST). Its e-mail is unique per merchant and mode: one in use answers customer_exists.',
  })
  createCustomer(
    @C() ctx: Ctx,
    @Arg('input') input: CreateCustomerInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    return withIdempotency(
      ctx,
      idempotencyKey,
      { operation: 'createCustomer', input, result: storedEntity(Customer) },
      (attempt) => services(ctx).customers.create(ctx, input, attempt),
    );
  }

  @Mutation(() => Customer, {
    description: "Changes a customer's details: an omitted field is kept, null clears it (email cannot be cleared).",
  })
  updateCustomer(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: UpdateCustomerInput) {
    return services(ctx).customers.update(ctx, id, input);
  }
}

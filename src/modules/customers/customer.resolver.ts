import { Arg, Args, ArgsType, Ctx as C, Field, FieldResolver, ID, Int, ObjectType, Query, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { countByCustomer } from '../subscriptions/subscription.store';
import { defineLoader } from '../../core/context';
import { currentMerchant } from '../merchants/current-merchant';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { Money } from '../../core/scalars';
import { services } from '../../services';
import { Customer } from './customer.entities';
import { lifetimeRevenueByCustomer } from './customer.store';

export const CustomerConnection = ConnectionType(Customer);

@ObjectType()
export class CurrencyAmount {
  @Field() currency!: string;
  @Field(() => Money) amount!: number;
}

@ArgsType()
class CustomersArgs extends PageArgs {
  @Field(() => String, { nullable: true }) email?: string | null;
}

/** Lifetime revenue per customer and currency (paid invoices and uninvoiced payments, less refunds: customer.store.ts), one query per page. */
const revenueByCustomer = defineLoader<string, CurrencyAmount[]>('revenueByCustomer', async (ctx, ids) => {
  const rows = await lifetimeRevenueByCustomer(ctx.em, ids);
  return ids.map((id) =>
    rows.filter((r) => r.customerId === id).map((r) => Object.assign(new CurrencyAmount(), { currency: r.currency, amount: r.amount })),
  );
});

/** Subscriptions active, trialing or past due per customer (the subscriptions module's rule), one query per page. */
const activeSubscriptions = defineLoader<string, number>('activeSubscriptionsByCustomer', async (ctx, ids) => {
  const counts = await countByCustomer(ctx.em, ids);
  return ids.map((id) => counts.get(id) ?? 0);
});

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

  @FieldResolver(() => [CurrencyAmount], {
    description:
      'What the customer paid, less refunds, per currency (no conversion): every invoice\'s amount paid (subscriptions, plan changes, usage, one-off payments), ' +
      'one-off payments no invoice records, less the money refunded; GST included.',
  })
  lifetimeRevenue(@C() ctx: Ctx, @Root() customer: Customer) {
    return revenueByCustomer(ctx).load(customer.id);
  }

  @FieldResolver(() => Money, { description: "Lifetime revenue in the merchant's reporting currency: its amount in lifetimeRevenue (0 when none; other currencies are not converted)." })
  async totalLifetimeRevenue(@C() ctx: Ctx, @Root() customer: Customer) {
    const currency = (await currentMerchant(ctx)).reportingCurrency;
    const all = await revenueByCustomer(ctx).load(customer.id);
    return all.find((r) => r.currency === currency)?.amount ?? 0;
  }

  @FieldResolver(() => Int, { description: 'Subscriptions that are active, trialing or past due.' })
  activeSubscriptionCount(@C() ctx: Ctx, @Root() customer: Customer) {
    return activeSubscriptions(ctx).load(customer.id);
  }
}

import { Ctx as C, FieldResolver, Int, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { defineLoader } from '../../core/context';
import { Customer } from '../customers';
import { countByCustomer } from './subscription.store';

/** Subscriptions active, trialing or past due per customer (the subscriptions module's rule), one query per page. */
const activeSubscriptions = defineLoader<string, number>('activeSubscriptionsByCustomer', async (ctx, ids) => {
  const counts = await countByCustomer(ctx.em, ids);
  return ids.map((id) => counts.get(id) ?? 0);
});

/** A customer's subscription count: the subscriptions module answers it, as customers sit below subscriptions. */
@Resolver(() => Customer)
export class CustomerSubscriptionsResolver {
  @FieldResolver(() => Int, { description: 'Subscriptions that are active, trialing or past due.' })
  activeSubscriptionCount(@C() ctx: Ctx, @Root() customer: Customer) {
    return activeSubscriptions(ctx).load(customer.id);
  }
}

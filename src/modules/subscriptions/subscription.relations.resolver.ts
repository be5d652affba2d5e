import { Ctx as C, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { defineLoader } from '../../core/context';
import { services } from '../../services';
import { Plan, plansById, Product, productsById } from '../catalog';
import { Customer, customersById } from '../customers';
import { BillingSubscription } from './subscription.entities';
import { PreDebitNotice } from './pre-debit.entities';
import { SubscriptionStatus } from './subscription.machine';

/**
 * Each subscription's next announced debit still to come, one query for a page of subscriptions. Merchant time is
 * the subscriptions' own tenant's (a request reaches one tenant; a portal session has no merchant key).
 */
const upcomingDebits = defineLoader<BillingSubscription, PreDebitNotice | null>('upcomingDebits', async (ctx, subs) => {
  const now = await services(ctx).subscriptions.now({ merchantId: subs[0].merchantId, mode: subs[0].mode });
  const notices = await ctx.em.find(
    PreDebitNotice,
    { subscriptionId: { $in: subs.map((s) => s.id) }, debitAt: { $gt: now } },
    { orderBy: { debitAt: 'asc', id: 'asc' } },
  );
  // Paused (a declined debit among the ways there): the gateway makes no debit until it is resumed.
  return subs.map((s) =>
    s.status === SubscriptionStatus.PAUSED ? null : (notices.find((n) => n.subscriptionId === s.id) ?? null),
  );
});

/**
 * What a subscription names, as objects: a list of subscriptions shows its customers' e-mails and its plans' names
 * with one query per relation for the whole page (dataloaders), not one per row.
 */
@Resolver(() => BillingSubscription)
export class SubscriptionRelationsResolver {
  @FieldResolver(() => Customer, { nullable: true, description: 'The subscriber.' })
  customer(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return customersById(ctx).load(sub.customerId);
  }

  @FieldResolver(() => Plan, { nullable: true, description: 'The plan it bills now.' })
  plan(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return plansById(ctx).load(sub.planId);
  }

  @FieldResolver(() => Product, { nullable: true, description: "The plan's product." })
  product(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return productsById(ctx).load(sub.productId);
  }

  @FieldResolver(() => PreDebitNotice, {
    nullable: true,
    description:
      'The next debit from the mandate its pre-debit notice (invoice.upcoming) announced, while it is still to come.',
  })
  upcomingDebit(@Root() sub: BillingSubscription, @C() ctx: Ctx) {
    return upcomingDebits(ctx).load(sub);
  }
}

import { Ctx as C, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { Plan, plansById, Product, productsById } from '../catalog';
import { Customer, customersById } from '../customers';
import { BillingSubscription } from './subscription.entities';

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
}

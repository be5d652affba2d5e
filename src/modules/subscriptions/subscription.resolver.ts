import {
  Arg,
  Args,
  ArgsType,
  Ctx as C,
  Field,
  FieldResolver,
  ID,
  Mutation,
  Query,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import type { ClassType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import type { Change } from '../../core/events';
import { readOncePerChange } from '../../core/fanout';
import { ConnectionType, PageArgs } from '../../core/pagination';
import { services } from '../../services';
import { SubscriptionCommandsResolver } from './subscription.commands.resolver';
import { CustomerSubscriptionsResolver } from './subscription.customer.resolver';
import { SubscriptionRelationsResolver } from './subscription.relations.resolver';
import { IDEMPOTENCY_KEY, storedEntity, withIdempotency } from '../idempotency';
import { ChangePlanResult, PlanChangePreview } from './change-plan';
import { MandateSetup, MandateSetupInput } from './mandate-setup';
import { BillingSubscription, SubscriptionEvent } from './subscription.entities';
import { ChangePlanInput, CreateSubscriptionInput } from './subscription.inputs';
import { SubscriptionStatus } from './subscription.machine';

export const SubscriptionConnection = ConnectionType(BillingSubscription, 'BillingSubscriptionConnection');

@ArgsType()
class SubscriptionsArgs extends PageArgs {
  @Field(() => SubscriptionStatus, { nullable: true }) status?: SubscriptionStatus | null;
  @Field(() => ID, { nullable: true }) customerId?: string | null;
  @Field(() => ID, { nullable: true }) planId?: string | null;
}

/** Live changes of the subscriber's own merchant and mode only; `id` narrows them to one subscription. */
const ownChanges = ({ payload, args, context }: { payload: Change; args: { id?: string | null }; context: Ctx }) => {
  const { merchantId, mode } = tenantOf(context);
  return payload.merchantId === merchantId && payload.mode === mode && (!args.id || args.id === payload.id);
};

@Resolver(() => BillingSubscription)
export class SubscriptionResolver {
  @Query(() => BillingSubscription)
  subscription(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.subscription(ctx, id);
  }

  @Query(() => SubscriptionConnection, {
    description: 'Subscriptions, newest first (filters: status, customerId, planId).',
  })
  subscriptions(@C() ctx: Ctx, @Args() args: SubscriptionsArgs) {
    return services(ctx).subscriptions.subscriptions(ctx, args);
  }

  @Query(() => [SubscriptionEvent], { description: "A subscription's state transitions, oldest first." })
  subscriptionEvents(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.events(ctx, id);
  }

  @FieldResolver(() => [SubscriptionEvent], { description: 'The state transitions, oldest first.' })
  events(@C() ctx: Ctx, @Root() sub: BillingSubscription) {
    return services(ctx).subscriptions.events(ctx, sub.id);
  }

  @Mutation(() => BillingSubscription, { description: 'Creates a subscription and its hosted mandate checkout URL.' })
  createSubscription(
    @C() ctx: Ctx,
    @Arg('input') input: CreateSubscriptionInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_KEY })
    idempotencyKey?: string | null,
  ) {
    return withIdempotency(
      ctx,
      idempotencyKey,
      { operation: 'createSubscription', input, result: storedEntity(BillingSubscription) },
      (attempt) => services(ctx).subscriptions.create(ctx, input, attempt),
    );
  }

  @Mutation(() => BillingSubscription, {
    description: 'Pauses an active subscription: the gateway stops charging, the mandate stays.',
  })
  pauseSubscription(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.pause(ctx, id);
  }

  @Mutation(() => BillingSubscription, { description: 'Resumes a paused subscription.' })
  resumeSubscription(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.resume(ctx, id);
  }

  @Mutation(() => BillingSubscription, {
    description: 'Cancels now, or at the end of the current period (or trial) with cancelAtPeriodEnd: true.',
  })
  cancelSubscription(
    @C() ctx: Ctx,
    @Arg('id', () => ID) id: string,
    @Arg('cancelAtPeriodEnd', () => Boolean, { nullable: true, description: 'Default false: now' })
    cancelAtPeriodEnd?: boolean | null,
  ) {
    return services(ctx).subscriptions.cancel(ctx, id, cancelAtPeriodEnd ?? false);
  }

  @Mutation(() => BillingSubscription, {
    description: 'Clears cancelAtPeriodEnd on an active subscription: it renews at the period end.',
  })
  removeScheduledCancellation(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.removeScheduledCancellation(ctx, id);
  }

  @Mutation(() => BillingSubscription, {
    description: 'Removes the plan change scheduled for the period end: the renewal bills the current plan.',
  })
  removeScheduledChange(@C() ctx: Ctx, @Arg('id', () => ID) id: string) {
    return services(ctx).subscriptions.removeScheduledChange(ctx, id);
  }

  @Mutation(() => MandateSetup, {
    description:
      "The gateway's page where the customer of a running subscription authorises a new mandate (Stripe); the subscription records subscription.mandate_updated once it is completed.",
  })
  createMandateSetup(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: MandateSetupInput) {
    return services(ctx).subscriptions.createMandateSetup(ctx, id, input);
  }

  @Mutation(() => ChangePlanResult, {
    description:
      'Moves the subscription to another plan or price now, with proration, or (effective PERIOD_END) schedules the change for the period end.',
  })
  changeSubscriptionPlan(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: ChangePlanInput) {
    return services(ctx).subscriptions.changePlan(ctx, id, input);
  }

  @Query(() => PlanChangePreview, {
    description:
      'What changeSubscriptionPlan with this input would do now (proration, GST, the total collected or credited), with nothing changed.',
  })
  previewPlanChange(@C() ctx: Ctx, @Arg('id', () => ID) id: string, @Arg('input') input: ChangePlanInput) {
    return services(ctx).subscriptions.previewPlanChange(ctx, id, input);
  }

  @Subscription(() => BillingSubscription, {
    description:
      "Every change of the subscription (or of any of the merchant's subscriptions in this mode when id is omitted).",
    topics: 'subscription',
    filter: ownChanges,
  })
  subscriptionUpdated(
    @Root() change: Change,
    @C() ctx: Ctx,
    @Arg('id', () => ID, { nullable: true }) _id?: string,
  ): Promise<BillingSubscription> {
    return readChanged(change, ctx);
  }

  @Subscription(() => BillingSubscription, {
    description: "Every change of any of the merchant's subscriptions in this mode.",
    topics: 'subscription',
    filter: ownChanges,
  })
  subscriptionsUpdated(@Root() change: Change, @C() ctx: Ctx): Promise<BillingSubscription> {
    return readChanged(change, ctx);
  }
}

/** One read per change for all of this process's subscribers of the tenant (src/core/fanout.ts), from a fresh fork. */
function readChanged(change: Change, ctx: Ctx): Promise<BillingSubscription> {
  const { merchantId, mode } = tenantOf(ctx);
  return readOncePerChange(change, `${merchantId}:${mode}`, () =>
    services(ctx).subscriptions.subscription(
      { ...ctx, em: ctx.em.fork({ clear: true }), loaders: new Map() },
      change.id,
    ),
  );
}

export const subscriptionResolvers: ClassType[] = [
  SubscriptionResolver,
  SubscriptionCommandsResolver,
  CustomerSubscriptionsResolver,
  SubscriptionRelationsResolver,
];

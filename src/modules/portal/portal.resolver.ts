import { Arg, Ctx as C, Field, ID, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { validate as isUuid } from 'uuid';
import type { Ctx } from '../../core/context';
import { notFound } from '../../core/errors';
import { DateTime, Money } from '../../core/scalars';
import { services } from '../../services';
import { BillingFrequency, Plan, Price } from '../catalog';
import { Customer } from '../customers';
import { Invoice, InvoiceDocument, invoicePdf } from '../invoices';
import { Merchant } from '../merchants';
import {
  BillingSubscription,
  ChangePlanInput,
  ChangePlanResult,
  PlanChangePreview,
  SubscriptionStatus,
} from '../subscriptions';
import { PortalSession } from './portal.entities';
import { CreatePortalSessionInput } from './portal.inputs';
import { portalOf } from './portal.service';

/** The root fields a portal session's token may use; every other root field refuses it (src/schema.ts). */
export const PORTAL_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'portal',
  'portalPlanOptions',
  'portalPreviewPlanChange',
  'portalInvoicePdf',
  'portalCancelAtPeriodEnd',
  'portalKeepSubscription',
  'portalChangePlan',
  'portalAuthorizeMandate',
  'portalDeclineDebit',
]);

@ObjectType({
  description: "What the customer portal shows: the merchant's name, the customer, their subscriptions and documents.",
})
class PortalView {
  @Field() merchantName!: string;
  @Field() returnUrl!: string;
  @Field(() => DateTime) expiresAt!: Date;
  @Field(() => Customer) customer!: Customer;
  @Field(() => [BillingSubscription], { description: 'Newest first.' }) subscriptions!: BillingSubscription[];
  @Field(() => [Invoice], { description: 'Invoices and credit notes, newest first (the latest 100).' })
  invoices!: Invoice[];
}

@ObjectType({ description: "A price the customer may move a subscription to: one of its product's plans." })
class PortalPlanOption {
  @Field(() => ID) planId!: string;
  @Field() planName!: string;
  @Field(() => ID) priceId!: string;
  @Field(() => Money) amount!: number;
  @Field() currency!: string;
  @Field(() => BillingFrequency, { nullable: true }) billingFrequency!: BillingFrequency | null;
  @Field(() => Int) billingInterval!: number;
  @Field({ description: "The subscription's price now." }) current!: boolean;
}

@ObjectType({ description: 'Where the customer authorises a new mandate (payment method).' })
class PortalMandateLink {
  @Field() url!: string;
}

const INVOICE_LIMIT = 100;

/**
 * The customer portal (docs/portal.md). The merchant makes a session (createPortalSession); its token reaches only the
 * fields below, and each answers only the session's customer's records: another customer's id is not found.
 */
@Resolver()
export class PortalResolver {
  @Mutation(() => PortalSession, {
    description:
      'A link to the customer portal for one customer, valid for one hour (201 over REST). Hand its url to the customer.',
  })
  createPortalSession(@C() ctx: Ctx, @Arg('input') input: CreatePortalSessionInput) {
    return services(ctx).portal.create(ctx, input);
  }

  @Query(() => PortalView, { description: 'Portal session only: the customer, their subscriptions and documents.' })
  async portal(@C() ctx: Ctx): Promise<PortalView> {
    const session = portalOf(ctx);
    const [row, customer, merchant, subscriptions, invoices] = await Promise.all([
      ctx.em.findOneOrFail(PortalSession, { id: session.sessionId }),
      ctx.em.findOneOrFail(Customer, { id: session.customerId }),
      ctx.em.findOneOrFail(Merchant, { id: session.merchantId }, { filters: false }),
      ctx.em.find(BillingSubscription, { customerId: session.customerId }, { orderBy: { id: 'desc' } }),
      ctx.em.find(Invoice, { customerId: session.customerId }, { orderBy: { id: 'desc' }, limit: INVOICE_LIMIT }),
    ]);
    return Object.assign(new PortalView(), {
      merchantName: merchant.name,
      returnUrl: row.returnUrl,
      expiresAt: row.expiresAt,
      customer,
      subscriptions,
      invoices,
    });
  }

  @Query(() => [PortalPlanOption], {
    description: "Portal session only: the subscription's product's plans with an active price in its currency.",
  })
  async portalPlanOptions(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) id: string): Promise<PortalPlanOption[]> {
    const sub = await ownSubscription(ctx, id);
    const plans = await ctx.em.find(Plan, { productId: sub.productId }, { orderBy: { id: 'asc' } });
    const prices = await ctx.em.find(
      Price,
      { planId: { $in: plans.map((p) => p.id) }, currency: sub.currency },
      { orderBy: { id: 'asc' } },
    );
    return prices.flatMap((price) => {
      const plan = plans.find((p) => p.id === price.planId)!;
      if (!plan.billingFrequency) return [];
      return [
        Object.assign(new PortalPlanOption(), {
          planId: plan.id,
          planName: plan.name,
          priceId: price.id,
          amount: price.amount,
          currency: price.currency,
          billingFrequency: plan.billingFrequency,
          billingInterval: plan.billingInterval,
          current: price.id === sub.priceId,
        }),
      ];
    });
  }

  @Query(() => PlanChangePreview, { description: 'Portal session only: what moving to this price would cost now.' })
  async portalPreviewPlanChange(
    @C() ctx: Ctx,
    @Arg('subscriptionId', () => ID) id: string,
    @Arg('priceId', () => ID) priceId: string,
  ) {
    const input = await changeInput(ctx, id, priceId);
    return services(ctx).subscriptions.previewPlanChange(asMerchant(ctx), id, input);
  }

  @Query(() => InvoiceDocument, { description: "Portal session only: one of the customer's documents as a PDF." })
  async portalInvoicePdf(@C() ctx: Ctx, @Arg('id', () => ID) id: string): Promise<InvoiceDocument> {
    const { customerId } = portalOf(ctx);
    const invoice = isUuid(id) ? await ctx.em.findOne(Invoice, { id, customerId }) : null;
    if (!invoice) throw notFound('invoice', id, 'id');
    return invoicePdf(asMerchant(ctx), invoice);
  }

  @Mutation(() => BillingSubscription, { description: 'Portal session only: cancel at the end of the period.' })
  async portalCancelAtPeriodEnd(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) id: string) {
    await ownSubscription(ctx, id);
    return services(ctx).subscriptions.cancel(asMerchant(ctx), id, true);
  }

  @Mutation(() => BillingSubscription, {
    description:
      'Portal session only: decline the renewal debit a pre-debit notice announced; the subscription is paused before it (docs/india.md).',
  })
  async portalDeclineDebit(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) id: string) {
    await ownSubscription(ctx, id);
    return services(ctx).subscriptions.declineDebit(asMerchant(ctx), id);
  }

  @Mutation(() => BillingSubscription, { description: 'Portal session only: undo a cancellation at the period end.' })
  async portalKeepSubscription(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) id: string) {
    await ownSubscription(ctx, id);
    return services(ctx).subscriptions.removeScheduledCancellation(asMerchant(ctx), id);
  }

  @Mutation(() => ChangePlanResult, {
    description: "Portal session only: move to another of the product's prices now.",
  })
  async portalChangePlan(
    @C() ctx: Ctx,
    @Arg('subscriptionId', () => ID) id: string,
    @Arg('priceId', () => ID) priceId: string,
  ) {
    const input = await changeInput(ctx, id, priceId);
    return services(ctx).subscriptions.changePlan(asMerchant(ctx), id, input);
  }

  @Mutation(() => PortalMandateLink, {
    description: 'Portal session only: a hosted page where the customer authorises a new mandate for the subscription.',
  })
  async portalAuthorizeMandate(@C() ctx: Ctx, @Arg('subscriptionId', () => ID) id: string) {
    const sub = await ownSubscription(ctx, id);
    // A subscription not yet authorised: its own mandate checkout.
    if (sub.status === SubscriptionStatus.CREATED && sub.checkoutUrl)
      return Object.assign(new PortalMandateLink(), { url: sub.checkoutUrl });
    // A running one: the gateway's page for a new mandate, which sends the customer back to the session's return_url
    // (the portal's own address would hand the session's token to the gateway).
    const { returnUrl } = await ctx.em.findOneOrFail(PortalSession, { id: portalOf(ctx).sessionId });
    const setup = await services(ctx).subscriptions.createMandateSetup(ctx, sub.id, {
      successUrl: returnUrl,
      cancelUrl: returnUrl,
    });
    return Object.assign(new PortalMandateLink(), { url: setup.url });
  }
}

/** The session's customer's subscription, or not found (whether it exists for another customer is not told). */
async function ownSubscription(ctx: Ctx, id: string): Promise<BillingSubscription> {
  const { customerId } = portalOf(ctx);
  const sub = isUuid(id) ? await ctx.em.findOne(BillingSubscription, { id, customerId }) : null;
  if (!sub) throw notFound('subscription', id, 'subscription_id');
  return sub;
}

/** A change to one of the subscription's product's prices (a price of another product is not found). */
async function changeInput(ctx: Ctx, id: string, priceId: string): Promise<ChangePlanInput> {
  const sub = await ownSubscription(ctx, id);
  const price = isUuid(priceId) ? await ctx.em.findOne(Price, { id: priceId }) : null;
  const plan = price && (await ctx.em.findOne(Plan, { id: price.planId, productId: sub.productId }));
  if (!price || !plan) throw notFound('price', priceId, 'price_id');
  return Object.assign(new ChangePlanInput(), { planId: plan.id, priceId: price.id });
}

/**
 * The portal's commands run as the merchant's own would (the same service, lifecycle, events and webhooks), for the
 * session's merchant and mode; the session id stands where a key id would.
 */
function asMerchant(ctx: Ctx): Ctx {
  const { merchantId, mode, sessionId } = portalOf(ctx);
  const copy = Object.create(ctx) as Ctx;
  Object.defineProperty(copy, 'principal', { value: { kind: 'merchant', merchantId, mode, apiKeyId: sessionId } });
  return copy;
}

export const portalResolvers = [PortalResolver];

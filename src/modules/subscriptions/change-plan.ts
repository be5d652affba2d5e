import { Field, ObjectType } from 'type-graphql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { DomainError, invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { DateTime, Money } from '../../core/scalars';
import { Plan, Price, Product, TaxBehavior } from '../catalog';
import { BillingReason, Invoice, InvoiceStatus, InvoiceType } from '../invoices';
import type { InvoiceService } from '../invoices';
import { announceCollection } from './pre-debit';
import { gatewayAmounts, prorate, prorationDocument, discountOn } from '../../money';
import type { ProrationDocument, TaxSnapshot } from '../../money';
import { SubscriptionCommand } from './subscription.command-names';
import { BillingSubscription } from './subscription.entities';
import { ChangeEffective, ChangePlanInput, ProrationBehavior } from './subscription.inputs';
import { moveToPlan, periodOf, taxOf } from './subscription.terms';
import type { SubscriptionChange } from './subscription.lifecycle';
import { Coupon, appliesToPlan } from '../coupons';
import { discountApplies, discountAtPlanChange, discountTermsOf } from './subscription.discount';
import { checkSchedulable, dropAtGateway, dropScheduledChange, periodEndOf } from './scheduled-change';
import { SubscriptionStatus, transition } from './subscription.machine';
import type { SubscriptionService } from './subscription.service';

@ObjectType({ description: 'The prorated amounts of a plan change.' })
export class Proration {
  @Field(() => Money, { description: 'The unused part of the old price (GST included when that price is inclusive)' })
  creditAmount!: number;
  @Field(() => Money, {
    description: 'The new price for the time it bills (GST included when that price is inclusive)',
  })
  debitAmount!: number;
  @Field(() => Money, {
    description:
      "The document's taxable value: debit - credit when both prices are tax-exclusive; > 0 an adjustment invoice, < 0 a credit note",
  })
  netAmount!: number;
  @Field() currency!: string;
}

@ObjectType({
  description: 'The answer of a plan change: the subscription, its proration and the invoice or credit note it issued.',
})
export class ChangePlanResult {
  @Field(() => BillingSubscription) subscription!: BillingSubscription;
  @Field(() => Proration, { nullable: true }) proration!: Proration | null;
  @Field(() => Invoice, { nullable: true }) invoice!: Invoice | null;
  @Field(() => Invoice, { nullable: true }) creditNote!: Invoice | null;
}

/**
 * Change plan (docs/subscriptions.md), allowed from active and trialing. The new price is registered at the gateway at
 * the amount the subscription's invoices will total (its tax treatment's GST included) and the gateway's subscription
 * moved to it first (a refusal: 502, nothing changes); then, in one transaction, the proration over the seconds left
 * (on each price's amounts, with its own tax behaviour: money/proration.ts prorationDocument): the same cadence keeps
 * the period, another cadence starts a new one now and bills the new price in full. A positive total is an adjustment
 * invoice (collected), a negative one a credit note whose total is carried to the next invoices. No proration in a
 * trial, nor with proration_behavior none. The subscription takes the new price's tax behaviour.
 */
export async function changePlan(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
  input: ChangePlanInput,
): Promise<ChangePlanResult> {
  const current = await service.subscription(ctx, id);
  transition(current.status, 'change_plan', 'api');
  const { plan, price } = await targetOf(ctx, current, input);
  const product = await findOr404(ctx.em, Product, plan.productId, 'product');
  const connection = await service.connectionOf(ctx.em, current);
  const gateway = service.providers.gatewayFor(connection);
  const behavior = input.prorationBehavior ?? ProrationBehavior.CREATE_PRORATIONS;
  // A coupon follows the subscription when it applies to the new plan (subscription.discount.ts discountAtPlanChange);
  // the gateway's new price is the discounted one when the next renewal is discounted.
  const couponFollows = await couponFollowsTo(ctx, current, plan.id);
  const discountOf = (sub: BillingSubscription) =>
    discountAtPlanChange(sub, discountArgs(sub, plan, price, behavior, couponFollows));
  const planned = discountOf(current);
  const nextDiscount = planned.nextRenewalDiscounted ? discountOn(price.amount, discountTermsOf(current)) : 0;
  const gatewayAmount = gatewayAmounts(price.amount - nextDiscount, 0, taxAfter(current, price)).recurring;
  const providerPriceId = await service.registerPriceAtGateway(ctx, gateway, connection, {
    price,
    plan,
    product,
    gatewayAmount,
    discounted: nextDiscount > 0,
  });

  const result = new ChangePlanResult();
  result.proration = null;
  result.invoice = null;
  result.creditNote = null;
  result.subscription = await service.command(
    ctx,
    id,
    'change_plan',
    // A change scheduled for the period's end is dropped at the gateway first: this one replaces it.
    async (gw, sub) => {
      await dropAtGateway(gw, sub);
      await gw.changeSubscriptionPrice({
        providerSubscriptionId: sub.providerSubscriptionId!,
        providerPriceId,
        amount: gatewayAmount,
        currency: price.currency,
        // One key per command (its claim's time): a later change back to this price must reach the gateway again.
        idempotencyKey: `change-${sub.id}-${price.id}-${sub.pendingCommandAt?.getTime() ?? Date.now()}`,
      });
    },
    async (change, now) => {
      const sub = change.sub;
      dropScheduledChange(change, 'change_plan');
      if (price.currency !== sub.currency)
        throw new DomainError(
          'currency_mismatch',
          `The new price is in ${price.currency}, the subscription in ${sub.currency}.`,
          'price_id',
        );
      const old = { planId: sub.planId, priceId: sub.priceId, amount: sub.amount };
      // The coupon's terms from here on and the proration (on the subscription as locked now); the gateway was told
      // `nextDiscount`. The same arithmetic answers previewPlanChange.
      const {
        discount,
        sameCadence,
        proration: p,
        document: doc,
      } = planChangeArithmetic(sub, plan, price, behavior, couponFollows, now);
      // The document's tax: the subscription's treatment and rate, its line tax-inclusive unless both prices are not.
      const docTax: TaxSnapshot = { ...taxOf(sub), behavior: doc?.behavior ?? 'exclusive' };
      Object.assign(sub, {
        periodDiscount: discount.periodDiscount,
        discountCycles: discount.discountCycles,
        discountCyclesUsed: discount.discountCyclesUsed,
        gatewayDiscounted: nextDiscount > 0,
      });
      change.move('change_plan', 'api', {
        from_plan_id: old.planId,
        to_plan_id: plan.id,
        from_price_id: old.priceId,
        to_price_id: price.id,
        proration_behavior: behavior,
      });
      const periodEnd = sub.currentPeriodEnd;
      const periodStart = sub.currentPeriodStart; // the period the change credits (before a new cadence restarts it)
      moveToPlan(sub, plan, price);
      if (!p || !doc || !periodStart || !periodEnd) {
        if (!sameCadence && sub.status === SubscriptionStatus.ACTIVE) restartPeriod(sub, now);
        return;
      }
      result.proration = prorationOf(doc, sub.currency);
      if (p.restartsPeriod) {
        restartPeriod(sub, now);
        sub.cyclesCompleted += 1; // the new period is billed in full below
      }
      if (doc.total === 0) return;
      const line = {
        description:
          doc.total > 0
            ? `Plan change to ${plan.name}: prorated difference`
            : `Plan change to ${plan.name}: unused time credited`,
        quantity: 1,
        unitAmount: doc.lineAmount,
        amount: doc.lineAmount,
        periodStart: now,
        periodEnd: p.restartsPeriod ? sub.currentPeriodEnd : periodEnd,
        proration: true,
      };
      const common = {
        billingReason: BillingReason.SUBSCRIPTION_UPDATE,
        customerId: sub.customerId,
        subscriptionId: sub.id,
        currency: sub.currency,
        lines: [line],
        periodStart: line.periodStart,
        periodEnd: line.periodEnd,
        issuedAt: now,
        tax: docTax,
      };
      if (doc.total > 0) {
        const invoice = await service.invoices.issue(change.em, {
          ...common,
          type: InvoiceType.INVOICE,
          status: InvoiceStatus.OPEN,
        });
        result.invoice = invoice;
        // The answer shows the invoice as the change issued it; its collection follows the commit.
        await collectFromMandate(change, service.invoices, invoice, line.description);
      } else {
        // It names the invoice of the period it credits (docs/invoices-and-gst.md), whose amount_credited grows by it.
        const credited = await periodInvoice(change.em, sub.id, periodStart, periodEnd);
        result.creditNote = await service.invoices.issue(change.em, {
          ...common,
          type: InvoiceType.CREDIT_NOTE,
          status: InvoiceStatus.ISSUED,
          relatedInvoiceId: credited?.id ?? null,
        });
        // Gross credit (the note's total, GST included): renewals take it off their totals and refund it on the charge.
        sub.creditBalance += result.creditNote.total;
      }
    },
  );
  return result;
}

/**
 * Change plan with `effective: period_end` (docs/subscriptions.md "Scheduled changes"), from active and trialing: nothing
 * changes now (no proration, no invoice); the new price is registered at the gateway at the amount the renewal will
 * charge (the subscription's tax, and its coupon's discount when the coupon applies to the new plan and has periods
 * left) and the gateway told to move to it at the period's (trial's) end, which it answers with the instant it will.
 * The subscription shows the change as `scheduledChange` until the renewal applies it. A second one replaces the first;
 * the same one again changes nothing.
 */
export async function scheduleChangeAtPeriodEnd(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
  input: ChangePlanInput,
): Promise<ChangePlanResult> {
  const current = await service.subscription(ctx, id);
  transition(current.status, 'schedule_change', 'api');
  checkSchedulable(current);
  const { plan, price } = await targetOf(ctx, current, input);
  const result = Object.assign(new ChangePlanResult(), {
    subscription: current,
    proration: null,
    invoice: null,
    creditNote: null,
  });
  if (current.scheduledChangeData?.priceId === price.id) return result; // already scheduled
  const product = await findOr404(ctx.em, Product, plan.productId, 'product');
  const connection = await service.connectionOf(ctx.em, current);
  const gateway = service.providers.gatewayFor(connection);
  const couponFollows = await couponFollowsTo(ctx, current, plan.id);
  // The renewal at the period's end is the next billed period: discounted when the coupon follows and has periods left.
  const nextDiscount =
    couponFollows && discountApplies(current) ? discountOn(price.amount, discountTermsOf(current)) : 0;
  const gatewayAmount = gatewayAmounts(price.amount - nextDiscount, 0, taxAfter(current, price)).recurring;
  const providerPriceId = await service.registerPriceAtGateway(ctx, gateway, connection, {
    price,
    plan,
    product,
    gatewayAmount,
    discounted: nextDiscount > 0,
  });
  let effectiveAt: Date | null = null;
  result.subscription = await service.command(
    ctx,
    id,
    'schedule_change',
    async (gw, sub) => {
      if (!sub.providerSubscriptionId) return;
      ({ effectiveAt } = await gw.scheduleSubscriptionPriceChange({
        providerSubscriptionId: sub.providerSubscriptionId,
        providerPriceId,
        amount: gatewayAmount,
        currency: price.currency,
        idempotencyKey: `schedule-${sub.id}-${price.id}-${sub.pendingCommandAt?.getTime() ?? Date.now()}`,
      }));
    },
    (change, now) => {
      const sub = change.sub;
      checkSchedulable(sub);
      const at = (effectiveAt ?? periodEndOf(sub, now)).toISOString();
      const replaced = sub.scheduledChangeData;
      change.move('schedule_change', 'api', {
        from_plan_id: sub.planId,
        to_plan_id: plan.id,
        from_price_id: sub.priceId,
        to_price_id: price.id,
        effective_at: at,
        ...(replaced ? { replaced_plan_id: replaced.planId, replaced_price_id: replaced.priceId } : {}),
      });
      sub.scheduledChangeData = {
        planId: plan.id,
        priceId: price.id,
        effectiveAt: at,
        providerPriceId,
        gatewayAmount,
        couponFollows,
        gatewayDiscounted: nextDiscount > 0,
      };
    },
    undefined,
    undefined,
    checkSchedulable,
  );
  return result;
}

/**
 * Collects an invoice the change issued (a plan change's adjustment, or a closed period's usage: usage.billing.ts) from
 * the subscription's mandate once the change commits, as a durable command (subscription.commands.ts collect_invoice,
 * idempotency key `adjust-<invoice id>`). Razorpay collects it as an add-on with the next charge: recorded here, in the
 * issuing transaction, before the add-on is made, so the charge that carries it, reported whenever, finds it
 * (subscription.gateway-events.ts settleAddons); that renewal is announced as any. Stripe charges it on its own: an INR
 * mandate debit, so it is announced now (`invoice.upcoming`) and the command is held until 24 hours later on the
 * merchant's clock (docs/india.md); in other currencies it runs after the commit.
 */
export async function collectFromMandate(
  change: SubscriptionChange,
  invoices: Pick<InvoiceService, 'record'>,
  invoice: Invoice,
  description: string,
): Promise<void> {
  const sub = change.sub;
  if (!sub.providerSubscriptionId || invoice.amountDue <= 0) return;
  if (sub.provider === 'razorpay') {
    sub.gatewayAddons = [
      ...sub.gatewayAddons,
      { invoiceId: invoice.id, amount: invoice.amountDue, chargeInvoiceId: null },
    ];
  }
  const now = invoice.issuedAt;
  const hold =
    sub.provider !== 'razorpay' && sub.currency === 'INR'
      ? { until: await announceCollection(change, invoices, invoice, now), now }
      : undefined;
  change.gatewayCommand(
    SubscriptionCommand.COLLECT_INVOICE,
    `Collect invoice ${invoice.number ?? invoice.id}: ${description}`,
    { description },
    `adjust-${invoice.id}`,
    invoice.id,
    hold,
  );
}

/**
 * The invoice of the period `[start, end)` a plan change credits: the subscription's invoice billed for exactly that
 * period (its first, a renewal, or the change of cadence that started it), else its latest invoice for a period that
 * covers `start` (a period a change of cadence started without an invoice, its credit paying for it). Void invoices
 * are not credited. Null when none is found (a period billed before invoices were issued).
 */
async function periodInvoice(
  em: SubscriptionChange['em'],
  subscriptionId: string,
  start: Date,
  end: Date,
): Promise<Invoice | null> {
  const base = { subscriptionId, type: InvoiceType.INVOICE, status: { $ne: InvoiceStatus.VOID } };
  const exact = await em.findOne(Invoice, { ...base, periodStart: start, periodEnd: end }, { orderBy: { id: 'asc' } });
  if (exact) return exact;
  return em.findOne(
    Invoice,
    { ...base, periodStart: { $lte: start }, periodEnd: { $gt: start } },
    { orderBy: { periodStart: 'desc', id: 'desc' } },
  );
}

/** Whether the change bills a new period in full now (a new cadence, prorated, while active). */
function billsNewPeriod(sub: BillingSubscription, plan: Plan, behavior: ProrationBehavior): boolean {
  const sameCadence = plan.billingFrequency === sub.billingFrequency && plan.billingInterval === sub.billingInterval;
  return (
    !sameCadence &&
    sub.status === SubscriptionStatus.ACTIVE &&
    behavior === ProrationBehavior.CREATE_PRORATIONS &&
    !!sub.currentPeriodStart &&
    !!sub.currentPeriodEnd
  );
}

/** Whether the subscription's coupon follows it to the plan (one that no longer exists does). */
async function couponFollowsTo(ctx: Ctx, sub: BillingSubscription, planId: string): Promise<boolean> {
  if (!sub.couponId) return false;
  const coupon = await ctx.em.findOne(Coupon, { id: sub.couponId });
  return !coupon || appliesToPlan(coupon, planId);
}

const discountArgs = (
  sub: BillingSubscription,
  plan: Plan,
  price: Price,
  behavior: ProrationBehavior,
  couponFollows: boolean,
) => ({ newAmount: price.amount, couponFollows, billsNewPeriod: billsNewPeriod(sub, plan, behavior) });

/**
 * What a change to `price` does to the money at `now`: the coupon's terms from then on, and the proration over the
 * seconds left on the discounted amounts (what the current period was billed, and what the rest of it or the new
 * period costs); null when nothing is prorated (a trial, proration_behavior none). The change itself and its preview
 * both use it, so the preview shows exactly what the change will do.
 */
function planChangeArithmetic(
  sub: BillingSubscription,
  plan: Plan,
  price: Price,
  behavior: ProrationBehavior,
  couponFollows: boolean,
  now: Date,
) {
  const sameCadence = plan.billingFrequency === sub.billingFrequency && plan.billingInterval === sub.billingInterval;
  const discount = discountAtPlanChange(sub, discountArgs(sub, plan, price, behavior, couponFollows));
  const prorated = sub.status === SubscriptionStatus.ACTIVE && behavior === ProrationBehavior.CREATE_PRORATIONS;
  const proration =
    prorated && sub.currentPeriodStart && sub.currentPeriodEnd
      ? prorate({
          oldAmount: discount.oldBilled,
          newAmount: discount.newBilled,
          periodStart: sub.currentPeriodStart,
          periodEnd: sub.currentPeriodEnd,
          at: now,
          sameCadence,
        })
      : null;
  // Each side with its own price's tax behaviour (docs/invoices-and-gst.md, "Tax-inclusive prices").
  const tax = taxOf(sub);
  const document = proration
    ? prorationDocument({
        credit: proration.credit,
        creditBehavior: sub.taxBehavior,
        debit: proration.debit,
        debitBehavior: price.taxBehavior,
        treatment: tax.treatment,
        rateBps: tax.rateBps,
      })
    : null;
  return { discount, sameCadence, proration, document };
}

/**
 * The answer's proration: each side's prorated amount as its price states it (a tax-inclusive one contains its GST),
 * and the net as the document's taxable value (signed), so that net + tax = the document's total.
 */
function prorationOf(doc: ProrationDocument, currency: string): Proration {
  return Object.assign(new Proration(), {
    creditAmount: doc.credit.amount,
    debitAmount: doc.debit.amount,
    netAmount: doc.subtotal,
    currency,
  });
}

/** The subscription's tax with the new price's tax behaviour: what its invoices and gateway follow after a change. */
function taxAfter(sub: BillingSubscription, price: Price): TaxSnapshot {
  return { ...taxOf(sub), behavior: price.taxBehavior };
}

@ObjectType({ description: 'What a plan change would do now, computed without changing anything.' })
export class PlanChangePreview {
  @Field(() => Proration, { nullable: true, description: 'Null when nothing is prorated (a trial, none, period end)' })
  proration!: Proration | null;
  @Field(() => Money, {
    description: 'GST of the adjustment invoice or credit note it would issue (negative: a credit)',
  })
  taxAmount!: number;
  @Field(() => Money, { description: 'net + tax: > 0 collected now, < 0 credited to the next invoices, 0 nothing' })
  total!: number;
  @Field() currency!: string;
  @Field(() => Money, {
    description:
      'The recurring amount from the change on (before discounts; GST on top unless taxBehavior is INCLUSIVE)',
  })
  newAmount!: number;
  @Field(() => TaxBehavior, { description: "The new price's tax_behavior: INCLUSIVE, newAmount contains its GST" })
  taxBehavior!: TaxBehavior;
  @Field(() => DateTime, { description: 'When the change takes effect: now, or the period (trial) end' })
  effectiveAt!: Date;
}

/**
 * previewPlanChange (docs/subscriptions.md "Previewing a plan change"): the same checks and arithmetic as the change at
 * the merchant's now, with nothing written and no gateway called.
 */
export async function previewPlanChange(
  service: SubscriptionService,
  ctx: Ctx,
  id: string,
  input: ChangePlanInput,
): Promise<PlanChangePreview> {
  const sub = await service.subscription(ctx, id);
  const scheduled = input.effective === ChangeEffective.PERIOD_END;
  transition(sub.status, scheduled ? 'schedule_change' : 'change_plan', 'api');
  if (scheduled) checkSchedulable(sub);
  const { plan, price } = await targetOf(ctx, sub, input); // in the subscription's currency (pickPrice)
  const now = await service.now(tenantOf(ctx));
  const preview = Object.assign(new PlanChangePreview(), {
    proration: null,
    taxAmount: 0,
    total: 0,
    currency: sub.currency,
    newAmount: price.amount,
    taxBehavior: price.taxBehavior,
    effectiveAt: scheduled ? periodEndOf(sub, now) : now,
  });
  if (scheduled) return preview;
  const behavior = input.prorationBehavior ?? ProrationBehavior.CREATE_PRORATIONS;
  const couponFollows = await couponFollowsTo(ctx, sub, plan.id);
  const doc = planChangeArithmetic(sub, plan, price, behavior, couponFollows, now).document;
  if (!doc) return preview;
  // The figures of the document the change would issue (credits negative).
  return Object.assign(preview, { proration: prorationOf(doc, sub.currency), taxAmount: doc.tax, total: doc.total });
}

/** A new cadence starts its first period now. */
function restartPeriod(sub: BillingSubscription, now: Date): void {
  sub.billingAnchor = now;
  sub.anchorCycle = 0;
  const p = periodOf(sub, now, 0);
  sub.currentPeriodStart = p.start;
  sub.currentPeriodEnd = p.end;
}

/** `price_id` (one of the new plan's), else the new plan's default price in the subscription's currency. */
/** The plan and price a change moves to: a recurring plan, at a price other than the current one. */
async function targetOf(
  ctx: Ctx,
  current: BillingSubscription,
  input: ChangePlanInput,
): Promise<{ plan: Plan; price: Price }> {
  const plan = await findOr404(ctx.em, Plan, input.planId, 'plan', { param: 'plan_id' });
  if (!plan.billingFrequency) {
    throw new DomainError(
      'plan_not_recurring',
      `Plan ${plan.id} belongs to a one_time product and cannot be subscribed to.`,
      'plan_id',
    );
  }
  const price = await pickPrice(ctx, plan, input.priceId, current.currency);
  if (price.id === current.priceId)
    throw new DomainError('plan_unchanged', 'The subscription is already on this plan and price.', 'plan_id');
  return { plan, price };
}

async function pickPrice(ctx: Ctx, plan: Plan, priceId: string | null | undefined, currency: string): Promise<Price> {
  if (priceId) {
    const price = await findOr404(ctx.em, Price, priceId, 'price', { param: 'price_id' });
    if (price.planId !== plan.id) throw invalid('price_id', `Price ${price.id} is not a price of plan ${plan.id}.`);
    if (price.currency !== currency) {
      throw new DomainError(
        'currency_mismatch',
        `Price ${price.id} is in ${price.currency}; the subscription bills in ${currency}.`,
        'price_id',
      );
    }
    return price;
  }
  const price = await ctx.em.findOne(Price, { planId: plan.id, isDefault: true, currency }, { orderBy: { id: 'asc' } });
  if (!price)
    throw new DomainError(
      'currency_mismatch',
      `Plan ${plan.id} has no default price in ${currency}: give price_id.`,
      'plan_id',
    );
  return price;
}

import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { currencyExponent } from '../../core/currency';
import { logger } from '../../core/logger';
import { GatewayError, GatewayPort } from '../../gateways/port';
import { Plan, Price, Product } from '../catalog';
import { discountLabel, discountOn, DiscountTerms, gatewayAmounts } from '../../money';
import type { InvoiceLineDraft } from '../invoices';
import { SubscriptionCommand } from './subscription.command-names';
import { BillingSubscription } from './subscription.entities';
import type { SubscriptionChange } from './subscription.lifecycle';
import { TERMINAL } from './subscription.machine';
import { taxOf } from './subscription.terms';
import type { SubscriptionService } from './subscription.service';

/**
 * A subscription's coupon discount (docs/growth.md), as fixed at its creation: the rules of which billed periods
 * are discounted, the invoice's discount line, and the gateway side.
 *
 * Decisions: the discount is taken off the plan's recurring amount only (never the setup fee), on the first billed
 * period (`once`), the first `duration_in_cycles` billed periods (`repeating`) or every one (`forever`); a trial is not
 * a billed period, so a discount starts with the first charge. GST is computed on the discounted subtotal.
 *
 * The gateway charges each discounted period's invoice total because the subscription is put on a gateway price of
 * the discounted gross amount ("discounted plan", at both gateways); after the charge of the last discounted period
 * it is moved to the full gross price with no proration (a durable gateway command), so the next
 * renewal charges the full amount.
 */

export function discountTermsOf(
  sub: Pick<BillingSubscription, 'discountPercentBps' | 'discountAmountOff'>,
): DiscountTerms {
  return { percentOffBps: sub.discountPercentBps ?? null, amountOff: sub.discountAmountOff ?? null };
}

/** Whether the next billed period is discounted: a coupon whose periods are not used up (a forever one never is). */
export function discountApplies(
  sub: Pick<BillingSubscription, 'couponId' | 'discountCycles' | 'discountCyclesUsed'>,
): boolean {
  return !!sub.couponId && (sub.discountCycles == null || sub.discountCyclesUsed < sub.discountCycles);
}

/** The discount of the next billed period on `amount` (default: the subscription's recurring amount); 0: none. */
export function nextPeriodDiscount(sub: BillingSubscription, amount: number = sub.amount): number {
  return discountApplies(sub) ? discountOn(amount, discountTermsOf(sub)) : 0;
}

/** The invoice line of a period's discount: negative, naming the code, over the same period. */
export function discountLine(
  sub: BillingSubscription,
  discount: number,
  p: { start: Date; end: Date },
): InvoiceLineDraft {
  return {
    description: discountLabel(
      sub.couponCode ?? 'coupon',
      discountTermsOf(sub),
      sub.currency,
      currencyExponent(sub.currency),
    ),
    quantity: 1,
    unitAmount: -discount,
    amount: -discount,
    periodStart: p.start,
    periodEnd: p.end,
  };
}

/**
 * After a billed period: once the discount is over while the gateway still charges the discounted price, the gateway
 * is moved to the full price by a durable command (also queued again after each later charge until it has been done).
 */
export function endGatewayDiscountIfOver(change: SubscriptionChange): void {
  const sub = change.sub;
  if (!sub.gatewayDiscounted || discountApplies(sub) || !sub.providerSubscriptionId) return;
  change.gatewayCommand(
    SubscriptionCommand.FULL_PRICE,
    `Coupon ${sub.couponCode ?? ''} ended: charge the full price`.replace('  ', ' '),
    {},
    `coupon-end-${sub.id}-${sub.priceId}-${sub.cyclesCompleted}`,
  );
}

/**
 * Registers the subscription's price at its full gross amount (once, registerPriceAtGateway) and moves the gateway
 * subscription to it with no proration (`key`: the command's idempotency key), then records that the gateway charges
 * the full amount. Throws when the gateway did not: the command is tried again.
 */
export async function moveGatewayToFullPrice(
  service: SubscriptionService,
  em: EntityManager,
  id: string,
  gateway: GatewayPort,
  key: string,
): Promise<void> {
  const sub = await em.findOne(BillingSubscription, { id });
  if (!sub || !sub.gatewayDiscounted || discountApplies(sub) || !sub.providerSubscriptionId || TERMINAL.has(sub.status))
    return;
  const [price, plan, product] = await Promise.all([
    em.findOneOrFail(Price, { id: sub.priceId }),
    em.findOneOrFail(Plan, { id: sub.planId }),
    em.findOneOrFail(Product, { id: sub.productId }),
  ]);
  const connection = await service.connectionOf(em, sub);
  const tax = taxOf(sub);
  const amount = gatewayAmounts(sub.amount, 0, tax).recurring;
  const providerPriceId = await service.registerPriceAtGateway({ em, log: logger }, gateway, connection, {
    price,
    plan,
    product,
    gatewayAmount: amount,
  });
  try {
    await gateway.changeSubscriptionPrice({
      providerSubscriptionId: sub.providerSubscriptionId,
      providerPriceId,
      amount,
      currency: sub.currency,
      idempotencyKey: key,
    });
  } catch (err) {
    if (!(sub.provider === 'razorpay' && err instanceof GatewayError && err.code === 'gateway_rejected')) throw err;
    // Razorpay refuses to change the plan of a UPI or e-mandate subscription: the gateway stays on the discounted
    // plan, and the difference to the full amount rides on its next charge as an add-on (once per billed period;
    // after that charge this is queued again). The charge then equals the full invoice's total.
    const discounted = gatewayAmounts(sub.amount - discountOn(sub.amount, discountTermsOf(sub)), 0, tax).recurring;
    if (amount > discounted) {
      await gateway.chargeSubscriptionOneOff({
        providerSubscriptionId: sub.providerSubscriptionId,
        providerCustomerId: sub.providerCustomerId ?? null,
        amount: amount - discounted,
        currency: sub.currency,
        description: `Coupon ${sub.couponCode} ended: the full price`,
        idempotencyKey: `${key}-topup`,
      });
    }
    return;
  }
  await em.fork().transactional(async (tx) => {
    const locked = await tx.findOne(BillingSubscription, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // A plan change meanwhile set the gateway's price itself.
    if (locked && locked.priceId === sub.priceId && !discountApplies(locked)) locked.gatewayDiscounted = false;
  });
}

/**
 * The least a gateway price can charge per period (subunits): a discount must leave at least this much. Razorpay plans
 * are at least 100 subunits (₹1); Stripe prices may be 0 (its $0 invoices are paid without a charge).
 */
export const MIN_GATEWAY_RECURRING: Record<string, number> = { stripe: 0, razorpay: 100 };

/** A coupon at a plan change: what the proration bills, and the discount from then on. */
export interface DiscountAtChange {
  /** The old recurring amount as the current period was billed (less its discount). */
  oldBilled: number;
  /** The new recurring amount the proration debits from (less the discount that covers it). */
  newBilled: number;
  /** The discount of the current period after the change (the rest of it, or the new period billed now). */
  periodDiscount: number;
  discountCycles: number | null;
  discountCyclesUsed: number;
  /** Whether the next renewal is discounted: the gateway's new price is then the discounted one. */
  nextRenewalDiscounted: boolean;
}

/**
 * Decision (change-plan with a coupon): the coupon follows the subscription for its remaining periods when it applies
 * to the new plan, else it ends at the change. Proration uses the discounted amounts: the credit is for the old amount
 * as the current period was billed; the debit for the rest of the period is discounted when the current period was
 * (and the coupon follows); a new cadence's period billed in full now is discounted, and uses one of the coupon's
 * periods, when any are left.
 */
export function discountAtPlanChange(
  sub: Pick<
    BillingSubscription,
    | 'amount'
    | 'couponId'
    | 'discountPercentBps'
    | 'discountAmountOff'
    | 'discountCycles'
    | 'discountCyclesUsed'
    | 'periodDiscount'
  >,
  change: { newAmount: number; couponFollows: boolean; billsNewPeriod: boolean },
): DiscountAtChange {
  const oldBilled = sub.amount - sub.periodDiscount;
  let cycles = sub.discountCycles ?? null;
  let used = sub.discountCyclesUsed;
  if (!sub.couponId) {
    return {
      oldBilled,
      newBilled: change.newAmount,
      periodDiscount: 0,
      discountCycles: cycles,
      discountCyclesUsed: used,
      nextRenewalDiscounted: false,
    };
  }
  if (!change.couponFollows) cycles = used; // it ends here: no period after the change is discounted
  const left = () => cycles == null || used < cycles;
  let periodDiscount = 0;
  if (change.billsNewPeriod) {
    if (left()) {
      periodDiscount = discountOn(change.newAmount, discountTermsOf(sub));
      used += 1;
    }
  } else if (change.couponFollows && sub.periodDiscount > 0) {
    periodDiscount = discountOn(change.newAmount, discountTermsOf(sub));
  }
  return {
    oldBilled,
    newBilled: change.newAmount - periodDiscount,
    periodDiscount,
    discountCycles: cycles,
    discountCyclesUsed: used,
    nextRenewalDiscounted: left(),
  };
}

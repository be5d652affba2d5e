import type { EntityManager } from '@mikro-orm/postgresql';
import { discountOn, monthlyAmount } from '../../money';
import type { Mode } from '../../core/entity';
import { customerLedgerFacts, insertMovement, lockCustomerLedger } from './mrr-ledger.store';

/**
 * The MRR movements ledger (docs/analytics.md): what one subscription contributes to MRR
 * (docs/analytics.md), and the movement a change of it writes. Every change of a subscription goes through
 * SubscriptionChange (subscription.lifecycle.ts), whose `save` calls `recordMrrMovement` in the change's transaction.
 *
 * Decisions:
 * - A subscription is counted while `active` or `past_due` (trialing, paused, halted and ended ones count 0).
 * - Its MRR is computed once per subscription in integer arithmetic: the recurring amount less a `forever` coupon's
 *   discount, normalised to a month, rounded half away from zero to the subunit (so the ledger's sums are exact).
 * - A movement's customer-level kind (new / expansion / reactivation) comes from the ledger itself, read under a
 *   per-customer transaction-scoped advisory lock: two subscriptions of one customer activating at once still get
 *   `new` + `expansion`, never two `new`s.
 */

export type MovementKind = 'new' | 'expansion' | 'contraction' | 'churn' | 'reactivation';

export const MOVEMENT_KINDS: readonly MovementKind[] = ['new', 'expansion', 'contraction', 'churn', 'reactivation'];

/** Statuses counted in MRR (docs/analytics.md): the subscriptions module's `active` and `past_due`. */
export const MRR_COUNTED: ReadonlySet<string> = new Set(['active', 'past_due']);

/**
 * What MRR reads of a subscription. The subscriptions module records movements (it sits above analytics), so the
 * ledger names the fields it needs instead of importing the entity; BillingSubscription satisfies it.
 */
export interface MrrFields {
  status: string;
  amount: number;
  billingFrequency: string;
  billingInterval: number;
  couponId?: string | null;
  discountCycles?: number | null;
  discountPercentBps?: number | null;
  discountAmountOff?: number | null;
}

/** The subscription a movement is recorded for. */
export interface MrrSubject extends MrrFields {
  id: string;
  merchantId: string;
  mode: Mode;
  customerId: string;
  currency: string;
}

/**
 * The recurring amount MRR counts: the amount less a `forever` coupon's discount (a coupon with no end:
 * `discount_cycles` null; `once` and `repeating` coupons do not change MRR), the discount as src/money/discount.ts
 * computes it. This and `monthlyAmount` (src/money/mrr.ts) are the one MRR rule: every answer that shows MRR (analytics,
 * experiment results) reads the ledger these write (analytics.store.ts), never a second computation of its own.
 */
export function mrrAmountOf(
  sub: Pick<MrrFields, 'amount' | 'couponId' | 'discountCycles' | 'discountPercentBps' | 'discountAmountOff'>,
): number {
  const forever = sub.couponId != null && sub.discountCycles == null;
  if (!forever) return sub.amount;
  return (
    sub.amount -
    discountOn(sub.amount, { percentOffBps: sub.discountPercentBps ?? null, amountOff: sub.discountAmountOff ?? null })
  );
}

/** Whether a subscription counts in MRR, and its MRR (0 when it does not count). */
export interface MrrState {
  counted: boolean;
  mrr: number;
}

export function mrrStateOf(sub: MrrFields): MrrState {
  if (!MRR_COUNTED.has(sub.status)) return { counted: false, mrr: 0 };
  return { counted: true, mrr: monthlyAmount(mrrAmountOf(sub), sub.billingFrequency, sub.billingInterval) };
}

export const sameMrrState = (a: MrrState, b: MrrState) => a.counted === b.counted && a.mrr === b.mrr;

/** What the ledger says about a subscription and its customer in the subscription's currency, before the change. */
export interface LedgerFacts {
  /** The subscription as the ledger has it: counted (its subscription_delta sum is 1) and its MRR (its amounts' sum). */
  subscription: MrrState;
  /** The subscription was counted at some time before (a resume, or a halted one paying again, is a reactivation). */
  subscriptionEverCounted: boolean;
  /** The customer's other subscriptions counted now in this currency. */
  otherCounted: number;
  /** The customer had some subscription counted in this currency before (back after churn: reactivation). */
  customerEverCounted: boolean;
}

/** One row of the ledger, as decided (the amounts are the subscription's, in its currency's subunits). */
export interface Movement {
  kind: MovementKind;
  /** mrrAfter - mrrBefore: negative for churn and contraction. */
  amount: number;
  mrrBefore: number;
  mrrAfter: number;
  subscriptionDelta: -1 | 0 | 1;
  customerDelta: -1 | 0 | 1;
}

/**
 * The movement that takes the subscription from what the ledger says (`facts`) to `after`, or null when they agree.
 * Became counted: `reactivation` if this subscription was counted before, or the customer was and has no other counted
 * subscription now; `expansion` if the customer has another counted subscription in the currency; else `new`.
 * Stopped being counted: `churn`. Counted before and after with another MRR: `expansion` (up) / `contraction` (down).
 */
export function decideMovement(facts: LedgerFacts, after: MrrState): Movement | null {
  const before = facts.subscription;
  const mrrAfter = after.counted ? after.mrr : 0;
  const mrrBefore = before.counted ? before.mrr : 0;
  const amount = mrrAfter - mrrBefore;
  if (after.counted && !before.counted) {
    const alone = facts.otherCounted <= 0;
    const kind: MovementKind =
      facts.subscriptionEverCounted || (alone && facts.customerEverCounted)
        ? 'reactivation'
        : alone
          ? 'new'
          : 'expansion';
    return { kind, amount, mrrBefore, mrrAfter, subscriptionDelta: 1, customerDelta: alone ? 1 : 0 };
  }
  if (!after.counted && before.counted) {
    return {
      kind: 'churn',
      amount,
      mrrBefore,
      mrrAfter,
      subscriptionDelta: -1,
      customerDelta: facts.otherCounted <= 0 ? -1 : 0,
    };
  }
  if (!after.counted || amount === 0) return null;
  return {
    kind: amount > 0 ? 'expansion' : 'contraction',
    amount,
    mrrBefore,
    mrrAfter,
    subscriptionDelta: 0,
    customerDelta: 0,
  };
}

/**
 * Writes the subscription's MRR movement, if any, in the transaction of `em` (the change's, after its flush).
 * `before` is the subscription's MRR state as the change loaded it: when nothing MRR counts moved (a renewal, a
 * retry, a schedule), this runs no statement at all. Otherwise it takes the customer's ledger lock, reads the
 * ledger's facts and inserts the row; the movement is decided from the ledger (not from `before`), so it always
 * continues the subscription's own history exactly.
 *
 * Three statements, not one: the lock must be held before the facts are read, and a statement reads with the
 * snapshot taken when it started (READ COMMITTED), which would miss a movement committed while it waited for the lock.
 */
export async function recordMrrMovement(
  em: EntityManager,
  sub: MrrSubject,
  before: MrrState,
  cause: string,
): Promise<Movement | null> {
  const after = mrrStateOf(sub);
  if (sameMrrState(before, after)) return null;
  const subject = {
    merchantId: sub.merchantId,
    mode: sub.mode,
    subscriptionId: sub.id,
    customerId: sub.customerId,
    currency: sub.currency,
  };
  await lockCustomerLedger(em, sub.customerId);
  const facts = await customerLedgerFacts(em, subject);
  const movement = decideMovement(facts, after);
  if (!movement) return null;
  await insertMovement(em, { ...subject, cause, customerFirstAt: facts.customerFirstAt }, movement);
  return movement;
}

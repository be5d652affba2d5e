import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { mandateMethod } from '../../gateways/banks';
import type { GatewayEvent } from '../../gateways/port';
import type { ReportDb } from './analytics.store';
import { analyticsWindow } from './analytics.window';
import {
  attemptGroups,
  insertMandateAttempt,
  preDebitCounts,
  type PreDebitCountsSql,
  type SubscriptionInCurrencySql,
} from './autopay.store';
import {
  AutopayBankStats,
  AutopayFailureReason,
  AutopayMethodStats,
  AutopayReport,
  MandateMethod,
  PreDebitNoticeStats,
  AutopayAuthenticationStats,
} from './autopay.types';

/**
 * UPI autopay / mandate analytics (docs/analytics.md `GET /analytics/autopay`): an attempt is one subscription mandate
 * checkout completed or failed at the gateway, recorded with the method, bank and failure reason the gateway event
 * carries, in the transaction that applies that event to the subscription. A checkout stays one attempt however many
 * tries it takes: declined tries on a checkout that stays open (the real gateways' way) make it failed until a try
 * succeeds, and then it is authorized.
 */

/** A subscription waiting at checkout (the subscriptions module's `created`; it sits above analytics). */
const CREATED = 'created';

/**
 * Whether a gateway event about a subscription (in `statusBefore`, before the event is applied) reports an attempt to
 * authorise its mandate, and its outcome:
 * - authorised: the checkout completed (`subscription.authorized`), or the gateway already charged on the mandate of
 *   a subscription still waiting at checkout (an event that came first, out of order);
 * - failed: the gateway declined an attempt while the checkout stays open (`subscription.authorization_failed`, while
 *   the subscription still waits at checkout: at Razorpay the same event reports a renewal's failed payment), or the
 *   checkout ended without a mandate because the gateway declined it (a failure reason; a checkout cancelled by the
 *   buyer, or expired because nobody completed it, made no attempt at the gateway and counts for nothing).
 */
export function mandateOutcome(
  statusBefore: string,
  event: GatewayEvent,
): { status: 'authorized' | 'failed'; failureReason: string | null } | null {
  switch (event.kind) {
    case 'subscription.authorized':
      return { status: 'authorized', failureReason: null };
    case 'subscription.authorization_failed':
      return statusBefore === CREATED
        ? { status: 'failed', failureReason: (event.failureReason ?? 'payment_failed').slice(0, 255) }
        : null;
    case 'subscription.charged':
    case 'subscription.charge_failed':
      return statusBefore === CREATED ? { status: 'authorized', failureReason: null } : null;
    case 'subscription.cancelled':
      return event.checkoutFailed && event.failureReason
        ? { status: 'failed', failureReason: event.failureReason.slice(0, 255) }
        : null;
    default:
      return null;
  }
}

/**
 * Records the checkout's outcome a gateway event reports, if it reports one (see mandateOutcome), in the caller's
 * transaction; `now` is merchant time. Called by the subscriptions module before it applies the event (the status is
 * the one the event found). One row per subscription: a later decline replaces an earlier one (the latest reason,
 * method and bank), a success replaces a decline, and nothing replaces a success (Razorpay's authenticated, then
 * charged; repeats).
 */
export async function recordMandateAttempt(
  em: EntityManager,
  sub: { id: string; customerId: string; provider: string; status: string },
  event: GatewayEvent,
  now: Date,
): Promise<void> {
  const outcome = mandateOutcome(sub.status, event);
  if (!outcome) return;
  await insertMandateAttempt(em, {
    subscriptionId: sub.id,
    customerId: sub.customerId,
    provider: event.provider,
    method: mandateMethod(event.method),
    bank: event.bank ?? null,
    status: outcome.status,
    failureReason: outcome.failureReason,
    gatewayEventId: event.eventId,
    occurredAt: now,
  });
}

/** A fraction (as every analytics rate, unrounded); null without attempts: no success rate, rather than 0. */
export function rate(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

/** Most attempts first, then by name (nulls last): the same order on every call. */
function byAttemptsThenName<T extends { attempts: number }>(name: (t: T) => string | null) {
  return (a: T, b: T) => {
    if (b.attempts !== a.attempts) return b.attempts - a.attempts;
    const x = name(a);
    const y = name(b);
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  };
}

/**
 * The autopay answer over (from, to] (the attempts of subscriptions in `only`'s currency, if given), from one
 * aggregation statement.
 */
export async function autopayReport(
  db: ReportDb,
  from: Date,
  to: Date,
  only: { currency: string; inCurrency: SubscriptionInCurrencySql } | null = null,
  preDebitSql: PreDebitCountsSql | null = null,
): Promise<AutopayReport> {
  const groups = await attemptGroups(db, from, to, only);
  const notices = preDebitSql
    ? await preDebitCounts(db, preDebitSql, from, to, only?.currency ?? null)
    : { renewals: 0, retries: 0, collections: 0, declined: 0, authenticationRequired: 0, authenticationCompleted: 0 };
  const total = groups.find((g) => g.dimension === 'total') ?? { attempts: 0, authorized: 0 };
  const byMethod = groups
    .filter((g) => g.dimension === 'method')
    .map((g) =>
      Object.assign(new AutopayMethodStats(), {
        method: mandateMethod(g.key) as MandateMethod,
        attempts: g.attempts,
        authorized: g.authorized,
        successRate: rate(g.authorized, g.attempts)!,
      }),
    )
    .sort(byAttemptsThenName((m) => m.method));
  const banks = groups
    .filter((g) => g.dimension === 'bank')
    .map((g) =>
      Object.assign(new AutopayBankStats(), {
        bank: g.key,
        attempts: g.attempts,
        authorized: g.authorized,
        successRate: rate(g.authorized, g.attempts)!,
      }),
    )
    .sort(byAttemptsThenName((b) => b.bank));
  const failureReasons = groups
    .filter((g) => g.dimension === 'reason')
    .map((g) => Object.assign(new AutopayFailureReason(), { reason: g.key!, count: g.attempts }))
    .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0));
  return Object.assign(new AutopayReport(), {
    from,
    to,
    attempts: total.attempts,
    authorized: total.authorized,
    failed: total.attempts - total.authorized,
    successRate: rate(total.authorized, total.attempts),
    byMethod,
    failureReasons,
    banks,
    preDebitNotices: Object.assign(new PreDebitNoticeStats(), {
      sent: notices.renewals + notices.retries + notices.collections,
      renewals: notices.renewals,
      retries: notices.retries,
      collections: notices.collections,
      declined: notices.declined,
    }),
    authentication: Object.assign(new AutopayAuthenticationStats(), {
      required: notices.authenticationRequired,
      completed: notices.authenticationCompleted,
    }),
  });
}

/**
 * GET /analytics/autopay: the window (from, to] (default the 30 days ending at the merchant's now) and `currency`,
 * validated as for every analytics answer (analytics.window.ts). An attempt is in the currency of the subscription
 * whose mandate it tried to authorise (a mandate is set up for one subscription, so for its currency). The answer
 * counts attempts, never amounts, so nothing needs converting: without `currency` every attempt of the merchant and
 * mode counts, rather than only the reporting currency's. The answer keeps docs/analytics.md's shape (no `currency`
 * field).
 */
export async function autopay(
  ctx: Ctx,
  db: ReportDb,
  args: { currency?: string | null; from?: string | null; to?: string | null },
  inCurrency: SubscriptionInCurrencySql,
  preDebitSql: PreDebitCountsSql | null = null,
): Promise<AutopayReport> {
  const w = await analyticsWindow(ctx, { currency: args.currency, from: args.from, to: args.to });
  const only = args.currency == null ? null : { currency: w.currency, inCurrency };
  return autopayReport(db, w.from, w.to, only, preDebitSql);
}

import type { GatewayEvent } from '../../gateways/port';
import type { BillingSubscription } from './subscription.entities';
import type { SubscriptionChange } from './subscription.lifecycle';
import { transitionFor } from './subscription.machine';

/**
 * The subscription's mandate record (docs/india.md "Mandates"): `mandate_status` and its times, written with the
 * change that learns of them.
 */

/** A mandate the customer has just authorised (its checkout, or a new mandate's page). */
export function mandateAuthorized(sub: BillingSubscription, event: GatewayEvent, now: Date): void {
  sub.mandateStatus = 'active';
  sub.mandateMethod = event.method ?? sub.mandateMethod ?? null;
  sub.mandateBank = event.bank ?? null;
  sub.mandateAuthorizedAt = now;
  sub.mandateRevokedAt = null;
}

/**
 * The mandate can debit nothing more: the gateway reports it revoked (by the customer, at the bank or in the UPI app)
 * or expired (`webhook`), or the next debit falls after its `mandate_valid_until` (`scheduler`, with that debit's
 * notice). Recorded as `subscription.mandate_revoked` before the next debit fails, the state unchanged. The customer
 * authorises a new one (the portal's "Authorise a new mandate"); until then the next debit fails and dunning follows.
 * Once only.
 */
export function endMandate(change: SubscriptionChange, now: Date, by: 'webhook' | 'scheduler'): void {
  const sub = change.sub;
  if (sub.mandateStatus === 'revoked' || !transitionFor(sub.status, 'revoke_mandate')) return;
  sub.mandateStatus = 'revoked';
  sub.mandateRevokedAt = now;
  change.move('revoke_mandate', by, {
    mandate_method: sub.mandateMethod ?? null,
    ...(by === 'scheduler' ? { reason: 'expired', mandate_valid_until: sub.mandateValidUntil?.toISOString() } : {}),
  });
}

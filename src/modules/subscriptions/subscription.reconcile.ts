import type { TenantParams } from '../../core/entity';
import type { ServicePool } from '../../core/orm-pool';
import type { GatewayEvent } from '../../gateways/port';
import { BillingSubscription } from './subscription.entities';
import { TERMINAL } from './subscription.machine';
import { tenantEntityManager } from '../../core/context';
import type { SubscriptionService } from './subscription.service';
import { markReconciled } from './subscription.store';

/**
 * Reads one subscription back from its gateway and applies what its webhooks should have told (a lost renewal
 * webhook must never leave a subscription in the wrong state). What is read becomes gateway events with ids derived
 * from the charge, so the webhook arriving late, or a second pass, applies nothing twice (the event id is recorded
 * once; a period already billed is not billed again).
 */
export async function reconcile(
  service: SubscriptionService,
  pool: ServicePool,
  tenant: TenantParams,
  id: string,
): Promise<void> {
  const em = tenantEntityManager(service.root, tenant);
  const sub = await em.findOne(BillingSubscription, { id });
  if (!sub?.providerSubscriptionId) return;
  const connection = await service.connectionOf(em, sub);
  const state = await service.providers.gatewayFor(connection).getSubscription(sub.providerSubscriptionId);
  const base = {
    provider: connection.provider as GatewayEvent['provider'],
    rawType: 'reconciliation',
    subscriptionId: sub.id,
    providerSubscriptionId: sub.providerSubscriptionId,
    occurredAt: new Date(),
    raw: state,
  };
  const events: GatewayEvent[] = [];
  const charge = state.latestCharge;
  if (
    charge?.periodStart &&
    (sub.cyclesCompleted === 0 || !sub.currentPeriodStart || charge.periodStart > sub.currentPeriodStart)
  ) {
    events.push({
      ...base,
      eventId: `reconcile:${sub.id}:${charge.periodStart.toISOString()}:${charge.status}`,
      kind: charge.status === 'succeeded' ? 'subscription.charged' : 'subscription.charge_failed',
      periodStart: charge.periodStart,
      periodEnd: charge.periodEnd,
      amount: charge.amount,
      currency: sub.currency,
      failureReason: charge.failureReason,
    });
  }
  if (state.status === 'cancelled' && !TERMINAL.has(sub.status)) {
    events.push({ ...base, eventId: `reconcile:${sub.id}:${state.status}`, kind: 'subscription.cancelled' });
  }
  for (const e of events) await service.applyGatewayEvent(em.fork(), connection, e);
  await markReconciled(pool, tenant, id);
}

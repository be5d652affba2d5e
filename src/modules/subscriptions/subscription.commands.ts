import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { logger } from '../../core/logger';
import { AUTHENTICATION_REQUIRED, GatewayError, GatewayPort, OneOffChargeResult } from '../../gateways/port';
import type { CommandJob, GatewayCommands } from '../gateway-commands';
import { Invoice, InvoiceStatus } from '../invoices';
import { payInvoiceByCollection, PaymentBillingReason } from '../payments';
import { BillingSubscription } from './subscription.entities';
import { moveGatewayToFullPrice } from './subscription.discount';
import type { SubscriptionService } from './subscription.service';
import { SubscriptionCommand } from './subscription.command-names';

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * Ends a gateway subscription (now, or at its period's end), done when it already is: a repeat after a lost answer, or
 * a halted subscription whose collection was stopped, is refused by the gateway as already cancelled.
 */
export async function endAtGateway(
  gw: GatewayPort,
  providerSubscriptionId: string,
  atPeriodEnd: boolean,
): Promise<void> {
  try {
    await gw.cancelSubscription(providerSubscriptionId, { atPeriodEnd });
  } catch (err) {
    if (!(err instanceof GatewayError && err.code === 'gateway_rejected')) throw err;
    const state = await gw.getSubscription(providerSubscriptionId).catch(() => null);
    const done =
      state &&
      (state.status === 'cancelled' || state.status === 'completed' || (atPeriodEnd && state.cancelAtPeriodEnd));
    if (!done) throw err;
  }
}

export function registerSubscriptionCommands(commands: GatewayCommands, service: SubscriptionService): void {
  const cancel = (job: CommandJob, gw: GatewayPort) =>
    endAtGateway(gw, text(job.args.provider_subscription_id), job.args.at_period_end === true);
  commands.register(SubscriptionCommand.CANCEL, cancel);
  // Halted is final but for a cancel (subscription.machine.ts): the gateway subscription is ended, which stops
  // collection in every state the gateway may hold it in (Razorpay refuses to pause one that is pending after a failed
  // charge, and would go on charging it). Its cancellation event is the echo of this (subscription.gateway-events.ts).
  commands.register(SubscriptionCommand.STOP_COLLECTION, cancel);

  commands.register(SubscriptionCommand.REFUND_CREDIT, async (job, gw) => {
    await gw.refund({
      providerPaymentId: text(job.args.provider_payment_id),
      amount: Number(job.args.amount),
      currency: text(job.args.currency),
      idempotencyKey: job.idempotency_key,
      reason: 'requested_by_customer',
      // Commands written before credit returns carried their invoice are asked again exactly as first asked.
      creditInvoiceId: job.args.send_invoice_id === true ? job.invoice_id : null,
    });
  });

  commands.register(SubscriptionCommand.COLLECT_INVOICE, async (job, gw, em) => collectInvoice(service, job, gw, em));

  commands.register(SubscriptionCommand.HOLD_RENEWAL, async (job, gw) => {
    await gw.holdRenewal({
      providerSubscriptionId: text(job.args.provider_subscription_id),
      until: new Date(text(job.args.until)),
    });
  });
  commands.register(SubscriptionCommand.RELEASE_RENEWAL, async (job, gw) => {
    await gw.releaseRenewal({
      providerSubscriptionId: text(job.args.provider_subscription_id),
      idempotencyKey: job.idempotency_key,
    });
  });

  commands.register(SubscriptionCommand.APPLY_MANDATE, async (job, gw) => {
    await gw.replaceSubscriptionMandate({
      providerSubscriptionId: text(job.args.provider_subscription_id),
      setupId: text(job.args.setup_id),
      idempotencyKey: job.idempotency_key,
    });
  });

  commands.register(SubscriptionCommand.FULL_PRICE, async (job, gw, em) => {
    await moveGatewayToFullPrice(service, em, job.subscription_id!, gw, job.idempotency_key);
  });
}

/**
 * Collects an invoice's amount due (its total, GST included) from the subscription's mandate. Stripe charges at once:
 * the invoice is then marked paid. Razorpay makes an add-on charged with the next cycle: the invoice stays open until
 * that charge is reported, which pays it (subscription.gateway-events.ts settleAddons). A decline is final for the
 * command (the invoice stays open); a refusal also forgets the add-on, so no charge is taken to carry it.
 */
async function collectInvoice(
  service: SubscriptionService,
  job: CommandJob,
  gateway: GatewayPort,
  em: EntityManager,
): Promise<void> {
  const invoice = await em.findOne(Invoice, { id: job.invoice_id! });
  const sub = await em.findOne(BillingSubscription, { id: job.subscription_id! });
  if (!invoice || !sub?.providerSubscriptionId || invoice.status !== InvoiceStatus.OPEN || invoice.amountDue <= 0)
    return;
  let charge;
  try {
    charge = await gateway.chargeSubscriptionOneOff({
      providerSubscriptionId: sub.providerSubscriptionId,
      providerCustomerId: sub.providerCustomerId ?? null,
      amount: invoice.amountDue,
      currency: invoice.currency,
      description: text(job.args.description),
      idempotencyKey: job.idempotency_key,
      invoiceId: invoice.id,
    });
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'gateway_rejected') await forgetAddon(em, sub.id, invoice.id);
    throw err;
  }
  if (charge.outcome === 'pending') return; // an add-on: settled with the charge that carries it
  if (charge.failureReason === AUTHENTICATION_REQUIRED)
    return awaitAuthentication(service, em, sub, invoice.id, charge);
  if (charge.outcome !== 'succeeded') {
    logger.info(
      { subscription_id: sub.id, invoice_id: invoice.id, reason: charge.failureReason },
      'invoice not collected from the mandate: left open',
    );
    throw new GatewayError(
      'gateway_rejected',
      `the charge was declined (${charge.failureReason ?? 'payment_failed'}); the invoice stays open`,
    );
  }
  const now = await service.now(sub);
  await em.fork().transactional(async (tx) => {
    // The collection is a payment the invoice names (once: a repeated run finds the invoice paid).
    await payInvoiceByCollection(service.invoices, tx, invoice.id, now, {
      sub,
      providerPaymentId: charge.providerPaymentId,
      reason: PaymentBillingReason.SUBSCRIPTION_UPDATE,
    });
  });
}

/**
 * The debit is above the mandate's limit (docs/india.md): the gateway made none and holds its invoice open for the
 * customer to authenticate on its page. The command is done; the invoice stays open with that page and
 * `invoice.payment_action_required` tells the merchant. The gateway's payment of it, once authenticated, pays the
 * invoice (subscription.gateway-events.ts collectionPaid).
 */
async function awaitAuthentication(
  service: SubscriptionService,
  em: EntityManager,
  sub: BillingSubscription,
  invoiceId: string,
  charge: OneOffChargeResult,
): Promise<void> {
  const now = await service.now(sub);
  await em.fork().transactional(async (tx) => {
    const invoice = await tx.findOne(Invoice, { id: invoiceId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (invoice?.status === InvoiceStatus.OPEN)
      service.invoices.requireAuthentication(tx, invoice, charge.authenticationUrl ?? null, now, sub.mode);
  });
}

async function forgetAddon(em: EntityManager, subscriptionId: string, invoiceId: string): Promise<void> {
  await em.fork().transactional(async (tx) => {
    const sub = await tx.findOne(BillingSubscription, { id: subscriptionId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (sub && sub.gatewayAddons.some((a) => a.invoiceId === invoiceId))
      sub.gatewayAddons = sub.gatewayAddons.filter((a) => a.invoiceId !== invoiceId);
  });
}

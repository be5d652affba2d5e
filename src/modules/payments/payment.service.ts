import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { validate as isUuid, v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy, tenantEntityManager, tenantOf } from '../../core/context';
import { logger } from '../../core/logger';
import type { ServicePool } from '../../core/orm-pool';
import { normaliseCurrency } from '../../core/currency';
import { make, Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { announce, recordEvent } from '../../core/events';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import type { Serializer } from '../../core/serialize';
import { requireInteger, validateMetadata, validateUrl } from '../../core/validate';
import { GatewayError, type GatewayEvent, type GatewayPort } from '../../gateways/port';
import type { CommandJob, GatewayCommand, GatewayCommands } from '../gateway-commands';
import { Customer, purchaseCustomer } from '../customers';
import { ProviderConnection, fromGatewayError, ProviderService } from '../providers';
import { currentMerchant } from '../merchants';
import { Payment, PaymentStatus, Refund, RefundStatus } from './payment.entities';
import {
  claimPendingCheckouts,
  insertPayment,
  recordGatewayEvent,
  refundsAwaitingGatewayId,
  refundsOfPayments,
} from './payment.store';
import { paymentTax, paymentTaxParties } from './payment.tax';
import { TaxBehavior } from '../catalog';
import { PaymentEvent, PaymentMoveContext, PAYMENTS, REFUNDABLE } from './payment.machine';
import { gstApplies } from '../../money';
import type { IdempotentAttempt } from '../idempotency';
import { Invoice, type InvoiceService } from '../invoices';
import type { CreatePaymentInput, RefundPaymentInput } from './payment.inputs';

export const MIN_PAYMENT_AMOUNT = 100;

/** The gateway command that returns a refund's money (docs/durable-work.md). */
const REFUND_COMMAND = 'refund';

export const refundsByPayment = defineLoader<string, Refund[]>('refundsByPayment', async (ctx, ids) =>
  groupBy(ids, await refundsOfPayments(ctx.em, ids), (r) => r.paymentId),
);

/**
 * Reserves a refund of `payment` (locked by the caller, its connection known to exist) in `em`'s transaction: the refund row, pending, its amount
 * counted in `amount_refunded`, and the durable `refund` command that asks the gateway for it (docs/durable-work.md),
 * whose run records the outcome (the refund's credit note on success). Answers both; run the command after the commit.
 */
export function reserveRefund(
  em: EntityManager,
  commands: GatewayCommands,
  payment: Payment,
  r: { id?: string; amount: number; reason: string | null },
): { refund: Refund; command: GatewayCommand } {
  // The gateway returns exactly the refund's amount; gateway_amount_refunded stays equal to amount_refunded.
  payment.amountRefunded += r.amount;
  payment.gatewayAmountRefunded += r.amount;
  const refund = make(Refund, {
    ...(r.id ? { id: r.id } : {}),
    paymentId: payment.id,
    amount: r.amount,
    gatewayAmount: r.amount,
    currency: payment.currency,
    reason: r.reason,
    namedAtGateway: true,
  });
  em.persist(refund);
  const command = commands.queue(em, {
    action: REFUND_COMMAND,
    description: `Refund ${r.amount} ${payment.currency} of payment ${payment.id}`,
    connectionId: payment.connectionId!,
    paymentId: payment.id,
    subscriptionId: payment.subscriptionId ?? null,
    args: { refund_id: refund.id },
    idempotencyKey: `refund-${refund.id}`,
  });
  return { refund, command };
}

export class PaymentService {
  constructor(
    private readonly providers: ProviderService,
    private readonly serializer: () => Serializer,
    private readonly invoices: InvoiceService,
    private readonly commands: GatewayCommands,
    /** The ORM's root EntityManager and the service pool: reconciliation works outside any request. */
    private readonly root: EntityManager,
    private readonly pool: ServicePool,
  ) {
    commands.register(REFUND_COMMAND, (job, gateway, em) => this.runRefund(job, gateway, em));
  }

  /**
   * One reconciliation pass over one-off payments (as subscriptions have theirs): a payment still pending `graceMs`
   * after its checkout opened has its checkout read back from the gateway, and what the gateway shows (paid, or expired)
   * is applied as its webhook would have been, under an event id derived from the outcome, so the late webhook and a
   * second pass change nothing more. An open checkout is read again a grace later. Answers how many were read.
   */
  async reconcilePending(graceMs: number, limit = 50): Promise<number> {
    const rows = await claimPendingCheckouts(this.pool, graceMs, limit);
    for (const row of rows) {
      const em = tenantEntityManager(this.root, { merchantId: row.merchant_id, mode: row.mode });
      try {
        const payment = await em.findOne(Payment, { id: row.id });
        if (!payment?.checkoutSessionId || payment.status !== PaymentStatus.PENDING) continue;
        const connection = await this.connectionOf(em, payment);
        const checkout = await this.providers.gatewayFor(connection).getPaymentCheckout(payment.checkoutSessionId);
        if (checkout.status === 'open') continue;
        await this.applyGatewayEvent(em, connection, {
          provider: connection.provider,
          eventId: `reconcile:${payment.id}:${checkout.status}`,
          rawType: 'reconciliation',
          kind: checkout.status === 'paid' ? 'payment.succeeded' : 'payment.expired',
          paymentId: payment.id,
          checkoutSessionId: payment.checkoutSessionId,
          providerPaymentId: checkout.providerPaymentId,
          method: checkout.method,
          bank: checkout.bank,
          raw: checkout,
        } as GatewayEvent);
      } catch (err) {
        logger.warn({ err, payment_id: row.id }, 'payment reconciliation failed; tried again later');
      }
    }
    return rows.length;
  }

  /**
   * Creates a payment and its hosted checkout. The gateway is called first, outside any transaction; only when
   * it answers are the customer and the payment written, together. A gateway failure leaves nothing behind, and a
   * retry with the same Idempotency-Key reuses the payment id, so the gateway replays instead of duplicating.
   * The GST on the amount is fixed here (payment.tax.ts), on top of it or contained in it (`tax_behavior`): the
   * checkout charges `amount_total`.
   */
  async create(ctx: Ctx, input: CreatePaymentInput, attempt: IdempotentAttempt | null = null): Promise<Payment> {
    const merchant = await currentMerchant(ctx);
    requireInteger(input.amount, 'amount', 0);
    if (input.amount < MIN_PAYMENT_AMOUNT) {
      throw new DomainError('amount_too_small', `amount must be at least ${MIN_PAYMENT_AMOUNT} subunits.`, 'amount');
    }
    const currency = normaliseCurrency(input.currency ?? 'INR');
    // The customer: `customer_id` (read now: 404 before any gateway call), else found or created by e-mail.
    const { record, details: customer } = await purchaseCustomer(ctx, input);
    const email = customer.email;
    const metadata = validateMetadata(input.metadata);
    validateUrl(input.successUrl, 'success_url');
    validateUrl(input.cancelUrl, 'cancel_url');
    if (input.referenceId != null && input.referenceId.length > 255)
      throw invalid('reference_id', 'reference_id is longer than 255 characters.');

    const id = attempt?.resourceId ?? uuidv7();
    // A retried request (same Idempotency-Key) whose first attempt committed before failing: answer that payment.
    const existing = attempt && !attempt.fresh ? await ctx.em.findOne(Payment, { id }) : null;
    if (existing) return existing;

    // GST on the amount (docs/invoices-and-gst.md), fixed now: the checkout charges amount + tax, and the invoice shows
    // that tax. The customer record (found by e-mail) is read only when it can decide the tax or the invoice's GSTIN.
    const stored =
      record ??
      (gstApplies(currency, merchant.gstin) && customer.gstin == null
        ? await ctx.em.findOne(Customer, { email }, { disableIdentityMap: true })
        : null);
    const taxParties = paymentTaxParties(currency, merchant, customer, stored);
    const taxBehavior = input.taxBehavior ?? TaxBehavior.EXCLUSIVE;
    const { tax: taxAmount, total: amountTotal } = paymentTax(input.amount, currency, taxParties, taxBehavior);
    if (!Number.isSafeInteger(amountTotal)) throw invalid('amount', 'amount is too large.');

    const connection = await this.providers.resolve(ctx, input.provider);
    const successUrl = input.successUrl.replaceAll('{PAYMENT_ID}', id);
    const cancelUrl = input.cancelUrl.replaceAll('{PAYMENT_ID}', id);
    let checkout;
    try {
      checkout = await this.providers.gatewayFor(connection).createPaymentCheckout({
        paymentId: id,
        amount: amountTotal,
        currency,
        customer: {
          email,
          name: customer.name ?? record?.name ?? null,
          phone: customer.phone ?? record?.phone ?? null,
        },
        description:
          (input.referenceId ? `${merchant.name} order ${input.referenceId}` : `Payment to ${merchant.name}`) +
          (taxAmount > 0 ? ' (incl. GST)' : ''),
        successUrl,
        cancelUrl,
        idempotencyKey: `payment-${id}`,
      });
    } catch (err) {
      ctx.log.warn({ err, payment_id: id, provider: connection.provider }, 'gateway checkout failed');
      throw fromGatewayError(err);
    }

    // The payment with its customer (by id, else found or created by e-mail) in one statement (payment.store.ts).
    return insertPayment(ctx.em, {
      id,
      customerId: record?.id ?? null,
      amount: input.amount,
      taxAmount,
      amountTotal,
      taxParties,
      taxBehavior,
      currency,
      customer,
      referenceId: input.referenceId ?? null,
      metadata,
      provider: connection.provider,
      connectionId: connection.id,
      providerPaymentId: checkout.providerPaymentId ?? null,
      checkoutSessionId: checkout.checkoutSessionId,
      checkoutUrl: checkout.checkoutUrl,
      successUrl,
      cancelUrl,
    });
  }

  payment(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Payment, id, 'payment');
  }

  payments(ctx: Ctx, args: PageArgs & { status?: PaymentStatus | null; customerId?: string | null }) {
    tenantOf(ctx);
    const where: Record<string, unknown> = {};
    if (args.status) where.status = args.status;
    if (args.customerId) {
      if (!/^[0-9a-f-]{36}$/i.test(args.customerId)) return paginate(ctx.em, Payment, { id: null }, args);
      where.customerId = args.customerId;
    }
    return paginate(ctx.em, Payment, where, args);
  }

  /**
   * Refunds all or part of a payment. Refund amounts are money returned to the customer (docs/payments.md): they count
   * against `amount_total` (amount + GST, what the gateway collected), and no amount means all of `amount_total` not
   * yet refunded. The payment row is locked while the amount is reserved, so concurrent refunds can never exceed it;
   * the gateway is asked by a durable command after that commit (reserveRefund): a refusal releases the reservation,
   * no answer leaves the refund pending until a retry or the gateway's event settles it (docs/durable-work.md). The
   * gateway refunds exactly the refund's amount (`gateway_amount` = `amount`). The refund's credit note is issued when
   * its success is recorded (settleRefund).
   */
  async refund(
    ctx: Ctx,
    paymentId: string,
    input: RefundPaymentInput,
    attempt: IdempotentAttempt | null = null,
  ): Promise<Refund> {
    tenantOf(ctx);
    const refundId = attempt?.resourceId ?? uuidv7();
    const prior = attempt ? await ctx.em.findOne(Refund, { id: refundId }) : null;
    if (prior) return prior;
    if (input.amount != null) requireInteger(input.amount, 'amount', 1);
    if (input.reason != null && input.reason.length > 255)
      throw invalid('reason', 'reason is longer than 255 characters.');

    const { refund, command } = await ctx.em.transactional(async (em) => {
      const payment = await findOr404(em, Payment, paymentId, 'payment', { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!REFUNDABLE.includes(payment.status) || !payment.providerPaymentId) {
        throw new DomainError('payment_not_refundable', `A ${payment.status} payment cannot be refunded.`);
      }
      // Money returned counts against what was collected (amount_total), refunds in progress included.
      const refundable = payment.amountTotal - payment.amountRefunded;
      const amount = input.amount ?? refundable;
      if (amount > refundable || amount < 1) {
        throw new DomainError(
          'amount_exceeds_refundable',
          `Refund amount ${amount} exceeds what is left to refund (${refundable} ${payment.currency} of amount_total ${payment.amountTotal}).`,
          'amount',
        );
      }
      // Checked before anything is reserved: a refund refused for a removed connection leaves no failed refund behind.
      await this.connectionOf(em, payment);
      return reserveRefund(em, this.commands, payment, { id: refundId, amount, reason: input.reason ?? null });
    });

    await this.commands.runNow([command.id]);
    const after = await ctx.em.fork().findOneOrFail(Refund, { id: refund.id });
    if (after.status === RefundStatus.FAILED)
      throw fromGatewayError(new GatewayError('gateway_rejected', after.failureReason ?? 'refused by the gateway'));
    if (after.status === RefundStatus.PENDING && !after.providerRefundId) {
      // No answer (a timeout, the gateway down): what was asked is not dropped. The refund stays pending, its amount
      // reserved, until the command's retry or the gateway's refund event settles it.
      throw fromGatewayError(new GatewayError('gateway_unavailable', 'no answer'));
    }
    return after;
  }

  /**
   * The refund command: asks the gateway to return a pending refund (its idempotency key: the same refund however often
   * it is asked), then records the answer. A refusal fails the refund (its reservation is given back); no answer
   * leaves it pending for the next attempt.
   */
  private async runRefund(job: CommandJob, gateway: GatewayPort, em: EntityManager): Promise<void> {
    const refund = await em.findOne(Refund, { id: String(job.args.refund_id) });
    if (!refund || refund.status !== RefundStatus.PENDING || refund.providerRefundId) return;
    const payment = await em.findOneOrFail(Payment, { id: refund.paymentId });
    let result;
    try {
      result = await gateway.refund({
        providerPaymentId: payment.providerPaymentId!,
        amount: refund.gatewayAmount,
        currency: refund.currency,
        idempotencyKey: job.idempotency_key,
        reason: refund.reason,
        // A refund asked for before refunds carried their id is asked again exactly as first asked: a retry under the
        // same idempotency key must repeat its parameters.
        refundId: refund.namedAtGateway ? refund.id : null,
      });
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'gateway_rejected')
        await this.failRefund(em.fork(), refund.id, err.message);
      throw err;
    }
    await em.fork().transactional(async (tx) => {
      const r = await tx.findOneOrFail(Refund, { id: refund.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      r.providerRefundId ??= result.providerRefundId;
      if (result.status === 'succeeded') await this.settleRefund(tx, r, job.mode);
      else if (result.status === 'failed') await this.failRefund(tx, r.id, 'refused by the gateway');
    });
  }

  private async connectionOf(em: EntityManager, payment: Payment): Promise<ProviderConnection> {
    const c = payment.connectionId
      ? await em.findOne(ProviderConnection, { id: payment.connectionId }, { populate: ['credentialsSealed'] })
      : null;
    if (!c)
      throw new DomainError(
        'provider_not_connected',
        `The ${payment.provider} connection of this payment was removed.`,
      );
    return c;
  }

  /**
   * A refund the gateway confirmed (its answer to our call, or its refund event), in the transaction that records it:
   * the payment becomes `refunded` once the succeeded refunds return all of `amount_total`, else
   * `partially_refunded`, merchants hear of it, and the invoice that records the payment gets the refund's credit note
   * (invoice.service.ts issueForRefund). Only a pending refund settles: a settled or failed one is final (a failed
   * one gave its reservation back), so a repeated or late event changes nothing.
   */
  private async settleRefund(em: EntityManager, refund: Refund, mode: Mode): Promise<void> {
    if (refund.status !== RefundStatus.PENDING) return;
    refund.status = RefundStatus.SUCCEEDED;
    await em.flush();
    const payment = await em.findOneOrFail(Payment, { id: refund.paymentId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const succeeded = await em.find(Refund, { paymentId: payment.id, status: RefundStatus.SUCCEEDED });
    const refunded = succeeded.reduce((sum, r) => sum + r.amount, 0);
    // The payment row stays locked to the commit: the credit notes of its invoice are issued one at a time.
    const on = refunded >= payment.amountTotal ? 'refund_full' : 'refund_partial';
    await PAYMENTS.apply({ ...this.moveContext(em, payment, mode), refund }, on);
  }

  private async failRefund(em: EntityManager, refundId: string, reason: string): Promise<void> {
    await em.transactional(async (tx) => {
      const r = await tx.findOne(Refund, { id: refundId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!r || r.status !== RefundStatus.PENDING) return;
      r.status = RefundStatus.FAILED;
      r.failureReason = reason.slice(0, 255);
      const payment = await tx.findOneOrFail(Payment, { id: r.paymentId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      payment.amountRefunded -= r.amount;
      payment.gatewayAmountRefunded -= r.gatewayAmount;
    });
  }

  /** What the payment table's hooks reach (payment.machine.ts), in the transaction `em` of the move. */
  private moveContext(em: EntityManager, payment: Payment, mode: Mode): PaymentMoveContext {
    return {
      em,
      payment,
      invoices: this.invoices,
      // Outbox event and live-update notice, in the transaction of the change.
      changed: async (type) => {
        await em.flush();
        if (type) recordEvent(em, type, this.serializer().toRest(payment), mode);
        await announce(em, { topic: 'payment', merchantId: payment.merchantId, mode: payment.mode, id: payment.id });
      },
    };
  }

  /**
   * Applies a verified gateway event exactly once (the (provider, event id) row is the guard) and in any order:
   * a move the current status does not allow, such as a late `failed` after `succeeded`, changes nothing.
   * `em` is bound to the connection's tenant. Returns false for a repeated delivery.
   */
  async applyGatewayEvent(em: EntityManager, connection: ProviderConnection, event: GatewayEvent): Promise<boolean> {
    return em.transactional(async (tx) => {
      const tenant = { merchantId: connection.merchantId, mode: connection.mode };
      const fresh = await recordGatewayEvent(tx, tenant, {
        provider: connection.provider,
        eventId: event.eventId,
        type: event.rawType,
        connectionId: connection.id,
        payload: event.raw,
      });
      if (!fresh) return false;
      switch (event.kind) {
        case 'payment.succeeded':
        case 'payment.failed':
        case 'payment.expired':
          await this.applyPaymentEvent(tx, event, connection.mode);
          break;
        case 'refund.succeeded':
        case 'refund.failed': {
          const byId = () =>
            event.providerRefundId
              ? tx.findOne(
                  Refund,
                  { providerRefundId: event.providerRefundId },
                  { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
                )
              : Promise.resolve(null);
          let refund = (await byId()) ?? (await this.refundNamedBy(tx, event));
          if (!refund && (await this.isCreditReturn(tx, event))) {
            if (event.kind === 'refund.failed')
              logger.error(
                { invoice_id: event.creditInvoiceId, provider_refund_id: event.providerRefundId },
                "the gateway failed the return of an invoice's credit: the customer paid the credit's part too",
              );
            break;
          }
          if (!refund && event.providerPaymentId) {
            // The gateway can report a refund before our call that created it has stored the gateway's id. A refund
            // asked for since refunds carry their id is named by its event (above); for one asked for before, refuse
            // the event (nothing is recorded): the gateway delivers it again, by when the id is known. Checked in one
            // statement with the id itself, which may have been stored since the read above.
            const seen = await refundsAwaitingGatewayId(tx, tenant, event.providerPaymentId, event.providerRefundId);
            if (seen.known) refund = await byId();
            else if (seen.awaiting > 0) {
              throw new DomainError(
                'gateway_unavailable',
                'The refund this event reports is still being recorded; deliver it again.',
              );
            }
          }
          if (!refund) {
            // Not one Cadence asked for: a refund made at the gateway itself.
            if (event.kind === 'refund.succeeded') await this.recordGatewayRefund(tx, connection, event);
            break;
          }
          if (event.kind === 'refund.succeeded') await this.settleRefund(tx, refund, connection.mode);
          else await this.failRefund(tx, refund.id, event.failureReason ?? 'refused by the gateway');
          break;
        }
        default:
          break; // subscription events belong to the subscriptions module
      }
      return true;
    });
  }

  /**
   * The refund a gateway refund event names by Cadence's id (RefundInput.refundId) when the gateway's id is not stored
   * yet: our call that created it got no answer (a timeout, a lost connection), or has not returned. The event settles
   * it then, with the gateway's id recorded, instead of waiting for the command's retry. Only a refund of the event's
   * gateway payment that has no gateway id of its own is taken; anything else is left to the lookups after this.
   */
  private async refundNamedBy(em: EntityManager, event: GatewayEvent): Promise<Refund | null> {
    if (!event.refundId || !isUuid(event.refundId) || !event.providerRefundId || !event.providerPaymentId) return null;
    const refund = await em.findOne(
      Refund,
      { id: event.refundId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!refund || refund.providerRefundId) return null;
    const payment = await em.findOne(Payment, { id: refund.paymentId });
    if (payment?.providerPaymentId !== event.providerPaymentId) return null;
    refund.providerRefundId = event.providerRefundId;
    return refund;
  }

  /**
   * Whether a refund event is the return of the credit an invoice took from earlier credit notes, made on the charge
   * that paid it (RefundInput.creditInvoiceId). That payment already counts only what the customer paid (the invoice's
   * `amount_paid`), so the return is not a refund of it: recorded as one, it would count the credit twice (a second
   * credit note, the payment shown partly refunded). The invoice must be this tenant's, have taken credit, be paid by
   * the event's gateway payment when a payment records it, and the amount be at most the credit.
   */
  private async isCreditReturn(em: EntityManager, event: GatewayEvent): Promise<boolean> {
    if (!event.creditInvoiceId || !isUuid(event.creditInvoiceId) || !event.providerPaymentId) return false;
    const invoice = await em.findOne(Invoice, { id: event.creditInvoiceId });
    if (!invoice || invoice.creditApplied <= 0) return false;
    if (event.amount != null && event.amount > Math.min(invoice.creditApplied, invoice.total)) return false;
    if (!invoice.paymentId) return true; // credit paid all of it: no payment records the charge
    const payment = await em.findOne(Payment, { id: invoice.paymentId });
    return payment?.providerPaymentId === event.providerPaymentId;
  }

  /**
   * A refund made at the gateway itself (its dashboard or its API, not through Cadence), reported by its event: recorded
   * as Cadence's own refunds are, so the payment, the invoice's credit note and `payment.refunded` say what the gateway
   * returned (docs/payments.md). One gateway charge can pay several invoices (a Razorpay renewal with add-ons, one
   * payment per invoice): the refund is spread over them oldest first, each up to what is left of it. Money returned
   * beyond what Cadence recorded as collected is logged, not invented.
   */
  private async recordGatewayRefund(em: EntityManager, connection: ProviderConnection, event: GatewayEvent) {
    const amount = event.amount ?? 0;
    if (!event.providerPaymentId || !event.providerRefundId || amount < 1) return;
    const payments = await em.find(
      Payment,
      { providerPaymentId: event.providerPaymentId, connectionId: connection.id, status: { $in: [...REFUNDABLE] } },
      { orderBy: { createdAt: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    let left = amount;
    for (const payment of payments) {
      if (event.currency && event.currency.toUpperCase() !== payment.currency) break;
      const share = Math.min(left, payment.amountTotal - payment.amountRefunded);
      if (share < 1) continue;
      payment.amountRefunded += share;
      payment.gatewayAmountRefunded += share;
      const refund = make(Refund, {
        paymentId: payment.id,
        amount: share,
        gatewayAmount: share,
        currency: payment.currency,
        reason: 'Refunded at the gateway',
        providerRefundId: event.providerRefundId,
      });
      em.persist(refund);
      await this.settleRefund(em, refund, connection.mode);
      left -= share;
      if (left === 0) break;
    }
    if (left > 0)
      logger.warn(
        { provider_payment_id: event.providerPaymentId, provider_refund_id: event.providerRefundId, unrecorded: left },
        'the gateway refunded more than Cadence recorded as collected for this charge',
      );
  }

  private async applyPaymentEvent(em: EntityManager, event: GatewayEvent, mode: Mode): Promise<void> {
    const where =
      event.paymentId && /^[0-9a-f-]{36}$/i.test(event.paymentId)
        ? { id: event.paymentId }
        : event.checkoutSessionId
          ? { checkoutSessionId: event.checkoutSessionId }
          : null;
    const payment = where ? await em.findOne(Payment, where, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
    if (!payment) return;
    const on = event.kind as PaymentEvent;
    // A move the table does not list is a late or repeated event: it changes nothing.
    if (!PAYMENTS.can(payment.status, on)) return;
    // The reported fields, the outbound event and (a success) the paid invoice: the row's hooks (payment.machine.ts).
    await PAYMENTS.apply({ ...this.moveContext(em, payment, mode), event }, on);
  }
}

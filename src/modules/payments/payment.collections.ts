import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { make } from '../../core/entity';
import type { Invoice, InvoiceService } from '../invoices';
import { divRound } from '../../money';
import { Payment, PaymentBillingReason, PaymentStatus } from './payment.entities';

/** The subscription a collection belongs to, as the payment names it. */
export interface Collector {
  id: string;
  customerId: string;
  provider: Payment['provider'];
  connectionId: string;
}

/**
 * Records an amount a gateway collected for a subscription as a succeeded payment, in the transaction that applies the
 * charge, and names it on the invoice it paid (`payment_id`), so it is listed with the customer's payments and refunds
 * like a one-off payment (`POST /payments/{id}/refund`, with a credit note against that invoice).
 *
 * `amount_total` is what the customer paid on the invoice (`amount_paid`: its total less credit from earlier credit
 * notes, whose part of the charge is refunded on it); `tax_amount` is the invoice's GST in proportion, and `amount` the
 * rest. The invoice's parties name the customer. No `payment.succeeded` event: the invoice's `invoice.paid` tells it.
 */
export function recordCollection(
  em: EntityManager,
  input: {
    id?: string;
    invoice: Invoice;
    sub: Collector;
    providerPaymentId: string | null;
    reason: PaymentBillingReason;
    method?: string | null;
  },
): Payment {
  const { invoice, sub } = input;
  const total = invoice.amountPaid;
  // Integer arithmetic, rounded half away from zero (BigInt: the product can pass 2^53).
  const tax =
    invoice.total > 0 ? Number(divRound(BigInt(invoice.taxAmount) * BigInt(total), BigInt(invoice.total))) : 0;
  const payment = make(Payment, {
    ...(input.id ? { id: input.id } : {}),
    amount: total - tax,
    taxAmount: tax,
    amountTotal: total,
    currency: invoice.currency,
    status: PaymentStatus.SUCCEEDED,
    customerId: sub.customerId,
    customerEmail: invoice.recipient?.email ?? '',
    customerName: invoice.recipient?.name ?? null,
    metadata: {},
    provider: sub.provider,
    connectionId: sub.connectionId,
    providerPaymentId: input.providerPaymentId,
    billingReason: input.reason,
    subscriptionId: sub.id,
    method: input.method ?? null,
  });
  em.persist(payment);
  if (invoice.paymentId !== payment.id) invoice.paymentId = payment.id;
  return payment;
}

/**
 * An open invoice paid by a collection, in the caller's transaction: marked paid naming a new payment, which is then
 * recorded (recordCollection). Nothing is recorded when credit paid all of it or the invoice was already paid (a
 * repeated charge report or command run): `invoice.paid` names the payment from the start.
 */
export async function payInvoiceByCollection(
  invoices: Pick<InvoiceService, 'markPaid'>,
  em: EntityManager,
  invoiceId: string,
  at: Date,
  collection: Omit<Parameters<typeof recordCollection>[1], 'id' | 'invoice'>,
): Promise<Invoice> {
  const id = uuidv7();
  const paid = await invoices.markPaid(em, invoiceId, at, id);
  if (paid.paymentId === id) recordCollection(em, { ...collection, id, invoice: paid });
  return paid;
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { defineMachine, Hook, Move, Transition } from '../../core/state-machine';
import type { GatewayEvent } from '../../gateways/port';
import type { InvoiceService } from '../invoices';
import { Payment, PaymentStatus, Refund } from './payment.entities';

/**
 * A payment's lifecycle as one table (src/core/state-machine.ts): the checkout's outcome the gateway reports, and the
 * refunds it confirms. Each row declares its side effects: the fields the gateway reports, the outbound event, and the
 * invoice or credit note that goes with the move, in the transaction that records it.
 */

/** A checkout's outcome (the gateway event's kind), or a confirmed refund returning part or all of `amount_total`. */
export type PaymentEvent =
  'payment.succeeded' | 'payment.failed' | 'payment.expired' | 'refund_partial' | 'refund_full';

/** What a move's hooks reach. */
export interface PaymentMoveContext {
  readonly em: EntityManager;
  readonly payment: Payment;
  /** The gateway's report of the checkout's outcome (`payment.*`). */
  readonly event?: GatewayEvent;
  /** The refund whose success moves the payment (`refund_*`). */
  readonly refund?: Refund;
  readonly invoices: Pick<InvoiceService, 'issueForPayment' | 'issueForRefund'>;
  /** Writes the change: a flush, the outbound event (none: null), the live-update notice. */
  changed(type: string | null): Promise<void>;
}

type PaymentHook = Hook<
  PaymentMoveContext,
  Move<PaymentStatus, PaymentEvent, Transition<PaymentStatus, PaymentEvent>>,
  Promise<void>
>;

const P = PaymentStatus;

/** The statuses a refund may be asked from (and settle from). */
export const REFUNDABLE: readonly PaymentStatus[] = [P.SUCCEEDED, P.PARTIALLY_REFUNDED];

/** What the gateway reports with the outcome; `failure`: the reason when it gives none (null: the payment has none). */
const reported =
  (failure: string | null): PaymentHook =>
  ({ payment, event }) => {
    if (event?.providerPaymentId) payment.providerPaymentId = event.providerPaymentId;
    if (event?.method) payment.method = event.method;
    if (event?.bank) payment.bank = event.bank;
    payment.failureReason = failure === null ? null : (event?.failureReason ?? failure);
  };

const changed =
  (type: string | null): PaymentHook =>
  (c) =>
    c.changed(type);

/** A payment succeeds once (the table): its paid invoice is issued with the success. */
const paidInvoice: PaymentHook = async ({ em, payment, invoices }) => {
  await invoices.issueForPayment(em, payment);
};

/** The refund's credit note against the invoice that records the payment; the last one takes what is left. */
const refundCreditNote: PaymentHook = async ({ em, payment, refund, invoices }, move) => {
  await invoices.issueForRefund(em, payment, refund!, move.to === P.REFUNDED);
};

export const PAYMENTS = defineMachine<
  PaymentStatus,
  PaymentEvent,
  Transition<PaymentStatus, PaymentEvent>,
  PaymentMoveContext,
  Promise<void>
>({
  states: Object.values(P),
  transitions: [
    // A verified gateway event: a late one (a `failed` after `succeeded`) or a repeat is not in the table, and the
    // caller leaves it. A checkout paid after it failed or expired still succeeds.
    {
      on: 'payment.succeeded',
      from: [P.PENDING, P.FAILED, P.EXPIRED],
      to: P.SUCCEEDED,
      hooks: [reported(null), changed('payment.succeeded'), paidInvoice],
    },
    {
      on: 'payment.failed',
      from: [P.PENDING],
      to: P.FAILED,
      hooks: [reported('payment_failed'), changed('payment.failed')],
    },
    // An abandoned checkout is no outbound event (live subscribers still hear of it).
    { on: 'payment.expired', from: [P.PENDING], to: P.EXPIRED, hooks: [reported('checkout_expired'), changed(null)] },
    // A refund the gateway confirmed: refunded once the succeeded refunds return all of amount_total.
    {
      on: 'refund_partial',
      from: REFUNDABLE,
      to: P.PARTIALLY_REFUNDED,
      hooks: [changed('payment.refunded'), refundCreditNote],
    },
    { on: 'refund_full', from: REFUNDABLE, to: P.REFUNDED, hooks: [changed('payment.refunded'), refundCreditNote] },
  ],
  // Only a bug reaches this: gateway events are checked first, and refunds are reserved from REFUNDABLE only.
  refused: (from, on) => new Error(`payment: the table has no '${on}' from ${from}`),
  state: {
    get: (c) => c.payment.status,
    set: (c, to) => {
      c.payment.status = to;
    },
  },
});

import { DomainError } from '../../core/errors';
import { defineMachine, Hook, Move, Transition } from '../../core/state-machine';
import { Invoice, InvoiceStatus } from './invoice.entities';

/**
 * What may happen to an issued invoice, as one table (src/core/state-machine.ts): the commands that settle it, the
 * statuses each may run from, and its side effects (the amounts it settles, its outbound event). Invoices are issued
 * open or paid, credit notes issued (invoice.service.ts issue); a credit note is never settled.
 */

export type InvoiceEvent = 'mark_paid' | 'mark_uncollectible' | 'void';

/** What a move's hooks reach. */
export interface InvoiceMoveContext {
  readonly invoice: Invoice;
  /** `mark_paid`: when it was paid. */
  readonly paidAt?: Date;
  /** `mark_paid`: the payment the caller records for the collection (payment.collections.ts). */
  readonly paymentId?: string;
  /** Writes the change with its outbound event. */
  recorded(type: string): Promise<void>;
}

type InvoiceHook = Hook<
  InvoiceMoveContext,
  Move<InvoiceStatus, InvoiceEvent, Transition<InvoiceStatus, InvoiceEvent>>,
  Promise<void>
>;

const I = InvoiceStatus;

/**
 * All that was due is paid. The invoice names the payment before `invoice.paid` is serialised, when the customer paid
 * something on it and no payment is named yet.
 */
const settlePaid: InvoiceHook = ({ invoice, paidAt, paymentId }) => {
  invoice.amountPaid = invoice.total - invoice.creditApplied;
  invoice.amountDue = 0;
  invoice.paidAt = paidAt!;
  if (paymentId && invoice.amountPaid > 0 && !invoice.paymentId) invoice.paymentId = paymentId;
};

const nothingDue: InvoiceHook = ({ invoice }) => {
  invoice.amountDue = 0;
};

const outbound =
  (type: string): InvoiceHook =>
  (c) =>
    c.recorded(type);

export const INVOICES = defineMachine<
  InvoiceStatus,
  InvoiceEvent,
  Transition<InvoiceStatus, InvoiceEvent>,
  InvoiceMoveContext,
  Promise<void>
>({
  states: Object.values(I),
  transitions: [
    { on: 'mark_paid', from: [I.OPEN, I.UNCOLLECTIBLE], to: I.PAID, hooks: [settlePaid, outbound('invoice.paid')] },
    {
      on: 'mark_uncollectible',
      from: [I.OPEN],
      to: I.UNCOLLECTIBLE,
      hooks: [outbound('invoice.marked_uncollectible')],
    },
    { on: 'void', from: [I.OPEN, I.UNCOLLECTIBLE], to: I.VOID, hooks: [nothingDue, outbound('invoice.voided')] },
  ],
  refused: (from, on) =>
    new DomainError('invalid_state_transition', `Cannot ${on.replace(/_/g, ' ')} an invoice that is ${from}.`),
  state: {
    get: (c) => c.invoice.status,
    set: (c, to) => {
      c.invoice.status = to;
    },
  },
});

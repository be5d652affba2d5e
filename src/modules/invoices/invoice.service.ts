import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { make, Mode, TENANT_FILTER, TenantParams } from '../../core/entity';
import { outboxEvent, recordEvent } from '../../core/events';
import { findOr404 } from '../../core/find';
import { CommitStatement, rootTransaction, sendWithCommit } from '../../core/sql';
import { idFilters, PageArgs, paginate } from '../../core/pagination';
import type { Serializer } from '../../core/serialize';
import type { Customer } from '../customers';
import type { GatewayCommands } from '../gateway-commands';
import { EInvoicing } from './e-invoice.service';
import type { IrpClient } from './e-invoice.irp';
import type { Merchant } from '../merchants';
import type { InvoicedPayment as Payment, InvoicedRefund as Refund } from './invoice.payments';
import type { OutboxEvent } from '../../core/events';
import {
  BillingReason,
  Invoice,
  InvoiceLineItem,
  InvoiceRecipient,
  InvoiceStatus,
  InvoiceSupplier,
  InvoiceType,
} from './invoice.entities';
import { financialYear, numberParts } from './invoice.numbering';
import { invoiceParties, merchantNow, numberInvoicesStatement } from './invoice.store';
import type { InvoiceTax, TaxSnapshot, TaxTreatment } from '../../money';
import {
  invoiceTax,
  invoiceTaxFor,
  invoiceTaxIncludedFor,
  invoiceTaxWithHeads,
  LineTax,
  taxTreatment,
} from '../../money';
import { invoiceOfPayment, refundCreditNoteDraft, refundCreditParts } from './credit-note';
import { InvoiceEvent, InvoiceMoveContext, INVOICES } from './invoice.machine';
import { creditedAgainst } from './credit-note.store';

export interface InvoiceLineDraft {
  description: string;
  quantity: number;
  /** Tax-exclusive price of one unit (docs/invoices-and-gst.md). */
  unitAmount: number;
  /** Tax-exclusive amount of the line; may be negative (a credit line) as long as the subtotal is not. */
  amount: number;
  periodStart?: Date | null;
  periodEnd?: Date | null;
  proration?: boolean;
  /** Default: the merchant's SAC code (a credit note's line takes its original's). */
  hsnSac?: string | null;
}

export interface InvoiceDraft {
  type: InvoiceType;
  billingReason: BillingReason;
  /** Invoices: `open` or `paid`; credit notes: `issued`. */
  status: InvoiceStatus;
  customerId: string;
  subscriptionId?: string | null;
  paymentId?: string | null;
  /** A credit note's original invoice: its `amount_credited` grows by the credit note's total (capped at its total). */
  relatedInvoiceId?: string | null;
  /** A refund's credit note: the refund it documents. */
  refundId?: string | null;
  currency: string;
  lines: InvoiceLineDraft[];
  periodStart?: Date | null;
  periodEnd?: Date | null;
  /** Merchant time (the test clock in test mode): decides the financial year of the number. */
  issuedAt: Date;
  /** Default: `issuedAt` when issued paid. */
  paidAt?: Date | null;
  /** Credit from earlier credit notes taken off amount_due; capped at the total. */
  creditApplied?: number;
  /**
   * A coupon's discount (tax-exclusive subunits), already among the lines as a negative line: shown on the invoice as
   * `discount_amount`. Default 0.
   */
  discountAmount?: number;
  /**
   * Tax parties fixed before the invoice (a one-time payment's, snapshotted at its creation so the invoice shows the
   * GST its checkout charged): used instead of the merchant's and the customer's current ones. Default: current.
   */
  taxParties?: SnapshotTaxParties | null;
  /**
   * A subscription's tax (treatment and rate, fixed when it was created): its invoices' GST follows it rather than the
   * settings now, so they keep agreeing with what its gateway charges. Default: the treatment of the tax parties.
   */
  tax?: TaxSnapshot | null;
  /**
   * Tax heads given rather than computed on the lines (a refund's credit note: its share of the original's heads,
   * credit-note.ts), under the rate of `taxParties`. Default: GST on the lines.
   */
  heads?: LineTax | null;
  /**
   * The parties the document states (docs/invoices-and-gst.md), when fixed before it (a credit note may repeat its
   * original's). Default: the merchant's name and address and the customer's name, e-mail and address now, with the GSTINs and
   * states the document is taxed under.
   */
  supplier?: InvoiceSupplier | null;
  recipient?: InvoiceRecipient | null;
}

/**
 * What decides an invoice's GST (docs/invoices-and-gst.md) besides its currency and lines, as a payment snapshots it.
 */
export interface SnapshotTaxParties {
  rateBps: number;
  merchantGstin: string | null;
  merchantState: string | null;
  /**
   * The customer's place of supply (`state`) and GSTIN as the payment fixed them; null: as the customer record has
   * them when the invoice is issued (a payment that cannot be taxed need not fix them).
   */
  customer: { state: string | null; gstin: string | null } | null;
}

/** The tax parties from the merchant's settings and the customer's details as they stand. */
export function taxPartiesOf(
  merchant: { gstin?: string | null; stateCode?: string | null; taxRateBps: number },
  customer: { gstin?: string | null; stateCode?: string | null } | null,
): SnapshotTaxParties {
  return {
    rateBps: merchant.taxRateBps,
    merchantGstin: merchant.gstin ?? null,
    merchantState: merchant.stateCode ?? merchant.gstin?.slice(0, 2) ?? null,
    // A registered customer's place of supply is its registration's state (the GSTIN's first two digits).
    customer: customer
      ? { state: customer.stateCode ?? customer.gstin?.slice(0, 2) ?? null, gstin: customer.gstin ?? null }
      : null,
  };
}

/** The GST treatment of a document in `currency` between `parties` (docs/invoices-and-gst.md). */
export function treatmentOf(currency: string, parties: SnapshotTaxParties): TaxTreatment {
  return taxTreatment({
    currency,
    merchantGstin: parties.merchantGstin,
    merchantState: parties.merchantState,
    customerState: parties.customer?.state ?? null,
  });
}

export interface InvoiceListArgs extends PageArgs {
  customerId?: string | null;
  subscriptionId?: string | null;
  type?: InvoiceType | null;
}

/** Invoices and credit notes: GST, gap-free numbers, issue and settle (docs/invoices-and-gst.md). */
export class InvoiceService {
  /** Registration of e-invoices (e-invoice.service.ts); none in processes built without it. */
  readonly eInvoicing: EInvoicing | null;

  constructor(
    private readonly serializer: () => Serializer,
    eInvoicing?: { irp: IrpClient; commands: GatewayCommands },
  ) {
    this.eInvoicing = eInvoicing ? new EInvoicing(eInvoicing.irp, eInvoicing.commands, (i) => this.toRest(i)) : null;
  }

  invoice(ctx: Ctx, id: string): Promise<Invoice> {
    return findOr404(ctx.em, Invoice, id, 'invoice');
  }

  invoices(ctx: Ctx, args: InvoiceListArgs) {
    tenantOf(ctx);
    const where = idFilters(args, ['customerId', 'subscriptionId']);
    if (args.type) where.type = args.type;
    return paginate(ctx.em, Invoice, where, args);
  }

  /**
   * Issues an invoice or credit note in the caller's transaction (`em` bound to the tenant): GST per the formulas
   * (docs/invoices-and-gst.md) on the tax-exclusive lines, the next gap-free number of its type and financial year, and
   * the outbox events (`invoice.created` or `credit_note.created`, and `invoice.paid` when issued paid). Called without
   * a transaction, it opens one. The number is given when the transaction commits (`numberInvoicesAtCommit`): until
   * then `invoice.number` is null, and the invoice's outbox events wait to be written with it.
   */
  async issue(em: EntityManager, draft: InvoiceDraft): Promise<Invoice> {
    if (!em.getTransactionContext()) return em.transactional((tx) => this.issue(tx, draft));
    const tenant = boundTenant(em);
    checkDraft(draft);
    const currency = draft.currency.toUpperCase();
    const read = partiesByTransaction.get(rootTransaction(em)!);
    const { merchant, customer } =
      read && read.merchant.id === tenant.merchantId && read.customer.id === draft.customerId
        ? read
        : await invoiceParties(em, tenant, draft.customerId);
    if (!customer) throw new Error(`invoice: customer ${draft.customerId} is not the tenant's`);

    const live = taxPartiesOf(merchant, customer);
    const { rateBps, merchantGstin, merchantState } = draft.taxParties ?? live;
    const { state: customerState, gstin: customerGstin } = draft.taxParties?.customer ?? live.customer!;
    const tax: InvoiceTax & { taxableAmounts?: number[] } = draft.heads
      ? invoiceTaxWithHeads(
          draft.lines.map((l) => l.amount),
          draft.heads,
          rateBps,
        )
      : draft.tax?.behavior === 'inclusive'
        ? invoiceTaxIncludedFor(
            draft.lines.map((l) => l.amount),
            draft.tax.treatment,
            draft.tax.rateBps,
          )
        : draft.tax
          ? invoiceTaxFor(
              draft.lines.map((l) => l.amount),
              draft.tax.treatment,
              draft.tax.rateBps,
            )
          : invoiceTax(
              draft.lines.map((l) => l.amount),
              { currency, rateBps, merchantGstin, merchantState, customerState },
            );
    const subtotal = tax.heads.total - tax.heads.tax;
    const total = tax.heads.total;
    const creditNote = draft.type === InvoiceType.CREDIT_NOTE;
    const creditApplied = creditNote ? 0 : Math.min(draft.creditApplied ?? 0, total);
    const paid = draft.status === InvoiceStatus.PAID;
    const amountPaid = paid ? total - creditApplied : 0;

    const invoice = make(Invoice, {
      // Stamped now rather than at the flush (TenantStamp): the outbox payloads are built before it.
      merchantId: tenant.merchantId,
      mode: tenant.mode,
      type: draft.type,
      number: NOT_NUMBERED_YET,
      billingReason: draft.billingReason,
      status: draft.status,
      customerId: customer.id,
      subscriptionId: draft.subscriptionId ?? null,
      paymentId: draft.paymentId ?? null,
      relatedInvoiceId: draft.relatedInvoiceId ?? null,
      refundId: draft.refundId ?? null,
      currency,
      subtotal,
      cgstAmount: tax.heads.cgst,
      sgstAmount: tax.heads.sgst,
      igstAmount: tax.heads.igst,
      taxAmount: tax.heads.tax,
      total,
      creditApplied,
      discountAmount: draft.discountAmount ?? 0,
      amountPaid,
      // A credit note is owed by the merchant, not to it: nothing is due on it.
      amountDue: creditNote ? 0 : total - creditApplied - amountPaid,
      taxRateBps: tax.taxable ? (draft.tax?.rateBps ?? rateBps) : 0,
      // An export (non-INR) is supplied outside India: no Indian state stands in for an unknown customer state.
      placeOfSupply: customerState ?? (currency === 'INR' ? merchantState : null),
      supplierGstin: merchantGstin,
      customerGstin,
      // Final at issue (docs/invoices-and-gst.md): the PDF is rendered from these alone, whatever the settings become.
      supplier: draft.supplier ?? supplierAtIssue(merchant, merchantGstin, merchantState),
      recipient: draft.recipient ?? recipientAtIssue(customer, customerGstin, customerState),
      lineItems: draft.lines.map((l, i) =>
        lineItem(l, tax.lines[i], merchant.sacCode ?? null, tax.taxableAmounts?.[i] ?? null),
      ),
      periodStart: draft.periodStart ?? null,
      periodEnd: draft.periodEnd ?? null,
      issuedAt: draft.issuedAt,
      paidAt: paid ? (draft.paidAt ?? draft.issuedAt) : null,
    });
    em.persist(invoice);
    if (this.eInvoicing && EInvoicing.applies(merchant, invoice)) this.eInvoicing.queue(em, invoice);
    if (creditNote && invoice.relatedInvoiceId) await this.credit(em, invoice.relatedInvoiceId, total);
    numberAtCommit(em, invoice, financialYear(draft.issuedAt));
    // Nothing in the payloads is set by the database or at the flush; the number is added when the commit gives it.
    this.record(em, invoice, creditNote ? 'credit_note.created' : 'invoice.created', tenant.mode);
    if (paid) this.record(em, invoice, 'invoice.paid', tenant.mode);
    await em.flush();
    return invoice;
  }

  /**
   * The merchant and a customer as a statement of the caller's transaction has just read them (the gateway event's
   * statement reads them with the subscription it locks): invoices issued to that customer in the transaction take
   * these instead of reading them again (invoiceParties).
   */
  partiesRead(em: EntityManager, merchant: Merchant, customer: Customer): void {
    const trx = rootTransaction(em);
    if (trx) partiesByTransaction.set(trx, { merchant, customer });
  }

  /**
   * The paid invoice of a one-time payment that just succeeded (docs/invoices-and-gst.md: its amount is the
   * tax-exclusive price), in the transaction that records the success, issued at merchant time. Its GST comes from the
   * tax parties the payment snapshotted at creation, so its total is the payment's `amount_total`, what the checkout
   * charged (a payment created before the snapshot existed has none: the current parties, as then). A tax-inclusive
   * payment's line contains its GST, under the treatment of those parties, so the total is its amount exactly.
   */
  async issueForPayment(em: EntityManager, payment: Payment): Promise<Invoice> {
    const at = await merchantNow(em, boundTenant(em));
    const parties = payment.taxParties;
    const inclusive: TaxSnapshot | null =
      payment.taxBehavior === 'inclusive' && parties
        ? {
            treatment: treatmentOf(payment.currency, parties),
            rateBps: parties.rateBps,
            behavior: 'inclusive',
          }
        : null;
    return this.issue(em, {
      type: InvoiceType.INVOICE,
      billingReason: BillingReason.ONE_TIME,
      status: InvoiceStatus.PAID,
      customerId: payment.customerId,
      paymentId: payment.id,
      currency: payment.currency,
      lines: [
        {
          description: payment.referenceId ? `Order ${payment.referenceId}`.slice(0, 255) : 'One-time payment',
          quantity: 1,
          unitAmount: payment.amount,
          amount: payment.amount,
        },
      ],
      issuedAt: at,
      paidAt: at,
      taxParties: payment.taxParties ?? null,
      tax: inclusive,
    });
  }

  /**
   * The credit note of a refund of `payment` whose success is being recorded (payment.service.ts settleRefund), in
   * that transaction, against the invoice that records the payment (null: none does, e.g. it succeeded before
   * invoices were issued for payments). Its taxable value and heads are the refund's share of the invoice's
   * (credit-note.ts refundCreditParts); `last` (the refund completes the refund of amount_total) takes what is left.
   * The invoice row is locked to the commit, so credit notes of one invoice are issued one at a time.
   */
  async issueForRefund(em: EntityManager, payment: Payment, refund: Refund, last: boolean): Promise<Invoice | null> {
    if (!em.getTransactionContext()) return em.transactional((tx) => this.issueForRefund(tx, payment, refund, last));
    const original = await invoiceOfPayment(em, payment.id);
    if (!original) return null;
    const invoiceParts = {
      subtotal: original.subtotal,
      cgst: original.cgstAmount,
      sgst: original.sgstAmount,
      igst: original.igstAmount,
    };
    const parts = refundCreditParts(invoiceParts, await creditedAgainst(em, original.id), refund.amount, last);
    const draft = refundCreditNoteDraft(original, refund, parts, await merchantNow(em, boundTenant(em)));
    return draft ? this.issue(em, draft) : null;
  }

  /** A credit note of `amount` against an invoice: its amount_credited grows, never past its total. */
  private async credit(em: EntityManager, invoiceId: string, amount: number): Promise<void> {
    const original = await em.findOne(
      Invoice,
      { id: invoiceId },
      { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
    );
    if (!original) throw new Error(`invoice: the related invoice ${invoiceId} is not the tenant's`);
    original.amountCredited = Math.min(original.total, original.amountCredited + amount);
  }

  /**
   * open (or uncollectible) -> paid, with outbox `invoice.paid`; nothing when already paid. `paymentId` is the payment
   * the caller records for the collection (payment.collections.ts): the invoice names it before `invoice.paid` is
   * serialised, when the customer paid something on it and no payment is named yet.
   */
  markPaid(em: EntityManager, invoiceId: string, paidAt: Date, paymentId?: string): Promise<Invoice> {
    return this.settle(em, invoiceId, 'mark_paid', { paidAt, paymentId });
  }

  /** open -> uncollectible; nothing when already uncollectible. */
  markUncollectible(em: EntityManager, invoiceId: string): Promise<Invoice> {
    return this.settle(em, invoiceId, 'mark_uncollectible');
  }

  /** open or uncollectible -> void (nothing is due any more); nothing when already void. */
  voidInvoice(em: EntityManager, invoiceId: string): Promise<Invoice> {
    return this.settle(em, invoiceId, 'void');
  }

  /** Moves an invoice by its table (invoice.machine.ts) under its row lock; nothing when it is there already. */
  private async settle(
    em: EntityManager,
    invoiceId: string,
    on: InvoiceEvent,
    payment: Pick<InvoiceMoveContext, 'paidAt' | 'paymentId'> = {},
  ): Promise<Invoice> {
    if (!em.getTransactionContext()) return em.transactional((tx) => this.settle(tx, invoiceId, on, payment));
    const { mode } = boundTenant(em);
    const invoice = await findOr404(em, Invoice, invoiceId, 'invoice', { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (INVOICES.targets(on).includes(invoice.status)) return invoice;
    const recorded = async (type: string) => {
      await em.flush();
      this.record(em, invoice, type, mode);
      await em.flush();
    };
    // A credit note is refused as the table refuses a move.
    await INVOICES.apply({ invoice, ...payment, recorded }, on, () => invoice.type === InvoiceType.INVOICE);
    return invoice;
  }

  /**
   * The invoice as REST shows it (docs/invoices-and-gst.md, with its line items): the payload of its outbound events.
   */
  toRest(invoice: Invoice): Record<string, unknown> {
    const serializer = this.serializer();
    return {
      ...serializer.toRest(invoice, 'Invoice'),
      supplier: serializer.toRest(invoice.supplier, 'InvoiceSupplier'),
      recipient: serializer.toRest(invoice.recipient, 'InvoiceRecipient'),
      line_items: invoice.lineItems.map((l) => serializer.toRest(l, 'InvoiceLineItem')),
    };
  }

  /**
   * The gateway asks the customer to authenticate the invoice's debit, a mandate debit above the limit (docs/india.md):
   * its page is kept on the invoice (collection, not the document: the PDF does not change) and
   * `invoice.payment_action_required` carries it to the merchant. Asked again (a retry), the merchant is told again.
   */
  requireAuthentication(em: EntityManager, invoice: Invoice, url: string | null, at: Date, mode: Mode): void {
    invoice.hostedAuthenticationUrl = url ?? invoice.hostedAuthenticationUrl ?? null;
    invoice.authenticationRequiredAt ??= at;
    this.record(em, invoice, 'invoice.payment_action_required', mode);
  }

  /**
   * An invoice's outbox event, its object the invoice as REST shows it with `extra` fields; one about an invoice still
   * to be numbered is written by the numbering, with its number.
   */
  record(em: EntityManager, invoice: Invoice, type: string, mode: Mode, extra: Record<string, unknown> = {}): void {
    const object = { ...this.toRest(invoice), ...extra };
    const waiting = toNumber(em)?.find((p) => p.invoice === invoice);
    if (waiting) waiting.events.push(outboxEvent(type, object, mode));
    else recordEvent(em, type, object, mode);
  }
}

/**
 * Gap-free numbers at commit. Numbers are consecutive per sequence (merchant, mode, type, financial year), so an
 * issuer holds its sequence row from the moment it takes a number until its transaction ends (a rollback must give the
 * number back). Taken early, that row lock serialised a merchant's renewals over each whole transaction; so the
 * number is taken last: `issue` inserts the invoice with a null number and notes it here, keyed by the root
 * transaction, and one statement sent with the COMMIT (src/core/sql.ts sendWithCommit; invoice.store.ts
 * numberInvoicesStatement) bumps the sequences, sets the numbers and writes the invoices' outbox events carrying them.
 * The lock is then held only while the server commits. The entities get their numbers too, as if loaded with them, so
 * answers built after the commit carry them. The migration's deferred constraint trigger refuses a commit that would
 * leave an invoice without a number.
 */
interface InvoiceToNumberAtCommit {
  invoice: Invoice;
  financialYear: number;
  /** Its outbox events so far (created, paid): written by the numbering statement, with the number. */
  events: OutboxEvent[];
}

/** null in the invoice's row and entity until the commit numbers it. */
const NOT_NUMBERED_YET = null as unknown as string;

const waitingByTransaction = new WeakMap<object, InvoiceToNumberAtCommit[]>();

/** InvoiceService.partiesRead, by root transaction. */
const partiesByTransaction = new WeakMap<object, { merchant: Merchant; customer: Customer }>();

function toNumber(em: EntityManager): InvoiceToNumberAtCommit[] | undefined {
  const trx = rootTransaction(em);
  return trx && waitingByTransaction.get(trx);
}

function numberAtCommit(em: EntityManager, invoice: Invoice, fy: number): void {
  const trx = rootTransaction(em);
  if (!trx) throw new Error('invoices are issued inside a transaction');
  const waiting = waitingByTransaction.get(trx);
  if (waiting) {
    waiting.push({ invoice, financialYear: fy, events: [] });
    return;
  }
  waitingByTransaction.set(trx, [{ invoice, financialYear: fy, events: [] }]);
  sendWithCommit(em, () => numberingStatements(em, waitingByTransaction.get(trx) ?? []));
}

/** The numbering statements of a transaction's invoices: one per tenant (in practice one). */
function numberingStatements(em: EntityManager, waiting: InvoiceToNumberAtCommit[]): CommitStatement[] {
  const tenants = new Map<string, InvoiceToNumberAtCommit[]>();
  for (const w of waiting) {
    const key = `${w.invoice.merchantId}|${w.invoice.mode}`;
    tenants.set(key, [...(tenants.get(key) ?? []), w]);
  }
  return [...tenants.values()].map((group) => {
    const { merchantId, mode } = group[0].invoice;
    return numberInvoicesStatement(
      { merchantId, mode },
      group.map((w) => ({
        id: w.invoice.id,
        type: w.invoice.type,
        financialYear: w.financialYear,
        ...numberParts(w.invoice.type, mode, w.financialYear),
      })),
      group.flatMap((w) =>
        w.events.map((e) => ({
          id: e.id,
          createdAt: e.createdAt,
          invoiceId: w.invoice.id,
          type: e.type,
          payload: e.payload,
        })),
      ),
      (numbers) => {
        for (const { invoice } of group) {
          const number = numbers.get(invoice.id);
          if (!number) continue; // not held by the transaction any more (a rolled-back savepoint)
          invoice.number = number;
          // As the database has it: a later flush of this entity writes no update for it.
          const original = em.getUnitOfWork().getOriginalEntityData(invoice);
          if (original) original.number = number;
        }
      },
    );
  });
}

function boundTenant(em: EntityManager): TenantParams {
  const t = em.getFilterParams<TenantParams>(TENANT_FILTER) as TenantParams | undefined;
  if (!t?.merchantId || !t.mode) throw new Error('invoices are issued with an EntityManager bound to a tenant');
  return t;
}

/** A draft comes from our own code (the subscriptions engine, payments): a bad one is a bug, not a client error. */
function checkDraft(d: InvoiceDraft): void {
  const creditNote = d.type === InvoiceType.CREDIT_NOTE;
  const allowed = creditNote ? [InvoiceStatus.ISSUED] : [InvoiceStatus.OPEN, InvoiceStatus.PAID];
  if (!allowed.includes(d.status)) throw new Error(`invoice draft: a ${d.type} cannot be issued ${d.status}`);
  if (!d.lines.length) throw new Error('invoice draft: no lines');
  for (const l of d.lines) {
    if (!Number.isSafeInteger(l.amount) || !Number.isSafeInteger(l.unitAmount))
      throw new Error('invoice draft: amounts are integer subunits');
    if (!Number.isSafeInteger(l.quantity) || l.quantity < 1)
      throw new Error('invoice draft: quantity must be a positive integer');
  }
  if (d.lines.reduce((s, l) => s + l.amount, 0) < 0) throw new Error('invoice draft: the subtotal is negative');
  if (d.discountAmount != null && (!Number.isSafeInteger(d.discountAmount) || d.discountAmount < 0)) {
    throw new Error('invoice draft: discountAmount must be a non-negative integer');
  }
  if (d.creditApplied != null && (!Number.isSafeInteger(d.creditApplied) || d.creditApplied < 0)) {
    throw new Error('invoice draft: creditApplied must be a non-negative integer');
  }
  if (!(d.issuedAt instanceof Date) || Number.isNaN(d.issuedAt.getTime()))
    throw new Error('invoice draft: issuedAt is not a date');
}

/** The supplier a document states: the merchant's name and address now, the GSTIN and state it is taxed under. */
function supplierAtIssue(merchant: Merchant, gstin: string | null, stateCode: string | null): InvoiceSupplier {
  return { name: merchant.name, gstin, stateCode, address: merchant.address ?? null };
}

/**
 * The recipient a document states: the customer's name, e-mail and address now, the GSTIN and state it is taxed under.
 */
function recipientAtIssue(customer: Customer, gstin: string | null, stateCode: string | null): InvoiceRecipient {
  return { name: customer.name ?? null, email: customer.email, gstin, stateCode, address: customer.address ?? null };
}

function lineItem(
  l: InvoiceLineDraft,
  tax: { cgst: number; sgst: number; igst: number },
  sac: string | null,
  taxable: number | null,
): InvoiceLineItem {
  // jsonb: dates are kept as ISO strings, as they read back. A tax-inclusive line shows its taxable value (its amount
  // less its GST: docs/invoices-and-gst.md, "Tax-inclusive prices"), so the lines sum to the subtotal as always.
  return {
    description: l.description,
    quantity: l.quantity,
    unitAmount: taxable != null && l.quantity === 1 ? taxable : l.unitAmount,
    amount: taxable ?? l.amount,
    periodStart: l.periodStart ? l.periodStart.toISOString() : null,
    periodEnd: l.periodEnd ? l.periodEnd.toISOString() : null,
    proration: l.proration ?? false,
    hsnSac: l.hsnSac !== undefined ? l.hsnSac : sac,
    cgstAmount: tax.cgst,
    sgstAmount: tax.sgst,
    igstAmount: tax.igst,
  };
}

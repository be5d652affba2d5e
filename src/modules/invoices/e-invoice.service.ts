import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { Mode } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { recordEvent } from '../../core/events';
import { irnOf } from '../../core/irn';
import type { CommandJob, GatewayCommands } from '../gateway-commands';
import type { Merchant } from '../merchants';
import { docTypeOf, eInvoicePayload } from './e-invoice.payload';
import { CANCEL_WINDOW_PASSED, IrpCancelReason, IrpClient, IrpRefusal } from './e-invoice.irp';
import { EInvoiceStatus, Invoice } from './invoice.entities';
import { financialYear } from './invoice.numbering';
import { merchantNow } from './invoice.store';

export const REGISTER_E_INVOICE = 'register_e_invoice';

/** The portal lets an IRN be cancelled this long after its acknowledgement. */
export const CANCEL_WINDOW_MS = 24 * 3_600_000;

const REASONS: readonly IrpCancelReason[] = ['duplicate', 'data_entry_mistake', 'order_cancelled', 'other'];
const MAX_REMARK = 100;

/**
 * GST e-invoicing (docs/india.md, "E-invoicing"). A merchant with e-invoicing on has each INR invoice and credit note
 * whose recipient has a GSTIN registered with the invoice registration portal: the issuing transaction marks it
 * `pending` and writes a durable command (`register_e_invoice`, no gateway connection), which the worker runs after the
 * commit (the number is given at commit) and retries until the portal answers. The registration (IRN, acknowledgement,
 * signed QR) is then kept on the document; a refusal, or a registration that did not go through in time, leaves it
 * `failed` with the reason, and `retry` sends it again. The document itself never changes.
 */
export class EInvoicing {
  constructor(
    private readonly irp: IrpClient,
    private readonly commands: GatewayCommands,
    private readonly toRest: (invoice: Invoice) => Record<string, unknown>,
  ) {
    commands.registerService(REGISTER_E_INVOICE, {
      run: (job, em) => this.register(job, em),
      givenUp: (job, em, lastError) => this.givenUp(job, em, lastError),
    });
  }

  /** Whether an issued document is an e-invoice of its merchant: e-invoicing on, INR, both parties with a GSTIN. */
  static applies(merchant: Merchant, invoice: Invoice): boolean {
    return merchant.eInvoicing && invoice.currency === 'INR' && !!invoice.supplierGstin && !!invoice.customerGstin;
  }

  /** In the issuing transaction: the document waits for its registration, which a command makes after the commit. */
  queue(em: EntityManager, invoice: Invoice): void {
    invoice.eInvoiceStatus = EInvoiceStatus.PENDING;
    this.queueCommand(em, invoice);
  }

  /** `retryEInvoice`: a failed registration is sent again (the same document, a new command). */
  async retry(ctx: Ctx, id: string): Promise<Invoice> {
    tenantOf(ctx);
    const invoice = await ctx.em.transactional(async (tx) => {
      const doc = await findOr404(tx, Invoice, id, 'invoice', { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (doc.eInvoiceStatus !== EInvoiceStatus.FAILED) {
        throw new DomainError(
          'invalid_state_transition',
          `Only a failed e-invoice registration is sent again; this document's is ${doc.eInvoiceStatus ?? 'none (not an e-invoice)'}.`,
        );
      }
      doc.eInvoiceStatus = EInvoiceStatus.PENDING;
      this.queueCommand(tx, doc);
      return doc;
    });
    return invoice;
  }

  /**
   * `cancelEInvoice`: the portal cancels the IRN, which it allows within 24 hours of its acknowledgement (merchant
   * time: the test clock in test mode). The call goes to the portal first and only its answer is recorded, so nothing
   * is written that the portal has not done; asked again, a cancelled IRN answers as cancelled.
   */
  async cancel(ctx: Ctx, id: string, reason: string, remark: string | null | undefined): Promise<Invoice> {
    const { merchantId, mode } = tenantOf(ctx);
    if (!REASONS.includes(reason as IrpCancelReason))
      throw invalid('reason', `reason must be one of ${REASONS.join(', ')}.`);
    if (remark != null && remark.length > MAX_REMARK)
      throw invalid('remark', `remark must be at most ${MAX_REMARK} characters.`);
    const doc = await findOr404(ctx.em, Invoice, id, 'invoice');
    if (doc.eInvoiceStatus === EInvoiceStatus.CANCELLED) return doc;
    const now = await merchantNow(ctx.em, { merchantId, mode });
    if (doc.eInvoiceStatus !== EInvoiceStatus.REGISTERED || !doc.irn || !doc.ackDate) {
      throw new DomainError(
        'e_invoice_not_cancellable',
        `Only a registered e-invoice can be cancelled; this document's registration is ${doc.eInvoiceStatus ?? 'none'}.`,
      );
    }
    if (now.getTime() - doc.ackDate.getTime() > CANCEL_WINDOW_MS) {
      throw new DomainError(
        'e_invoice_not_cancellable',
        `The portal cancels an IRN only within 24 hours of its acknowledgement (${doc.ackDate.toISOString()}); issue a credit note instead.`,
      );
    }
    let cancelledAt: Date;
    try {
      ({ cancelledAt } = await this.irp.cancel(
        doc.supplierGstin!,
        doc.irn,
        reason as IrpCancelReason,
        remark ?? reason,
        clockOf(mode, now),
      ));
    } catch (err) {
      if (err instanceof IrpRefusal && err.irpCode === CANCEL_WINDOW_PASSED)
        throw new DomainError('e_invoice_not_cancellable', err.message);
      throw err;
    }
    return ctx.em.transactional(async (tx) => {
      const locked = await tx.findOneOrFail(Invoice, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (locked.eInvoiceStatus === EInvoiceStatus.CANCELLED) return locked;
      locked.eInvoiceStatus = EInvoiceStatus.CANCELLED;
      locked.eInvoiceCancelledAt = cancelledAt;
      await tx.flush();
      recordEvent(tx, 'e_invoice.cancelled', this.toRest(locked), mode);
      return locked;
    });
  }

  private queueCommand(em: EntityManager, invoice: Invoice): void {
    this.commands.queue(
      em,
      {
        action: REGISTER_E_INVOICE,
        description: `Register ${invoice.type === 'credit_note' ? 'credit note' : 'invoice'} with the invoice registration portal`,
        connectionId: null,
        invoiceId: invoice.id,
        // One registration per document and attempt series: the portal answers a document it has again.
        idempotencyKey: `e-invoice:${invoice.id}:${Date.now()}`,
      },
      // Written wherever documents are issued (renewals, refunds, plan changes): the worker runs it, not the caller.
      { runBy: 'worker' },
    );
  }

  /** The command's run: the portal registers the document (or answers its earlier registration), and it is kept. */
  private async register(job: CommandJob, em: EntityManager): Promise<void> {
    const doc = await em.findOne(Invoice, { id: job.invoice_id! });
    if (!doc || doc.eInvoiceStatus !== EInvoiceStatus.PENDING) return; // registered (or cancelled) already
    const now = await merchantNow(em, { merchantId: job.merchant_id, mode: job.mode });
    const reg = await this.irp.register(doc.supplierGstin!, eInvoicePayload(doc), clockOf(job.mode, now));
    const expected = irnOf(doc.supplierGstin!, financialYear(doc.issuedAt), docTypeOf(doc), doc.number);
    if (reg.irn !== expected) throw new Error(`the portal answered IRN ${reg.irn}; the document's is ${expected}`);
    await em.transactional(async (tx) => {
      const locked = await tx.findOneOrFail(Invoice, { id: doc.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (locked.eInvoiceStatus !== EInvoiceStatus.PENDING) return;
      Object.assign(locked, {
        eInvoiceStatus: EInvoiceStatus.REGISTERED,
        irn: reg.irn,
        ackNo: reg.ackNo,
        ackDate: reg.ackDate,
        signedQr: reg.signedQr,
        eInvoiceError: null,
      });
      await tx.flush();
      recordEvent(tx, 'e_invoice.registered', this.toRest(locked), job.mode);
    });
  }

  /** In the transaction that gives the command up: the document stays, `failed` with the portal's last word. */
  private async givenUp(job: CommandJob, em: EntityManager, lastError: string): Promise<void> {
    const doc = await em.findOne(Invoice, { id: job.invoice_id! }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!doc || doc.eInvoiceStatus !== EInvoiceStatus.PENDING) return;
    doc.eInvoiceStatus = EInvoiceStatus.FAILED;
    doc.eInvoiceError = lastError;
    await em.flush();
    recordEvent(em, 'e_invoice.failed', this.toRest(doc), job.mode);
  }
}

/** The portal is told merchant time only in test mode, where the sandbox's portal follows the test clock. */
const clockOf = (mode: Mode, now: Date): Date | null => (mode === Mode.TEST ? now : null);

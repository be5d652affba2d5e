import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantQuery } from '../../core/sql';
import type { CreditParts } from './credit-note';

/** Statements of credit notes (credit-note.ts) beyond the ORM's. */

/** The parts of the credit notes issued against an invoice so far (committed, or issued in this transaction). */
export async function creditedAgainst(em: EntityManager, invoiceId: string): Promise<CreditParts & { total: number }> {
  await em.flush();
  const [row] = await tenantQuery<Record<string, string | null>>(
    em,
    `select coalesce(sum(subtotal), 0) as subtotal, coalesce(sum(cgst_amount), 0) as cgst, coalesce(sum(sgst_amount), 0) as sgst,
            coalesce(sum(igst_amount), 0) as igst, coalesce(sum(total), 0) as total
       from invoices where {tenant} and type = 'credit_note' and related_invoice_id = ?`,
    [invoiceId],
  );
  return {
    subtotal: Number(row?.subtotal ?? 0),
    cgst: Number(row?.cgst ?? 0),
    sgst: Number(row?.sgst ?? 0),
    igst: Number(row?.igst ?? 0),
    total: Number(row?.total ?? 0),
  };
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { tenantEntityManager } from '../../src/core/context';
import { make, Mode } from '../../src/core/entity';
import { Customer } from '../../src/modules/customers/customer.entities';
import { BillingReason, InvoiceStatus, InvoiceType } from '../../src/modules/invoices/invoice.entities';
import type { InvoiceDraft, InvoiceService } from '../../src/modules/invoices/invoice.service';
import type { Harness } from '../harness';

/** Shared by the invoice tests: tenant-bound EntityManagers, customers, drafts. */

/** A fresh EntityManager bound to the merchant's mode, as the subscriptions engine gets one. */
export function tenantEm(h: Harness, merchantId: string, mode: Mode = Mode.TEST): EntityManager {
  return tenantEntityManager(h.app.orm.em as unknown as EntityManager, { merchantId, mode });
}

export const invoiceService = (h: Harness): InvoiceService => h.app.app.services.invoices;

let n = 0;
export async function customer(
  h: Harness,
  merchantId: string,
  details: { stateCode?: string | null; gstin?: string | null } = {},
  mode = Mode.TEST,
) {
  const em = tenantEm(h, merchantId, mode);
  const c = make(Customer, {
    email: `c${++n}-${Date.now()}@example.com`,
    stateCode: details.stateCode ?? null,
    gstin: details.gstin ?? null,
  });
  em.persist(c);
  await em.flush();
  return c.id;
}

export function draft(customerId: string, over: Partial<InvoiceDraft> = {}): InvoiceDraft {
  return {
    type: InvoiceType.INVOICE,
    billingReason: BillingReason.SUBSCRIPTION_CYCLE,
    status: InvoiceStatus.OPEN,
    customerId,
    currency: 'INR',
    lines: [{ description: 'Pro plan', quantity: 1, unitAmount: 10000, amount: 10000 }],
    issuedAt: new Date('2026-06-15T10:00:00Z'),
    ...over,
  };
}

/** Issues a draft in a transaction of its own, for the merchant's mode. */
export function issue(h: Harness, merchantId: string, d: InvoiceDraft, mode = Mode.TEST) {
  return tenantEm(h, merchantId, mode).transactional((em) => invoiceService(h).issue(em, d));
}

export async function rows<T = any>(h: Harness, sql: string, params: unknown[]): Promise<T[]> {
  return h.app.orm.em.getConnection().execute<T[]>(sql, params);
}

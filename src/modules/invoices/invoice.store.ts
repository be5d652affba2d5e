import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, systemQuery, tenantQuery } from '../../core/sql';
import { Customer } from '../customers/customer.entities';
import { Merchant } from '../merchants/merchant.entities';
import { testClockSql } from '../test-clock/test-clock.store';
import type { InvoiceType } from './invoice.entities';

/** Every statement on invoices and invoice_sequences beyond the ORM's. */

/**
 * The next number of the tenant's sequence for `type` in financial year `fy`. The upsert takes the sequence row's lock
 * until the caller's transaction ends: concurrent issuers queue on it, and a rollback gives the number back (no gaps).
 */
export async function takeInvoiceNumber(em: EntityManager, type: InvoiceType, fy: number): Promise<number> {
  if (!em.getTransactionContext()) throw new Error('takeInvoiceNumber runs inside the transaction that writes the invoice');
  const [row] = await tenantQuery<{ last_number: number | string }>(
    em,
    `insert into invoice_sequences (merchant_id, mode, type, financial_year, last_number) values ({tenant_values}, ?, ?, 1)
     on conflict (merchant_id, mode, type, financial_year) do update set last_number = invoice_sequences.last_number + 1
     returning last_number`,
    [type, fy],
  );
  return Number(row.last_number);
}

/**
 * Merchant time (contract 8, 14): the wall clock, plus the merchant's test-clock offset in test mode. Read in the
 * caller's transaction, so an invoice issued while a test clock advances carries the time the work was due at.
 * A system statement: it reads no tenant rows, only the clock's offset by merchant id.
 */
export async function merchantNow(em: EntityManager, tenant: TenantParams): Promise<Date> {
  const [row] = await systemQuery<{ now: Date | string }>(
    em,
    // The fragment names the mode before the merchant.
    `select clock_timestamp() + ${testClockSql.offsetMs('?::uuid', '?::text')} * interval '1 millisecond' as now`,
    [tenant.mode, tenant.merchantId],
  );
  return new Date(row.now);
}

/**
 * The two parties of an invoice in one statement (every renewal issues one): the merchant, read afresh (its tax
 * settings may have changed since the EntityManager loaded it), and the tenant's customer `customerId` (null: not the
 * tenant's). A customer the EntityManager already holds is kept as it is (it may carry changes not yet flushed).
 */
export async function invoiceParties(em: EntityManager, tenant: TenantParams, customerId: string): Promise<{ merchant: Merchant; customer: Customer | null }> {
  const [row] = await tenantQuery(
    em,
    `select ${aliasedColumns(em, Merchant, 'm')}, ${aliasedColumns(em, Customer, 'c')}
     from merchants m left join customers c on {tenant:c} and c.id = ?
     where m.id = ?`,
    [customerId, tenant.merchantId],
  );
  const merchant = row && aliasedPart(row, 'm');
  if (!merchant) throw new Error(`invoice: merchant ${tenant.merchantId} not found`);
  const held = em.getUnitOfWork().getById<Customer>(Customer.name, customerId);
  const customer = aliasedPart(row, 'c');
  return {
    merchant: em.map(Merchant, merchant as never),
    customer: held ?? (customer ? em.map(Customer, customer as never) : null),
  };
}

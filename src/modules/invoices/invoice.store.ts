import type { EntityManager } from '@mikro-orm/postgresql';
import type { TenantParams } from '../../core/entity';
import { aliasedColumns, aliasedPart, systemQuery, tenantQuery, tenantQueryAs, tenantQueryWithCommit } from '../../core/sql';
import { Customer } from '../customers/customer.entities';
import { Merchant } from '../merchants/merchant.entities';
import { testClockSql } from '../test-clock/test-clock.store';
import type { InvoiceType } from './invoice.entities';
import { MAX_NUMBER_LENGTH } from './invoice.numbering';

/** Every statement on invoices and invoice_sequences beyond the ORM's. */

/** One invoice the commit numbers (invoice.numbering.ts): its sequence, and the pieces of its number's format. */
export interface InvoiceToNumber {
  id: string;
  type: InvoiceType;
  financialYear: number;
  /** `TINV`, `CN`, ...: formatInvoiceNumber's prefix. */
  prefix: string;
  /** `2627`: the financial year as the number shows it. */
  year: string;
}

/** An outbox event about an invoice to number, written with its number (`data.object.number`). */
export interface InvoiceEventToWrite {
  id: string;
  createdAt: Date;
  invoiceId: string;
  type: string;
  payload: Record<string, unknown>;
}

/**
 * Numbers the tenant's invoices `invoices` (issued in this order in the caller's transaction, with a null number) and
 * writes their outbox events carrying the numbers, in one statement: the transaction's last. Each sequence row
 * (merchant, mode, type, financial year) is bumped once by its count, in (type, year) order (so two transactions never
 * wait on each other's rows crosswise), and stays locked until the commit: concurrent issuers queue on it only for
 * their commit, and a rollback gives the numbers back (no gaps). An invoice the transaction no longer holds (a
 * rolled-back savepoint) takes no number. The format is formatInvoiceNumber's (invoice.numbering.ts), in SQL: the
 * sequence padded to 6 digits, the dashes dropped when 16 characters would not hold it. Answers id -> number.
 *
 * `commit`: the statement is sent with the transaction's COMMIT (src/core/sql.ts tenantQueryWithCommit), so the
 * sequence row is locked only while the server runs the statement and commits, never across a turn of our event
 * loop (which under load takes milliseconds, and would serialise a merchant's renewals on the row again).
 */
export async function numberInvoices(
  em: EntityManager,
  tenant: TenantParams,
  invoices: InvoiceToNumber[],
  events: InvoiceEventToWrite[],
  commit: boolean,
): Promise<Map<string, string>> {
  const rows = await (commit ? tenantQueryWithCommit : tenantQueryAs)<{ id: string; number: string }>(
    em,
    tenant,
    `with x as (
       select x.* from jsonb_to_recordset(?::jsonb) as x(ord int, id uuid, type text, fy int, prefix text, year text)
       join invoices i on i.id = x.id and {tenant:i} and i.number is null
     ),
     s as (
       insert into invoice_sequences as q (merchant_id, mode, type, financial_year, last_number)
       select {tenant_values}, type, fy, count(*) from x group by type, fy order by type, fy
       on conflict (merchant_id, mode, type, financial_year) do update set last_number = q.last_number + excluded.last_number
       returning type, financial_year, last_number
     ),
     n as (
       select x.id, x.prefix, x.year,
         (s.last_number - count(*) over g + row_number() over (g order by x.ord))::bigint as n
       from x join s on s.type = x.type and s.financial_year = x.fy
       window g as (partition by x.type, x.fy)
     ),
     f as (select id, prefix, year, case when n < 1000000 then lpad(n::text, 6, '0') else n::text end as seq from n),
     u as (
       update invoices i set number = case
           when length(f.prefix || f.year || f.seq) + 2 <= ${MAX_NUMBER_LENGTH} then f.prefix || '-' || f.year || '-' || f.seq
           when length(f.prefix || f.year || f.seq) + 1 <= ${MAX_NUMBER_LENGTH} then f.prefix || f.year || '-' || f.seq
           else f.prefix || f.year || f.seq end
       from f where i.id = f.id and {tenant:i}
       returning i.id, i.number
     ),
     e as (
       insert into outbox_events (id, created_at, merchant_id, mode, type, payload)
       select v.id, v.created_at, {tenant_values}, v.type, jsonb_set(v.payload, '{data,object,number}', to_jsonb(u.number))
       from jsonb_to_recordset(?::jsonb) as v(id uuid, created_at timestamptz, invoice_id uuid, type text, payload jsonb)
       join u on u.id = v.invoice_id
     )
     select id, number from u`,
    [
      JSON.stringify(invoices.map((i, ord) => ({ ord, id: i.id, type: i.type, fy: i.financialYear, prefix: i.prefix, year: i.year }))),
      JSON.stringify(events.map((e) => ({ id: e.id, created_at: e.createdAt.toISOString(), invoice_id: e.invoiceId, type: e.type, payload: e.payload }))),
    ],
  );
  return new Map(rows.map((r) => [r.id, r.number]));
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

import type { EntityManager } from '@mikro-orm/postgresql';
import { type TenantParams, uuidv7Floor } from '../../core/entity';
import {
  aliasedColumns,
  aliasedPart,
  CommitStatement,
  Db,
  systemQuery,
  tenantCommitStatement,
  tenantQuery,
  tenantQueryAs,
} from '../../core/sql';
import { Customer, customerSql } from '../customers';
import { Merchant, merchantSql } from '../merchants';
import { testClockSql } from '../test-clock';
import type { InvoiceType } from './invoice.entities';

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
 * The statement that numbers the tenant's invoices `invoices` (issued in this order in the caller's transaction, with
 * a null number) and writes their outbox events carrying the numbers: the transaction's last, sent with its COMMIT
 * (src/core/sql.ts sendWithCommit), so the sequence rows it bumps are locked only while the server runs it and
 * commits. Each sequence row (merchant, mode, type, financial year) is bumped once by its count, in (type, year)
 * order (so two transactions never wait on each other's rows crosswise); a rollback gives the numbers back (no gaps).
 * The work is the function invoices_number (migration Migration20261124200400_renewal_indexes: a statement sent with
 * a COMMIT cannot be a prepared one, and PL/pgSQL keeps the function's plan); its format is formatInvoiceNumber's
 * (invoice.numbering.ts). `numbered` gets id -> number (an invoice the transaction no longer holds gets none).
 */
export function numberInvoicesStatement(
  tenant: TenantParams,
  invoices: InvoiceToNumber[],
  events: InvoiceEventToWrite[],
  numbered: (numbers: Map<string, string>) => void,
): CommitStatement {
  return tenantCommitStatement(
    tenant,
    'select invoice_id as id, invoice_number as number from invoices_number({tenant_values}, ?::jsonb, ?::jsonb)',
    [
      JSON.stringify(
        invoices.map((i, ord) => ({
          ord,
          id: i.id,
          type: i.type,
          fy: i.financialYear,
          prefix: i.prefix,
          year: i.year,
        })),
      ),
      JSON.stringify(
        events.map((e) => ({
          id: e.id,
          created_at: e.createdAt.toISOString(),
          invoice_id: e.invoiceId,
          type: e.type,
          payload: e.payload,
        })),
      ),
    ],
    (rows) => numbered(new Map(rows.map((r) => [r.id as string, r.number as string]))),
  );
}

/**
 * Merchant time (docs/sandbox.md): the wall clock, plus the merchant's test-clock offset in test mode. Read in the
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
export async function invoiceParties(
  em: EntityManager,
  tenant: TenantParams,
  customerId: string,
): Promise<{ merchant: Merchant; customer: Customer | null }> {
  const [row] = await tenantQuery(
    em,
    `select ${aliasedColumns(em, Merchant, 'm')}, ${aliasedColumns(em, Customer, 'c')}
     from ${merchantSql.from('m')} ${customerSql.leftJoin('c', '?')}
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

/**
 * A document's stored PDF (table invoice_documents), if it was rendered in the printed state `printedState`
 * (invoice.documents.ts): a document is rendered once per state and its bytes are kept, never rendered again.
 */
export async function storedPdf(em: EntityManager, invoiceId: string, printedState: string): Promise<Buffer | null> {
  const rows = await tenantQuery<{ pdf: Buffer }>(
    em,
    'select pdf from invoice_documents where {tenant} and invoice_id = ? and printed_state = ?',
    [invoiceId, printedState],
  );
  return rows[0]?.pdf ?? null;
}

/** Keeps a rendered PDF; a later state's rendering replaces the earlier one (the figures it prints moved). */
export async function storePdf(
  em: EntityManager,
  tenant: TenantParams,
  invoiceId: string,
  printedState: string,
  pdf: Buffer,
): Promise<void> {
  await tenantQueryAs(
    em,
    tenant,
    `insert into invoice_documents (invoice_id, merchant_id, mode, printed_state, pdf, rendered_at)
     values (?, {tenant_values}, ?, ?, now())
     on conflict (invoice_id) do update set printed_state = excluded.printed_state, pdf = excluded.pdf, rendered_at = now()`,
    [invoiceId, printedState, pdf],
  );
}

/**
 * SQL pieces for statements of other modules that add up what customers paid on invoices together with their own
 * rows (a page of customers' lifetime revenue, an experiment's revenue per visitor) in one statement. Each names the
 * invoices' tenant with `{tenant:...}` (the enclosing tenant statement fills it in); only documents of type `invoice`
 * count (credit notes are records of refunds or credit, never money paid).
 */
export const invoiceSql = {
  /**
   * A `select` of the debits (invoices) whose authentication the gateway first asked for in (from, to]
   * (`authentication_required`) and of those paid since (`authentication_completed`), docs/india.md. Placeholders:
   * from, to (and the currency, when `oneCurrency`).
   */
  authenticationCounts: (oneCurrency: boolean): string =>
    `select count(*) as authentication_required, count(*) filter (where i.status = 'paid') as authentication_completed
       from invoices i
      where {tenant:i} and i.authentication_required_at > ? and i.authentication_required_at <= ?${oneCurrency ? ' and i.currency = ?' : ''}`,
  /**
   * A `select` of `(customer_id, currency, amount)`: one row per invoice of the customers that took money
   * (`amount_paid`, any status). Placeholder: the customers' ids as a uuid[] literal.
   */
  paidByCustomers: `select i.customer_id, i.currency, i.amount_paid as amount from invoices i
        where {tenant:i} and i.customer_id = any(?::uuid[]) and i.type = 'invoice' and i.amount_paid <> 0`,
  /** `exists (...)`: whether an invoice of the customer `customerIdSql` names the payment `paymentIdSql`. */
  namesPayment: (customerIdSql: string, paymentIdSql: string): string =>
    `exists (select 1 from invoices pi where {tenant:pi} and pi.customer_id = ${customerIdSql}
                                  and pi.payment_id = ${paymentIdSql} and pi.type = 'invoice')`,
  /**
   * What subscription invoices of the customer `customerIdSql` issued at or after `sinceSql` that no payment names
   * collected (`amount_paid`, 0 when none), in one currency (placeholder: the currency).
   */
  subscriptionPaidSince: (customerIdSql: string, sinceSql: string): string =>
    `coalesce((select sum(i.amount_paid) from invoices i where {tenant:i} and i.customer_id = ${customerIdSql}
                     and i.type = 'invoice' and i.subscription_id is not null and i.payment_id is null
                     and i.created_at >= ${sinceSql} and i.currency = ?), 0)`,
};

/**
 * Renewal invoices (billing reason subscription_cycle) made since `since`, by mode and status, across tenants, for GET
 * /metrics. Ids are time-ordered UUIDv7s: the primary key's range from `since` is all that is read.
 */
export function recentRenewalInvoices(db: Db, since: Date): Promise<{ mode: string; status: string; n: number }[]> {
  return systemQuery(
    db,
    `select mode, status, count(*)::int as n from invoices
     where id >= ?::uuid and billing_reason = 'subscription_cycle' group by mode, status`,
    [uuidv7Floor(since)],
  );
}

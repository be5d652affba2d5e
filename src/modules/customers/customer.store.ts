import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { tenantQuery } from '../../core/sql';
import { COLLECTED_STATUSES } from '../payments/payment.entities';

/** Statements on customers beyond the ORM's (the module's services use the ORM for the rest). */

/** A customer's details as a request gives them (payments, subscriptions); the e-mail is the tenant's key. */
export interface CustomerDetails {
  email: string;
  name?: string | null;
  phone?: string | null;
  stateCode?: string | null;
  gstin?: string | null;
}

/**
 * A CTE `c(id, name, phone)` that finds the tenant's customer with this e-mail (already normalised) or creates it,
 * for a statement of another store that writes a record of that customer in the same breath (atomic without a
 * transaction of its own; concurrent requests for one e-mail meet on the unique key). The record gains the details
 * it lacked and never loses what the merchant already gave; `updated_at` moves only when something was filled in.
 * Its tenant is `{tenant_values}`: the enclosing tenant statement fills it in.
 */
export function customerUpsertCte(d: CustomerDetails): { sql: string; params: unknown[] } {
  return {
    sql: `c as (
       insert into customers as x (id, created_at, updated_at, merchant_id, mode, email, name, phone, state_code, gstin)
       values (?, now(), now(), {tenant_values}, ?, ?, ?, ?, ?)
       on conflict (merchant_id, mode, email) do update set
         name = coalesce(x.name, excluded.name), phone = coalesce(x.phone, excluded.phone),
         state_code = coalesce(x.state_code, excluded.state_code), gstin = coalesce(x.gstin, excluded.gstin),
         updated_at = case when (x.name is null and excluded.name is not null) or (x.phone is null and excluded.phone is not null)
           or (x.state_code is null and excluded.state_code is not null) or (x.gstin is null and excluded.gstin is not null)
           then now() else x.updated_at end
       returning id, name, phone
     )`,
    params: [uuidv7(), d.email, d.name ?? null, d.phone ?? null, d.stateCode ?? null, d.gstin ?? null],
  };
}

/**
 * Lifetime revenue per customer and currency (contract 6 and 15 "Customer lifetime revenue": what the customer paid,
 * one-off payments and every paid invoice, subscriptions included, less what was refunded), for a page of customers in
 * one statement. A read of the payments' and invoices' tables on purpose (like the experiment results' revenue): the
 * rule spans both, and a page must not cost a statement per customer. Money as it moved, GST included:
 * - invoices (`type` invoice, any status): `amount_paid`, what the customer paid on each (subscription periods, plan
 *   changes, usage, one-off payments). Credit applied from earlier credit notes is not in it (the gateway charge's
 *   part that credit paid is refunded on the charge), so plan-change credit notes are not subtracted again;
 * - one-off payments no invoice names (`invoices.payment_id`; a payment that succeeded before invoices were issued for
 *   them): `amount_total`, what the checkout charged, when collected (succeeded, partially refunded or refunded). A
 *   payment with an invoice counts once, through that invoice;
 * - less refunds: every collected payment's `gateway_amount_refunded` (the money returned, its share of GST included,
 *   for refunds succeeded or in progress: what `amount_refunded` counts), whether or not an invoice names the payment.
 *   A refund's credit note is a record of that refund, not another one: it is not subtracted again.
 * No currency is converted: one row per currency the customer paid in (an amount may net to 0).
 */
export async function lifetimeRevenueByCustomer(em: EntityManager, customerIds: readonly string[]): Promise<{ customerId: string; currency: string; amount: number }[]> {
  if (!customerIds.length) return [];
  const ids = `{${customerIds.join(',')}}`;
  const rows = await tenantQuery<{ customer_id: string; currency: string; amount: string }>(
    em,
    `select customer_id, currency, sum(amount)::bigint as amount from (
       select i.customer_id, i.currency, i.amount_paid as amount from invoices i
        where {tenant:i} and i.customer_id = any(?::uuid[]) and i.type = 'invoice' and i.amount_paid <> 0
       union all
       select p.customer_id, p.currency,
              case when exists (select 1 from invoices pi where {tenant:pi} and pi.customer_id = p.customer_id
                                  and pi.payment_id = p.id and pi.type = 'invoice') then 0 else p.amount_total end
              - p.gateway_amount_refunded as amount
         from payments p
        where {tenant:p} and p.customer_id = any(?::uuid[]) and p.status = any(?::text[])
     ) r
     group by customer_id, currency order by currency`,
    // Array literals rather than arrays: the statement may run on a transaction's connection too.
    [ids, ids, `{${COLLECTED_STATUSES.join(',')}}`],
  );
  return rows.map((r) => ({ customerId: r.customer_id, currency: r.currency, amount: Number(r.amount) }));
}

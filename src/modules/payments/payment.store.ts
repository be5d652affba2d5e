import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Mode, TenantParams } from '../../core/entity';
import { Db, systemQuery, tenantQuery, tenantQueryAs, tenantRows } from '../../core/sql';
import { CustomerDetails, customerByIdCte, customerUpsertCte } from '../customers';
import { invoiceSql } from '../invoices';
import type { SnapshotTaxParties } from '../invoices';
import type { TaxBehavior } from '../catalog';
import { COLLECTED_STATUSES, Payment, Refund } from './payment.entities';

/**
 * Every statement on payments, refunds and gateway_events beyond the ORM's. Other modules read payments through
 * these functions, never the tables (one exception, customers' lifetime revenue: docs/architecture.md).
 */

export interface NewPayment {
  id: string;
  amount: number;
  taxAmount: number;
  amountTotal: number;
  taxParties: SnapshotTaxParties;
  taxBehavior: TaxBehavior;
  currency: string;
  /** The customer the request named by id (its e-mail in `customer`), else null: found or created by e-mail. */
  customerId: string | null;
  customer: CustomerDetails;
  referenceId: string | null;
  metadata: Record<string, string>;
  provider: string;
  connectionId: string;
  providerPaymentId: string | null;
  checkoutSessionId: string;
  checkoutUrl: string;
  successUrl: string;
  cancelUrl: string;
}

/**
 * Writes the payment with its customer, the one named by id or found or created by e-mail, in one statement (a
 * prepared one: every payment runs it; the customer gains the details it lacked); the payment takes the request's
 * name and phone, else the customer's.
 */
export async function insertPayment(em: EntityManager, p: NewPayment): Promise<Payment> {
  const c = p.customer;
  const customer = p.customerId ? customerByIdCte(p.customerId, c) : customerUpsertCte(c);
  const rows = await tenantQuery(
    em,
    `with ${customer.sql}
     insert into payments (id, created_at, updated_at, merchant_id, mode, amount, tax_amount, amount_total, tax_parties,
       tax_behavior, amount_refunded, gateway_amount_refunded, currency, status,
       customer_id, customer_email, customer_name, customer_phone, reference_id, metadata, provider, connection_id,
       provider_payment_id, checkout_session_id, checkout_url, success_url, cancel_url)
     select ?, now(), now(), {tenant_values}, ?, ?, ?, ?::jsonb, ?, 0, 0, ?, 'pending', c.id, ?, coalesce(?, c.name), coalesce(?, c.phone), ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?
     from c
     returning *`,
    [
      ...customer.params,
      p.id,
      p.amount,
      p.taxAmount,
      p.amountTotal,
      JSON.stringify(p.taxParties),
      p.taxBehavior,
      p.currency,
      c.email,
      c.name ?? null,
      c.phone ?? null,
      p.referenceId,
      JSON.stringify(p.metadata),
      p.provider,
      p.connectionId,
      p.providerPaymentId,
      p.checkoutSessionId,
      p.checkoutUrl,
      p.successUrl,
      p.cancelUrl,
    ],
  );
  return em.map(Payment, rows[0] as never);
}

/** Refunds of the tenant's payments `ids`, oldest first (the refunds loader: one prepared statement per page). */
export function refundsOfPayments(em: EntityManager, ids: readonly string[]): Promise<Refund[]> {
  return tenantRows(em, Refund, 'payment_id = any(?::uuid[])', [[...ids]], { orderBy: 'id' });
}

/** A verified gateway event of a connection, as recorded (once per provider and event id). */
export interface GatewayEventRow {
  provider: string;
  eventId: string;
  type: string;
  connectionId: string;
  payload: unknown;
}

/** Records a verified gateway event of a connection once; false when (provider, event id) was recorded before. */
export async function recordGatewayEvent(
  em: EntityManager,
  tenant: TenantParams,
  e: GatewayEventRow,
): Promise<boolean> {
  const cte = gatewayEventCte(e);
  const inserted = await tenantQueryAs(em, tenant, `with ${cte.sql} select id from ge`, cte.params);
  return inserted.length > 0;
}

/**
 * The record of a gateway event as the CTE `ge` of a tenant statement: one row (`id`) when the event is new, none when
 * (provider, event id) was recorded before. For a statement that records the event with the work it leads to (the
 * subscriptions module locks the event's subscription in the same round trip).
 */
export function gatewayEventCte(e: GatewayEventRow): { sql: string; params: unknown[] } {
  return {
    sql: `ge as (
       insert into gateway_events (id, created_at, merchant_id, mode, provider, event_id, type, connection_id, payload)
       values (?, now(), {tenant_values}, ?, ?, ?, ?, ?) on conflict (provider, event_id) do nothing returning id
     )`,
    params: [uuidv7(), e.provider, e.eventId, e.type, e.connectionId, JSON.stringify(e.payload ?? null)],
  };
}

/**
 * Refunds of the gateway payment still waiting for the gateway's refund id (their create call has not returned) whose
 * events cannot name them (asked for before refunds carried their id): an event naming no refund may be one of theirs.
 */
export async function refundsAwaitingGatewayId(
  em: EntityManager,
  tenant: TenantParams,
  providerPaymentId: string,
  providerRefundId: string | null = null,
): Promise<{ awaiting: number; known: boolean }> {
  // One statement, so one snapshot: a refund whose gateway id commits meanwhile is either known or still awaiting.
  const [row] = await tenantQueryAs<{ n: string; known: boolean }>(
    em,
    tenant,
    `select count(*) filter (where r.status = 'pending' and r.provider_refund_id is null and not r.named_at_gateway) as n,
            coalesce(bool_or(r.provider_refund_id = ?), false) as known
     from refunds r join payments p on p.id = r.payment_id
     where {tenant:p} and p.provider_payment_id = ?`,
    [providerRefundId, providerPaymentId],
  );
  return { awaiting: Number(row?.n ?? 0), known: Boolean(row?.known) };
}

/** Payments of every tenant updated since `since`, newest `limit` (the live-update catch-up after a reconnection). */
export function paymentsChangedSince(
  db: Db,
  since: Date,
  limit: number,
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(
    db,
    'select id, merchant_id, mode from payments where updated_at >= ? order by updated_at desc limit ?',
    [since, limit],
  );
}

/**
 * Pending one-off payments of every tenant whose checkout opened more than `graceMs` ago and that reconciliation has
 * not read back within `graceMs`, oldest first; each is marked read now (so a pass takes it at most once a grace).
 */
export function claimPendingCheckouts(
  db: Db,
  graceMs: number,
  limit: number,
): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(
    db,
    `with due as (
       select p.id from payments p
       where p.status = 'pending' and p.checkout_session_id is not null and p.created_at < now() - ? * interval '1 millisecond'
         and (p.reconciled_at is null or p.reconciled_at < now() - ? * interval '1 millisecond')
       order by p.created_at limit ? for update skip locked
     )
     update payments p set reconciled_at = now() from due where p.id = due.id
     returning p.id, p.merchant_id, p.mode`,
    [graceMs, graceMs, limit],
  );
}

/**
 * Lifetime revenue per customer and currency (docs/payments.md: what the customer paid, one-off payments and every
 * paid invoice, subscriptions included, less what was refunded), for a page of customers in one statement. The
 * invoices' side comes from the invoices module's SQL pieces (invoice.store.ts invoiceSql), composed into this
 * statement: the rule spans both, and a page must not cost a statement per customer. Money as it moved, GST included:
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
export async function lifetimeRevenueByCustomer(
  em: EntityManager,
  customerIds: readonly string[],
): Promise<{ customerId: string; currency: string; amount: number }[]> {
  if (!customerIds.length) return [];
  const ids = `{${customerIds.join(',')}}`;
  const rows = await tenantQuery<{ customer_id: string; currency: string; amount: string }>(
    em,
    `select customer_id, currency, sum(amount)::bigint as amount from (
       ${invoiceSql.paidByCustomers}
       union all
       select p.customer_id, p.currency,
              case when ${invoiceSql.namesPayment('p.customer_id', 'p.id')} then 0 else p.amount_total end
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

/** History retention's batch of old gateway events (webhooks retention.ts runs it): ids below $1, at most $2 rows. */
export const PRUNE_GATEWAY_EVENTS = `delete from gateway_events where id in (
       select id from gateway_events where id < $1 limit $2 for update skip locked)`;

/**
 * SQL pieces for statements of other modules that read a customer's payments together with their own rows (an
 * experiment's conversions and revenue per visitor, in one statement). Each names the payments' tenant with
 * `{tenant:p}` (the enclosing tenant statement fills it in) and counts payments created at or after `sinceSql`.
 */
export const paymentSql = {
  /**
   * `exists (...)`: whether a one-off payment of the customer `customerIdSql` was collected. Placeholder: the
   * collected statuses as a text[] literal (COLLECTED_STATUSES).
   */
  paidOneOffSince: (customerIdSql: string, sinceSql: string): string =>
    `exists (select 1 from payments p where {tenant:p} and p.customer_id = ${customerIdSql}
                   and p.billing_reason = 'one_time'
                   and p.created_at >= ${sinceSql} and p.status = any(?::text[]))`,
  /**
   * What the customer's payments collected (`amount_total`, tax included) less what was returned, 0 when none, in one
   * currency. Placeholders: the collected statuses as a text[] literal (COLLECTED_STATUSES), then the currency.
   */
  collectedSince: (customerIdSql: string, sinceSql: string): string =>
    `coalesce((select sum(p.amount_total - p.amount_refunded) from payments p
                     where {tenant:p} and p.customer_id = ${customerIdSql}
                     and p.created_at >= ${sinceSql} and p.status = any(?::text[]) and p.currency = ?), 0)`,
};

import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Mode, TenantParams } from '../../core/entity';
import { Db, systemQuery, tenantQuery, tenantQueryAs, tenantRows } from '../../core/sql';
import { CustomerDetails, customerUpsertCte } from '../customers/customer.store';
import type { SnapshotTaxParties } from '../invoices/invoice.service';
import { Payment, Refund } from './payment.entities';

/**
 * Every statement on payments, refunds and gateway_events beyond the ORM's. Other modules read payments through
 * these functions, never the tables (one exception, customers' lifetime revenue: README, "Architecture").
 */

export interface NewPayment {
  id: string;
  amount: number;
  taxAmount: number;
  amountTotal: number;
  taxParties: SnapshotTaxParties;
  currency: string;
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
 * Writes the payment with its customer, found or created by e-mail, in one statement (a prepared one: every payment
 * runs it); the payment takes the request's name and phone, else the customer's.
 */
export async function insertPayment(em: EntityManager, p: NewPayment): Promise<Payment> {
  const c = p.customer;
  const customer = customerUpsertCte(c);
  const rows = await tenantQuery(
    em,
    `with ${customer.sql}
     insert into payments (id, created_at, updated_at, merchant_id, mode, amount, tax_amount, amount_total, tax_parties,
       amount_refunded, gateway_amount_refunded, currency, status,
       customer_id, customer_email, customer_name, customer_phone, reference_id, metadata, provider, connection_id,
       provider_payment_id, checkout_session_id, checkout_url, success_url, cancel_url)
     select ?, now(), now(), {tenant_values}, ?, ?, ?, ?::jsonb, 0, 0, ?, 'pending', c.id, ?, coalesce(?, c.name), coalesce(?, c.phone), ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?
     from c
     returning *`,
    [
      ...customer.params,
      p.id, p.amount, p.taxAmount, p.amountTotal, JSON.stringify(p.taxParties), p.currency, c.email, c.name ?? null, c.phone ?? null, p.referenceId,
      JSON.stringify(p.metadata), p.provider, p.connectionId, p.providerPaymentId, p.checkoutSessionId,
      p.checkoutUrl, p.successUrl, p.cancelUrl,
    ],
  );
  return em.map(Payment, rows[0] as never);
}

/** Refunds of the tenant's payments `ids`, oldest first (the refunds loader: one prepared statement per page). */
export function refundsOfPayments(em: EntityManager, ids: readonly string[]): Promise<Refund[]> {
  return tenantRows(em, Refund, 'payment_id = any(?::uuid[])', [[...ids]], { orderBy: 'id' });
}

/** A verified gateway event of a connection, as recorded (once per provider and event id). */
export interface GatewayEventRecord {
  provider: string;
  eventId: string;
  type: string;
  connectionId: string;
  payload: unknown;
}

/** Records a verified gateway event of a connection once; false when (provider, event id) was recorded before. */
export async function recordGatewayEvent(em: EntityManager, tenant: TenantParams, e: GatewayEventRecord): Promise<boolean> {
  const cte = gatewayEventCte(e);
  const inserted = await tenantQueryAs(em, tenant, `with ${cte.sql} select id from ge`, cte.params);
  return inserted.length > 0;
}

/**
 * The record of a gateway event as the CTE `ge` of a tenant statement: one row (`id`) when the event is new, none when
 * (provider, event id) was recorded before. For a statement that records the event with the work it leads to (the
 * subscriptions module locks the event's subscription in the same round trip).
 */
export function gatewayEventCte(e: GatewayEventRecord): { sql: string; params: unknown[] } {
  return {
    sql: `ge as (
       insert into gateway_events (id, created_at, merchant_id, mode, provider, event_id, type, connection_id, payload)
       values (?, now(), {tenant_values}, ?, ?, ?, ?, ?) on conflict (provider, event_id) do nothing returning id
     )`,
    params: [uuidv7(), e.provider, e.eventId, e.type, e.connectionId, JSON.stringify(e.payload ?? null)],
  };
}

/** Refunds of the gateway payment still waiting for the gateway's refund id (their create call has not returned). */
export async function refundsAwaitingGatewayId(em: EntityManager, tenant: TenantParams, providerPaymentId: string): Promise<number> {
  const [row] = await tenantQueryAs<{ n: string }>(
    em,
    tenant,
    `select count(*) as n from refunds r join payments p on p.id = r.payment_id
     where {tenant:p} and p.provider_payment_id = ? and r.status = 'pending' and r.provider_refund_id is null`,
    [providerPaymentId],
  );
  return Number(row?.n ?? 0);
}

/** Payments of every tenant updated since `since`, newest `limit` (the live-update catch-up after a reconnection). */
export function paymentsChangedSince(db: Db, since: Date, limit: number): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
  return systemQuery(db, 'select id, merchant_id, mode from payments where updated_at >= ? order by updated_at desc limit ?', [since, limit]);
}

/**
 * Pending one-off payments of every tenant whose checkout opened more than `graceMs` ago and that reconciliation has
 * not read back within `graceMs`, oldest first; each is marked read now (so a pass takes it at most once a grace).
 */
export function claimPendingCheckouts(db: Db, graceMs: number, limit: number): Promise<{ id: string; merchant_id: string; mode: Mode }[]> {
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

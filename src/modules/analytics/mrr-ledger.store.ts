import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { TenantParams } from '../../core/entity';
import { systemQuery, tenantQueryAs } from '../../core/sql';
import { merchantSql } from '../merchants';
import { testClockSql } from '../test-clock';
import type { LedgerFacts, Movement } from './mrr-ledger';

/**
 * Every statement that writes mrr_movements (the ledger's writer: mrr-ledger.ts). The analytics reads are in
 * analytics.store.ts. The tenant is the subscription's own (the change may run outside a request: gateway events,
 * the scheduler), so these statements take it from the row being changed.
 */

/** Advisory lock class of a customer's MRR ledger (per customer, for the writer's transaction). */
const CUSTOMER_LEDGER_LOCK = 727_120;

export interface LedgerSubject extends TenantParams {
  subscriptionId: string;
  customerId: string;
  currency: string;
}

/** Serialises ledger writes of one customer until the transaction ends (two subscriptions activating at once). */
export async function lockCustomerLedger(em: EntityManager, customerId: string): Promise<void> {
  await systemQuery(em, 'select pg_advisory_xact_lock(?, hashtext(?))', [CUSTOMER_LEDGER_LOCK, customerId]);
}

/** The ledger's facts, and the customer's cohort instant the movement carries. */
export interface CustomerLedger extends LedgerFacts {
  /**
   * When the customer first became paying in the currency (its earliest customer_delta +1 movement), as PostgreSQL
   * writes the timestamptz (microseconds kept: a JS Date would lose them); null when it never was.
   */
  customerFirstAt: string | null;
}

/**
 * What the ledger says of the subscription and of its customer's other subscriptions in its currency (one indexed
 * read over the customer's rows), for the movement's decision. Run after lockCustomerLedger, in its own statement.
 */
export async function customerLedgerFacts(em: EntityManager, s: LedgerSubject): Promise<CustomerLedger> {
  const [row] = await tenantQueryAs<{
    sub_counted: string | number;
    sub_mrr: string | number;
    sub_ever: boolean;
    others: string | number;
    customer_ever: boolean;
    customer_first_at: string | null;
  }>(
    em,
    s,
    `select coalesce(sum(subscription_delta) filter (where subscription_id = ?), 0) as sub_counted,
       coalesce(sum(amount) filter (where subscription_id = ?), 0) as sub_mrr,
       coalesce(bool_or(subscription_delta > 0) filter (where subscription_id = ?), false) as sub_ever,
       coalesce(sum(subscription_delta) filter (where subscription_id <> ?), 0) as others,
       coalesce(bool_or(subscription_delta > 0), false) as customer_ever,
       (min(occurred_at) filter (where customer_delta > 0))::text as customer_first_at
     from mrr_movements where {tenant} and customer_id = ? and currency = ?`,
    [s.subscriptionId, s.subscriptionId, s.subscriptionId, s.subscriptionId, s.customerId, s.currency],
  );
  const counted = Number(row?.sub_counted ?? 0) > 0;
  return {
    subscription: { counted, mrr: counted ? Number(row?.sub_mrr ?? 0) : 0 },
    subscriptionEverCounted: !!row?.sub_ever,
    otherCounted: Number(row?.others ?? 0),
    customerEverCounted: !!row?.customer_ever,
    customerFirstAt: row?.customer_first_at ?? null,
  };
}

/**
 * Inserts one movement: the reporting currency is the merchant's (fx_rate 1 when it is the movement's currency,
 * else null: analytics never convert, docs/analytics.md), and it occurs at merchant time (the wall clock at the
 * statement, plus the test clock's offset in test mode), after the locks were taken, so a subscription's movements are
 * in order. It carries the customer's cohort instant (`customerFirstAt`), or its own instant when the customer was
 * never paying in the currency before (then this is its first +1 movement).
 */
export async function insertMovement(
  em: EntityManager,
  s: LedgerSubject & { cause: string; customerFirstAt: string | null },
  m: Movement,
): Promise<void> {
  await tenantQueryAs(
    em,
    s,
    `insert into mrr_movements (id, created_at, merchant_id, mode, subscription_id, customer_id, currency, kind, amount, mrr_before,
       mrr_after, subscription_delta, customer_delta, reporting_currency, fx_rate, cause, occurred_at, customer_first_at)
     select ?, now(), {tenant_values}, ?, ?, ?, ?, ?, ?, ?, ?, ?, m.reporting_currency,
       case when m.reporting_currency = ? then 1 end, ?, t.at, coalesce(?::timestamptz, t.at)
     from ${merchantSql.from('m')}
     cross join lateral (select clock_timestamp() + ${testClockSql.offsetMs('m.id', '?::text')} * interval '1 millisecond' as at) t
     where m.id = ?`,
    [
      uuidv7(),
      s.subscriptionId,
      s.customerId,
      s.currency,
      m.kind,
      m.amount,
      m.mrrBefore,
      m.mrrAfter,
      m.subscriptionDelta,
      m.customerDelta,
      s.currency,
      s.cause,
      s.customerFirstAt,
      s.mode,
      s.merchantId,
    ],
  );
}

import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import { tenantQuery } from '../../core/sql';
import type { MandateMethodName } from '../../gateways/banks';
import { type ReportDb, reportQuery } from './analytics.store';

/** Every SQL statement on `mandate_attempts` (migration Migration20261124200200_mandate_attempts). */

export interface MandateAttemptRow {
  subscriptionId: string;
  customerId: string;
  provider: string;
  method: MandateMethodName;
  bank: string | null;
  status: 'authorized' | 'failed';
  failureReason: string | null;
  gatewayEventId: string;
  /** Merchant time (the test clock in test mode). */
  occurredAt: Date;
}

/**
 * Records a subscription's checkout outcome in the caller's transaction (the gateway event's): one row per
 * subscription. A decline replaces an earlier decline (its reason, method, bank and time), a success replaces a
 * decline, and a success is final: a later event about the same checkout (Razorpay's authenticated, then charged), or
 * the same event again, changes nothing.
 */
export async function insertMandateAttempt(em: EntityManager, a: MandateAttemptRow): Promise<void> {
  await tenantQuery(
    em,
    `insert into mandate_attempts (id, merchant_id, mode, subscription_id, customer_id, provider, method, bank, status, failure_reason, gateway_event_id, occurred_at)
     values (?, {tenant_values}, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (subscription_id) do update set method = excluded.method, bank = excluded.bank, status = excluded.status,
       failure_reason = excluded.failure_reason, gateway_event_id = excluded.gateway_event_id, occurred_at = excluded.occurred_at
     where mandate_attempts.status = 'failed' and mandate_attempts.gateway_event_id <> excluded.gateway_event_id`,
    [
      uuidv7(),
      a.subscriptionId,
      a.customerId,
      a.provider,
      a.method,
      a.bank,
      a.status,
      a.failureReason,
      a.gatewayEventId,
      a.occurredAt,
    ],
  );
}

/** One group of the window's attempts: all of them (`total`), one method, one bank (null: none named), one failure reason. */
export interface AttemptGroup {
  dimension: 'total' | 'method' | 'bank' | 'reason';
  key: string | null;
  attempts: number;
  authorized: number;
}

const ATTEMPT_GROUPS = (
  where: string,
) => `select grouping(a.method, a.bank, a.failure_reason)::int as g, a.method, a.bank, a.failure_reason,
            count(*)::int as attempts, (count(*) filter (where a.status = 'authorized'))::int as authorized
       from mandate_attempts a
      where {tenant:a} and a.occurred_at > ? and a.occurred_at <= ?${where}
      group by grouping sets ((), (a.method), (a.bank), (a.failure_reason))`;
const ALL_CURRENCIES = ATTEMPT_GROUPS('');

/**
 * `exists (...)`: whether the subscription `subscriptionIdSql` is billed in a currency (placeholder: the currency).
 * The subscriptions module's SQL piece (subscription.store.ts subscriptionSql.inCurrency), given by the composition
 * root: analytics may not import subscriptions, which imports analytics.
 */
export type SubscriptionInCurrencySql = (subscriptionIdSql: string) => string;

/**
 * The mandate debits' SQL pieces, given by the composition root: the subscriptions module's pre-debit notices by kind
 * (subscription.store.ts preDebitCounts) and the invoices module's debits asked to be authenticated (invoice.store.ts
 * authenticationCounts). Each a one-row `select`; placeholders: from, to and, in one currency, the currency.
 */
export interface PreDebitCountsSql {
  notices: (oneCurrency: boolean) => string;
  authentications: (oneCurrency: boolean) => string;
}

export interface PreDebitCounts {
  renewals: number;
  retries: number;
  collections: number;
  declined: number;
  authenticationRequired: number;
  authenticationCompleted: number;
}

/** Pre-debit notices sent in (from, to], by kind, and the debits asked to be authenticated; in one currency when given. */
export async function preDebitCounts(
  db: ReportDb,
  sql: PreDebitCountsSql,
  from: Date,
  to: Date,
  currency: string | null,
): Promise<PreDebitCounts> {
  const window = currency === null ? [from, to] : [from, to, currency];
  const one = currency !== null;
  const [row] = await reportQuery<Record<string, string>>(
    db,
    `select * from (${sql.notices(one)}) n, (${sql.authentications(one)}) a`,
    [...window, ...window],
  );
  return {
    renewals: Number(row?.renewals ?? 0),
    retries: Number(row?.retries ?? 0),
    collections: Number(row?.collections ?? 0),
    declined: Number(row?.declined ?? 0),
    authenticationRequired: Number(row?.authentication_required ?? 0),
    authenticationCompleted: Number(row?.authentication_completed ?? 0),
  };
}

/** An attempt's currency is its subscription's (read only, one primary-key probe per attempt): the text per piece. */
const oneCurrencyTexts = new WeakMap<SubscriptionInCurrencySql, string>();
function oneCurrencyGroups(inCurrency: SubscriptionInCurrencySql): string {
  let sql = oneCurrencyTexts.get(inCurrency);
  if (sql === undefined)
    oneCurrencyTexts.set(inCurrency, (sql = ATTEMPT_GROUPS(` and ${inCurrency('a.subscription_id')}`)));
  return sql;
}

/**
 * The attempts in (from, to] (windows as in every analytics answer) counted four ways in one statement (grouping sets over the window's index range): in
 * total, by method, by bank and by failure reason (failed attempts only). With `only`, only the attempts of
 * subscriptions billed in its currency.
 */
export async function attemptGroups(
  db: ReportDb,
  from: Date,
  to: Date,
  only: { currency: string; inCurrency: SubscriptionInCurrencySql } | null = null,
): Promise<AttemptGroup[]> {
  const rows = await reportQuery<{
    g: number;
    method: string | null;
    bank: string | null;
    failure_reason: string | null;
    attempts: number;
    authorized: number;
  }>(
    db,
    only === null ? ALL_CURRENCIES : oneCurrencyGroups(only.inCurrency),
    only === null ? [from, to] : [from, to, only.currency],
  );
  // grouping(): a bit per column left out of the set (method 4, bank 2, failure_reason 1).
  const out: AttemptGroup[] = [];
  for (const r of rows) {
    const base = { attempts: Number(r.attempts), authorized: Number(r.authorized) };
    if (r.g === 7) out.push({ dimension: 'total', key: null, ...base });
    else if (r.g === 3) out.push({ dimension: 'method', key: r.method, ...base });
    else if (r.g === 5) out.push({ dimension: 'bank', key: r.bank, ...base });
    else if (r.g === 6 && r.failure_reason !== null) out.push({ dimension: 'reason', key: r.failure_reason, ...base });
  }
  return out;
}

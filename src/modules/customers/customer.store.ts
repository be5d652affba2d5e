import { v7 as uuidv7 } from 'uuid';

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
 * As customerUpsertCte, for a customer the request names by id (`customer_id`, already found to be the tenant's): the
 * CTE `c(id, name, phone)` over it, the record gaining the details it lacked (never losing what it has; `updated_at`
 * moves only when something was filled in). No details: a plain read, no row written.
 */
export function customerByIdCte(id: string, d: Omit<CustomerDetails, 'email'>): { sql: string; params: unknown[] } {
  if (d.name == null && d.phone == null && d.stateCode == null && d.gstin == null) {
    return { sql: 'c as (select id, name, phone from customers where {tenant} and id = ?::uuid)', params: [id] };
  }
  return {
    sql: `c as (
       update customers as x set
         name = coalesce(x.name, d.name), phone = coalesce(x.phone, d.phone),
         state_code = coalesce(x.state_code, d.state_code), gstin = coalesce(x.gstin, d.gstin),
         updated_at = case when (x.name is null and d.name is not null) or (x.phone is null and d.phone is not null)
           or (x.state_code is null and d.state_code is not null) or (x.gstin is null and d.gstin is not null)
           then now() else x.updated_at end
       from (select ?::text as name, ?::text as phone, ?::text as state_code, ?::text as gstin) d
       where {tenant:x} and x.id = ?::uuid
       returning x.id, x.name, x.phone
     )`,
    params: [d.name ?? null, d.phone ?? null, d.stateCode ?? null, d.gstin ?? null, id],
  };
}

/**
 * SQL pieces for statements of other modules that read the tenant's customer in the same statement as their own rows.
 * Each names the customer's tenant with `{tenant...}` (the enclosing tenant statement fills it in) and takes the
 * customer's id as SQL (`?`, a column of the enclosing statement).
 */
export const customerSql = {
  /**
   * `left join customers <alias> on {tenant:<alias>} and <alias>.id = <idSql>`: the tenant's customer, every column of
   * the Customer entity (`aliasedColumns(em, Customer, alias)`), nulls when it is not the tenant's.
   */
  leftJoin: (alias: string, idSql: string): string =>
    `left join customers ${alias} on {tenant:${alias}} and ${alias}.id = ${idSql}`,
  /** `join customers <alias> ...`: as `leftJoin`, but a row only where the customer is the tenant's. */
  join: (alias: string, idSql: string): string =>
    `join customers ${alias} on {tenant:${alias}} and ${alias}.id = ${idSql}`,
  /** `exists (...)`: whether `<idSql>` is a customer of the tenant (`{tenant}` unqualified: the subquery's own). */
  exists: (idSql: string): string => `exists (select 1 from customers where {tenant} and id = ${idSql})`,
  /**
   * The customers table as the from-item `<alias>`, for a statement driven by one customer: the statement names the
   * tenant and the customer itself (`{tenant:<alias>} and <alias>.id = ?`) and reads `<alias>.id` only.
   */
  from: (alias: string): string => `customers ${alias}`,
};

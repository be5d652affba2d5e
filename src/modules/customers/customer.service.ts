import { v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import type { TenantParams } from '../../core/entity';
import { invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { Customer } from './customer.entity';

export interface CustomerDetails {
  email: string;
  name?: string | null;
  phone?: string | null;
  stateCode?: string | null;
  gstin?: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string, param = 'customer_email'): string {
  const e = String(email ?? '').trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw invalid(param, `Invalid e-mail address: '${email}'.`);
  return e;
}

export function validateCustomerDetails(d: CustomerDetails, prefix = 'customer_'): void {
  if (d.stateCode != null && !/^\d{2}$/.test(d.stateCode)) throw invalid(`${prefix}state_code`, 'State code must be 2 digits.');
  if (d.gstin != null && !/^\d{2}[A-Z0-9]{13}$/.test(d.gstin)) throw invalid(`${prefix}gstin`, 'GSTIN must be 15 characters.');
  if (d.phone != null && !/^\+?[0-9 ()-]{6,20}$/.test(d.phone)) throw invalid(`${prefix}phone`, `Invalid phone number: '${d.phone}'.`);
}

export class CustomerService {
  /**
   * A CTE `c(id, name, phone)` that finds the tenant's customer with this e-mail or creates it, for a statement that
   * writes a record of that customer in the same breath (atomic without a transaction of its own; concurrent
   * requests for one e-mail meet on the unique key). The record gains the details it lacked and never loses what
   * the merchant already gave; `updated_at` moves only when something was filled in.
   */
  upsertCte(tenant: TenantParams, details: CustomerDetails): { sql: string; params: unknown[] } {
    return {
      sql: `c as (
         insert into customers as x (id, created_at, updated_at, merchant_id, mode, email, name, phone, state_code, gstin)
         values (?, now(), now(), ?, ?, ?, ?, ?, ?, ?)
         on conflict (merchant_id, mode, email) do update set
           name = coalesce(x.name, excluded.name), phone = coalesce(x.phone, excluded.phone),
           state_code = coalesce(x.state_code, excluded.state_code), gstin = coalesce(x.gstin, excluded.gstin),
           updated_at = case when (x.name is null and excluded.name is not null) or (x.phone is null and excluded.phone is not null)
             or (x.state_code is null and excluded.state_code is not null) or (x.gstin is null and excluded.gstin is not null)
             then now() else x.updated_at end
         returning id, name, phone
       )`,
      params: [
        uuidv7(), tenant.merchantId, tenant.mode, normaliseEmail(details.email), details.name ?? null, details.phone ?? null,
        details.stateCode ?? null, details.gstin ?? null,
      ],
    };
  }

  customer(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Customer, id, 'customer');
  }

  customers(ctx: Ctx, args: PageArgs & { email?: string | null }) {
    tenantOf(ctx);
    return paginate(ctx.em, Customer, args.email ? { email: args.email.trim().toLowerCase() } : {}, args);
  }
}

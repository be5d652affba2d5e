import type { EntityManager } from '@mikro-orm/postgresql';
import { v7 as uuidv7 } from 'uuid';
import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { TENANT_FILTER, TenantParams } from '../../core/entity';
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
   * Finds the tenant's customer with this e-mail or creates it. Safe under concurrency: the insert does nothing
   * when a concurrent request created the same customer, and the select then sees that one.
   */
  async findOrCreate(em: EntityManager, details: CustomerDetails): Promise<Customer> {
    const tenant = em.getFilterParams<TenantParams>(TENANT_FILTER);
    const email = normaliseEmail(details.email);
    await em.getConnection().execute(
      `insert into customers (id, created_at, updated_at, merchant_id, mode, email, name, phone, state_code, gstin)
       values (?, now(), now(), ?, ?, ?, ?, ?, ?, ?) on conflict (merchant_id, mode, email) do nothing`,
      [uuidv7(), tenant.merchantId, tenant.mode, email, details.name ?? null, details.phone ?? null, details.stateCode ?? null, details.gstin ?? null],
      'run',
      em.getTransactionContext(),
    );
    const customer = await em.findOneOrFail(Customer, { email });
    // Fill what the customer record lacks; never overwrite what the merchant already knows.
    if (!customer.name && details.name) customer.name = details.name;
    if (!customer.phone && details.phone) customer.phone = details.phone;
    if (!customer.stateCode && details.stateCode) customer.stateCode = details.stateCode;
    if (!customer.gstin && details.gstin) customer.gstin = details.gstin;
    return customer;
  }

  customer(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Customer, id, 'customer');
  }

  customers(ctx: Ctx, args: PageArgs & { email?: string | null }) {
    tenantOf(ctx);
    return paginate(ctx.em, Customer, args.email ? { email: args.email.trim().toLowerCase() } : {}, args);
  }
}

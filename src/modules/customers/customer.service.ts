import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { Customer } from './customer.entities';
import type { CustomerDetails } from './customer.store';

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
  customer(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Customer, id, 'customer');
  }

  customers(ctx: Ctx, args: PageArgs & { email?: string | null }) {
    tenantOf(ctx);
    return paginate(ctx.em, Customer, args.email ? { email: args.email.trim().toLowerCase() } : {}, args);
  }
}

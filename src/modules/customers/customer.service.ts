import type { Ctx } from '../../core/context';
import { tenantOf } from '../../core/context';
import { invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { checkGstStateCode, normaliseGstin } from '../../core/gstin';
import { Customer } from './customer.entities';
import type { CustomerDetails } from './customer.store';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function normaliseEmail(email: string, param = 'customer_email'): string {
  const e = String(email ?? '')
    .trim()
    .toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw invalid(param, `Invalid e-mail address: '${email}'.`);
  return e;
}

/** Checks a customer's details, and writes its GSTIN upper case (src/modules/invoices/gstin.ts). */
export function validateCustomerDetails(d: CustomerDetails, prefix = 'customer_'): void {
  if (d.stateCode != null) checkGstStateCode(d.stateCode, `${prefix}state_code`);
  if (d.gstin != null) d.gstin = normaliseGstin(d.gstin, `${prefix}gstin`);
  if (d.phone != null && !/^\+?[0-9 ()-]{6,20}$/.test(d.phone))
    throw invalid(`${prefix}phone`, `Invalid phone number: '${d.phone}'.`);
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

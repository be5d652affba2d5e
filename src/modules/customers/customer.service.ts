import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { Ctx } from '../../core/context';
import { defineLoader, tenantOf } from '../../core/context';
import { make } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { checkGstStateCode, normaliseGstin } from '../../core/gstin';
import { validateMetadata } from '../../core/validate';
import type { IdempotentAttempt } from '../idempotency';
import { Customer } from './customer.entities';
import type { CreateCustomerInput, UpdateCustomerInput } from './customer.inputs';
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

/** How a purchase (a payment, a subscription) names its customer: its request's `customer_*` fields. */
export interface PurchaseCustomerInput {
  customerId?: string | null;
  customerEmail?: string | null;
  customerName?: string | null;
  customerPhone?: string | null;
  customerStateCode?: string | null;
  customerGstin?: string | null;
}

/**
 * The customer a purchase names (docs/payments.md, "Customers"): `customer_id`, a customer of the tenant (else 404
 * `resource_not_found` on `customer_id`, exactly as an unknown id), whose e-mail `customer_email` must be when both are
 * given (compared without regard to case; else 400 `parameter_invalid` on `customer_email`); else `customer_email`
 * (required), found or created when the purchase is written. Either way the `customer_*` details are checked, and
 * they fill in what the customer's record lacks when the purchase is written, never replacing what it has.
 * `record`: the customer as read now (by id only); `details.email` is its e-mail then.
 */
export async function purchaseCustomer(
  ctx: Ctx,
  input: PurchaseCustomerInput,
): Promise<{ record: Customer | null; details: CustomerDetails }> {
  const details = {
    name: input.customerName ?? null,
    phone: input.customerPhone ?? null,
    stateCode: input.customerStateCode ?? null,
    gstin: input.customerGstin ?? null,
  };
  if (input.customerId) {
    const email = input.customerEmail != null ? normaliseEmail(input.customerEmail) : null;
    const c = { email: '', ...details };
    validateCustomerDetails(c);
    // Kept out of the request's identity map: the purchase's statement may fill in the record's details.
    const record = await findOr404(ctx.em, Customer, input.customerId, 'customer', {
      param: 'customer_id',
      disableIdentityMap: true,
    });
    if (email != null && email !== record.email) {
      throw invalid('customer_email', `customer_email does not match customer ${record.id}'s e-mail address.`);
    }
    return { record, details: { ...c, email: record.email } };
  }
  if (!input.customerEmail) {
    throw new DomainError(
      'parameter_missing',
      'Missing required parameter: customer_email (or customer_id).',
      'customer_email',
    );
  }
  const c = { email: normaliseEmail(input.customerEmail), ...details };
  validateCustomerDetails(c);
  return { record: null, details: c };
}

/** A blank text is no text (name, phone, address). */
const clean = (v: string | null | undefined): string | null => (typeof v === 'string' ? v.trim() || null : null);

/** The details a customer write sets, checked: what `POST /customers` and `POST /customers/{id}` may change. */
type CustomerFields = Pick<Customer, 'email' | 'name' | 'phone' | 'stateCode' | 'gstin' | 'address' | 'metadata'>;

/**
 * The fields an input gives, checked (400 `parameter_invalid` naming the field, before anything is read or written):
 * an e-mail address (kept lower case), a GST state code, a GSTIN (kept upper case, docs/invoices-and-gst.md), a phone
 * number, an address, metadata as everywhere. Omitted fields are left out; null clears.
 */
function checkedFields(input: Partial<Record<keyof CustomerFields, unknown>>): Partial<CustomerFields> {
  const out: Partial<CustomerFields> = {};
  if (input.email !== undefined) {
    if (input.email === null) throw invalid('email', 'email cannot be cleared: a customer always has one.');
    out.email = normaliseEmail(input.email as string, 'email');
  }
  const details: Omit<CustomerDetails, 'email'> = {};
  if (input.name !== undefined) out.name = clean(input.name as string | null);
  if (input.phone !== undefined) out.phone = details.phone = clean(input.phone as string | null);
  if (input.stateCode !== undefined) out.stateCode = details.stateCode = (input.stateCode as string | null) ?? null;
  if (input.gstin !== undefined) details.gstin = (input.gstin as string | null) ?? null;
  validateCustomerDetails(details as CustomerDetails, '');
  if (input.gstin !== undefined) out.gstin = details.gstin;
  // Its length is the input's bound (customer.inputs.ts), checked before the service is called.
  if (input.address !== undefined) out.address = clean(input.address as string | null);
  if (input.metadata !== undefined) out.metadata = { ...validateMetadata(input.metadata) };
  return out;
}

export class CustomerService {
  /**
   * Makes a customer before any purchase (docs/payments.md, "Customers"). The e-mail is the tenant's key: one taken
   * already (by a customer made here, or found or created by a payment or subscription) answers 409 `customer_exists`
   * naming that customer, also when two creates race (the unique key settles it). With an Idempotency-Key the
   * customer's id is the key's, so a retry after a 5xx finds the customer its first attempt made.
   */
  async create(ctx: Ctx, input: CreateCustomerInput, attempt: IdempotentAttempt | null = null): Promise<Customer> {
    tenantOf(ctx);
    const fields = checkedFields(input);
    const id = attempt?.resourceId;
    if (attempt && !attempt.fresh) {
      const existing = await ctx.em.findOne(Customer, { id: attempt.resourceId });
      if (existing) return existing;
    }
    try {
      return await ctx.em.transactional(async (em) => {
        const customer = make(Customer, { ...(id ? { id } : {}), ...fields });
        em.persist(customer);
        return customer;
      });
    } catch (err) {
      throw (await this.emailTaken(ctx, err, fields.email!)) ?? err;
    }
  }

  /**
   * Changes a customer's details (omitted fields kept, null clears; `metadata` is replaced as a whole). The row is
   * locked while it changes, so concurrent updates apply one after the other and each keeps the other's fields. An
   * e-mail another customer of the tenant has: 409 `customer_exists`. Documents already issued keep the details they
   * were issued with (docs/invoices-and-gst.md).
   */
  async update(ctx: Ctx, id: string, input: UpdateCustomerInput): Promise<Customer> {
    tenantOf(ctx);
    const fields = checkedFields(input);
    try {
      return await ctx.em.transactional(async (em) => {
        const customer = await findOr404(em, Customer, id, 'customer', { lockMode: LockMode.PESSIMISTIC_WRITE });
        Object.assign(customer, fields);
        return customer;
      });
    } catch (err) {
      throw (fields.email && (await this.emailTaken(ctx, err, fields.email))) || err;
    }
  }

  /** The 409 for a write that met the tenant's unique e-mail key, naming the customer that has it; null otherwise. */
  private async emailTaken(ctx: Ctx, err: unknown, email: string): Promise<DomainError | null> {
    if (!(err instanceof UniqueConstraintViolationException)) return null;
    const holder = await ctx.em.fork().findOne(Customer, { email }, { fields: ['id'] });
    return new DomainError(
      'customer_exists',
      `A customer with e-mail ${email} already exists in this mode${holder ? `: ${holder.id}` : ''}.`,
      'email',
    );
  }

  customer(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Customer, id, 'customer');
  }

  customers(ctx: Ctx, args: PageArgs & { email?: string | null }) {
    tenantOf(ctx);
    return paginate(ctx.em, Customer, args.email ? { email: args.email.trim().toLowerCase() } : {}, args);
  }
}

/** Customers by id (the tenant's filter applies): the customer a subscription or an invoice names, one query per page. */
export const customersById = defineLoader<string, Customer | null>('customersById', async (ctx, ids) => {
  const rows = new Map((await ctx.em.find(Customer, { id: { $in: [...ids] } })).map((c) => [c.id, c]));
  return ids.map((id) => rows.get(id) ?? null);
});

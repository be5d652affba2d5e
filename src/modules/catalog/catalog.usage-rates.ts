import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy, tenantOf } from '../../core/context';
import { normaliseCurrency } from '../../core/currency';
import { make } from '../../core/entity';
import { DomainError, invalid } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import { Plan, UsageRate } from './catalog.entities';
import type { CreateUsageRateInput } from './catalog.inputs';

/** Metric names: 1 to 100 letters, digits and `_ . : -` (they key the aggregates and are compared byte for byte). */
export const EVENT_TYPE = /^[A-Za-z0-9_.:-]{1,100}$/;
export const MAX_EVENT_TYPE = 100;

/**
 * Usage rates (docs/usage.md): a plan's price per unit of one usage event type in one currency. The money is an exact
 * decimal end to end: validated and canonicalised here as text, stored as PostgreSQL numeric, multiplied by usage
 * quantities in SQL when a period closes (src/modules/subscriptions/usage.billing.ts). No float ever holds it.
 */

/** At most 9 integer digits (a billion subunits per unit) and 12 fractional ones; no sign, no exponent. */
const DECIMAL = /^(\d{1,9})(?:\.(\d{1,12}))?$/;

/** `"007.2500"` -> `"7.25"`, `"0.000"` -> `"0"`; 400 parameter_invalid on anything but a plain non-negative decimal. */
export function canonicalUnitAmount(value: string): string {
  const m = DECIMAL.exec(String(value ?? '').trim());
  if (!m) {
    throw invalid(
      'unit_amount_decimal',
      `Invalid unit_amount_decimal: '${String(value).slice(0, 40)}'. Use a decimal string >= 0 with at most 9 integer and 12 fractional digits, e.g. "0.25".`,
    );
  }
  const whole = m[1].replace(/^0+(?=\d)/, '');
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/** A plan's usage rates, oldest first: one query for every plan of a request (Plan.usageRates). */
export const usageRatesByPlan = defineLoader<string, UsageRate[]>('usageRatesByPlan', async (ctx, ids) =>
  groupBy(
    ids,
    await ctx.em.find(UsageRate, { planId: { $in: [...ids] } }, { orderBy: { id: 'asc' } }),
    (r) => r.planId,
  ),
);

/**
 * Adds a usage rate to a recurring plan, inside `write` (the catalog's transaction, which bumps the catalog version so
 * cached plan reads show it at once). One per plan, event type and currency (409 usage_rate_exists): rates are
 * immutable, like prices.
 */
export async function createUsageRate(
  ctx: Ctx,
  planId: string,
  input: CreateUsageRateInput,
  write: <T>(fn: (em: EntityManager) => Promise<T>) => Promise<T>,
): Promise<UsageRate> {
  const currency = normaliseCurrency(input.currency);
  const unitAmountDecimal = canonicalUnitAmount(input.unitAmountDecimal);
  const eventType = input.eventType;
  // The rule usage events have: a rate for a name no event can carry would price nothing.
  if (!EVENT_TYPE.test(eventType)) {
    throw invalid(
      'event_type',
      `event_type must be 1 to ${MAX_EVENT_TYPE} characters: letters, digits, "_", ".", ":" or "-" (as usage events name it).`,
    );
  }
  const plan = await findOr404(ctx.em, Plan, planId, 'plan');
  if (!plan.isRecurring) {
    throw new DomainError(
      'plan_not_recurring',
      `Plan ${plan.id} belongs to a one_time product: usage is billed on subscriptions only.`,
    );
  }
  try {
    return await write(async (em) => {
      const rate = make(UsageRate, { planId: plan.id, eventType, currency, unitAmountDecimal });
      em.persist(rate);
      return rate;
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw new DomainError(
        'usage_rate_exists',
        `Plan ${plan.id} already has a usage rate for '${eventType}' in ${currency}.`,
        'event_type',
      );
    }
    throw err;
  }
}

/** A plan's usage rates, newest first (404 for a plan that is not the tenant's). */
export async function usageRates(ctx: Ctx, planId: string, page: PageArgs) {
  tenantOf(ctx);
  const plan = await findOr404(ctx.em, Plan, planId, 'plan');
  return paginate(ctx.em, UsageRate, { planId: plan.id }, page);
}

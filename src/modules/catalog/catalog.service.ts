import { LockMode } from '@mikro-orm/core';
import type { Ctx } from '../../core/context';
import { defineLoader, groupBy, tenantOf } from '../../core/context';
import { normaliseCurrency } from '../../core/currency';
import type { EntityManager } from '@mikro-orm/postgresql';
import { make } from '../../core/entity';
import { bumpCatalogVersion } from './catalog.store';
import { DomainError } from '../../core/errors';
import { findOr404 } from '../../core/find';
import { PageArgs, paginate } from '../../core/pagination';
import {
  Plan,
  Price,
  Product,
  ProductFamily,
  ProductStatus,
  ProductType,
  TaxBehavior,
  TrialEndAction,
} from './catalog.entities';
import type {
  CreatePlanInput,
  CreatePriceInput,
  CreateProductFamilyInput,
  CreateProductInput,
  CreateUsageRateInput,
  UpdateProductInput,
} from './catalog.inputs';
import { createUsageRate, usageRates } from './catalog.usage-rates';
import { unchargeableAmount } from '../../gateways/amounts';

/** Nested catalog reads batch through these: one query per level, whatever the list size. */
export const plansByProduct = defineLoader<string, Plan[]>('plansByProduct', async (ctx, ids) =>
  groupBy(
    ids,
    await ctx.em.find(Plan, { productId: { $in: [...ids] } }, { orderBy: { id: 'asc' } }),
    (p) => p.productId,
  ),
);
/** By id (the tenant's filter applies): what a subscription or an invoice names, one query per page. */
export const plansById = defineLoader<string, Plan | null>('plansById', async (ctx, ids) => {
  const rows = new Map((await ctx.em.find(Plan, { id: { $in: [...ids] } })).map((p) => [p.id, p]));
  return ids.map((id) => rows.get(id) ?? null);
});
export const productsById = defineLoader<string, Product | null>('productsById', async (ctx, ids) => {
  const rows = new Map((await ctx.em.find(Product, { id: { $in: [...ids] } })).map((p) => [p.id, p]));
  return ids.map((id) => rows.get(id) ?? null);
});
export const pricesByPlan = defineLoader<string, Price[]>('pricesByPlan', async (ctx, ids) =>
  groupBy(ids, await ctx.em.find(Price, { planId: { $in: [...ids] } }, { orderBy: { id: 'asc' } }), (p) => p.planId),
);
export const defaultPricesByPlan = defineLoader<string, Price[]>('defaultPricesByPlan', async (ctx, ids) =>
  groupBy(
    ids,
    await ctx.em.find(Price, { planId: { $in: [...ids] }, isDefault: true }, { orderBy: { id: 'asc' } }),
    (p) => p.planId,
  ),
);

/** A plan's `default_price`: its default in the merchant's reporting currency, else its oldest default price. */
export function pickDefaultPrice(defaults: Price[], reportingCurrency: string): Price | null {
  return defaults.find((p) => p.currency === reportingCurrency) ?? defaults[0] ?? null;
}

export class CatalogService {
  async createProductFamily(ctx: Ctx, input: CreateProductFamilyInput): Promise<ProductFamily> {
    return this.write(ctx, async (em) => {
      const family = make(ProductFamily, { name: input.name, description: input.description ?? null });
      em.persist(family);
      return family;
    });
  }

  productFamily(ctx: Ctx, id: string) {
    return findOr404(ctx.em, ProductFamily, id, 'product family');
  }

  productFamilies(ctx: Ctx, page: PageArgs) {
    tenantOf(ctx);
    return paginate(ctx.em, ProductFamily, {}, page);
  }

  async createProduct(ctx: Ctx, input: CreateProductInput): Promise<Product> {
    // Whatever is given is looked up: an id that names no family of the tenant must never reach the ORM.
    if (input.productFamilyId != null) {
      await findOr404(ctx.em, ProductFamily, input.productFamilyId, 'product family', { param: 'product_family_id' });
    }
    return this.write(ctx, async (em) => {
      const product = make(Product, {
        name: input.name,
        description: input.description ?? null,
        type: input.type,
        status: input.status ?? ProductStatus.ACTIVE,
        productFamilyId: input.productFamilyId ?? null,
      });
      em.persist(product);
      return product;
    });
  }

  async updateProduct(ctx: Ctx, id: string, input: UpdateProductInput): Promise<Product> {
    return this.write(ctx, async (em) => {
      const product = await findOr404(em, Product, id, 'product');
      if (input.name != null) product.name = input.name;
      if (input.description !== undefined) product.description = input.description;
      if (input.status != null) product.status = input.status;
      return product;
    });
  }

  product(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Product, id, 'product');
  }

  products(ctx: Ctx, page: PageArgs & { status?: ProductStatus | null; type?: ProductType | null }) {
    tenantOf(ctx);
    const where: Record<string, unknown> = {};
    if (page.status) where.status = page.status;
    if (page.type) where.type = page.type;
    return paginate(ctx.em, Product, where, page);
  }

  async createPlan(ctx: Ctx, productId: string, input: CreatePlanInput): Promise<Plan> {
    const product = await this.product(ctx, productId);
    const recurring = product.type === ProductType.SUBSCRIPTION;
    if (recurring && !input.billingFrequency) {
      throw new DomainError('parameter_missing', 'Missing required parameter: billing_frequency', 'billing_frequency');
    }
    if (!recurring) {
      // A one-time product has no recurrence: refuse recurrence fields rather than silently dropping them.
      for (const [field, param] of [
        ['billingFrequency', 'billing_frequency'],
        ['trialPeriodDays', 'trial_period_days'],
        ['maxCycles', 'max_cycles'],
      ] as const) {
        const v = input[field];
        if (v != null && !(field === 'trialPeriodDays' && v === 0)) {
          throw new DomainError('parameter_invalid', `${param} cannot be set on a plan of a one_time product.`, param);
        }
      }
    }
    return this.write(ctx, async (em) => {
      const plan = make(Plan, {
        productId: product.id,
        name: input.name,
        billingFrequency: recurring ? input.billingFrequency! : null,
        billingInterval: input.billingInterval ?? 1,
        trialPeriodDays: input.trialPeriodDays ?? 0,
        trialEndAction: input.trialEndAction ?? TrialEndAction.START_SUBSCRIPTION,
        maxCycles: input.maxCycles ?? null,
      });
      em.persist(plan);
      return plan;
    });
  }

  plan(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Plan, id, 'plan');
  }

  price(ctx: Ctx, id: string) {
    return findOr404(ctx.em, Price, id, 'price');
  }

  /**
   * Adds a price to a plan. The plan row is locked so that concurrent default switches for one plan run one after
   * the other; the partial unique index on (plan, currency) where default backs this up. An amount or setup fee that
   * some supported gateway cannot charge (KWD 1505 at Stripe or Razorpay) is refused: 400 parameter_invalid.
   */
  async createPrice(ctx: Ctx, planId: string, input: CreatePriceInput): Promise<Price> {
    const currency = normaliseCurrency(input.currency);
    if (!Number.isSafeInteger(input.amount) || input.amount < 0) {
      throw new DomainError('parameter_invalid', 'amount must be a non-negative integer in subunits.', 'amount');
    }
    // Every gateway must be able to charge it (gateways/amounts.ts): e.g. KWD 1505 would fail every subscription.
    for (const [param, amount] of [
      ['amount', input.amount],
      ['setup_fee', input.setupFee ?? 0],
    ] as const) {
      const unchargeable = unchargeableAmount(amount, currency);
      if (unchargeable)
        throw new DomainError(
          'parameter_invalid',
          `${param} cannot be charged by every gateway: ${unchargeable}`,
          param,
        );
    }
    return this.write(ctx, async (em) => {
      const plan = await findOr404(em, Plan, planId, 'plan', { lockMode: LockMode.PESSIMISTIC_WRITE });
      const currentDefault = await em.findOne(Price, { planId: plan.id, currency, isDefault: true });
      const isDefault = input.isDefault ?? !currentDefault;
      if (isDefault && currentDefault) currentDefault.isDefault = false;
      // Flush the cleared default first: the unique index allows one default per plan and currency at any moment.
      await em.flush();
      const price = make(Price, {
        planId: plan.id,
        currency,
        amount: input.amount,
        setupFee: input.setupFee ?? 0,
        taxBehavior: input.taxBehavior ?? TaxBehavior.EXCLUSIVE,
        isDefault,
        providerPriceIds: {},
      });
      em.persist(price);
      return price;
    });
  }

  /** Adds a usage rate to a plan (catalog.usage-rates.ts), in a catalog write. */
  createUsageRate(ctx: Ctx, planId: string, input: CreateUsageRateInput) {
    return createUsageRate(ctx, planId, input, (fn) => this.write(ctx, fn));
  }

  usageRates(ctx: Ctx, planId: string, page: PageArgs) {
    return usageRates(ctx, planId, page);
  }

  /**
   * Every catalog write runs here: one transaction that also bumps the catalog version, which retires the cached
   * catalog reads of this merchant and mode in every process.
   */
  private write<T>(ctx: Ctx, fn: (em: EntityManager) => Promise<T>): Promise<T> {
    return ctx.em.transactional(async (em) => {
      const result = await fn(em);
      await em.flush();
      await bumpCatalogVersion(em);
      return result;
    });
  }
}

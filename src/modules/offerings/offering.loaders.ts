import type { Ctx } from '../../core/context';
import { defineLoader } from '../../core/context';
import {
  Price,
  Product,
  ProductStatus,
  pickDefaultPrice,
  plansByProduct,
  pricesByPlan,
  usageRatesByPlan,
} from '../catalog';
import { currentMerchant } from '../merchants';
import { Offering, OfferingPackage, OfferingPlan, OfferingProduct } from './offering.entities';
import { packagesOfOfferings, productIdsOfPackages } from './offering.store';

/**
 * Request-scoped batch reads of the presentation layer: nested fields take one statement per level whatever the list
 * size. Products, plans and prices come through the catalog's loaders.
 */

export const packagesByOffering = defineLoader<string, OfferingPackage[]>('packagesByOffering', async (ctx, ids) => {
  const byOffering = await packagesOfOfferings(ctx.em, ids);
  return ids.map((id) => byOffering.get(id) ?? []);
});

export const productIdsByPackage = defineLoader<string, string[]>('productIdsByPackage', async (ctx, ids) => {
  const byPackage = await productIdsOfPackages(ctx.em, ids);
  return ids.map((id) => byPackage.get(id) ?? []);
});

/** Catalog products by id (the tenant filter scopes them); an id of another tenant reads as missing. */
export const productsById = defineLoader<string, Product | null>('offeringProductsById', async (ctx, ids) => {
  const rows = await ctx.em.find(Product, { id: { $in: [...ids] } });
  const byId = new Map(rows.map((p) => [p.id, p]));
  return ids.map((id) => byId.get(id) ?? null);
});

const values = <T>(list: (T | Error)[]): T[] =>
  list.map((x) => {
    if (x instanceof Error) throw x;
    return x;
  });

/**
 * What a package offers a customer: its active products (inactive ones are not for sale), oldest first, each with
 * its plans, their prices, default price and usage rates, as plain values. For any number of packages: five
 * statements (links, products, plans, prices and usage rates).
 */
export const offeringProductsByPackage = defineLoader<string, OfferingProduct[]>(
  'offeringProductsByPackage',
  async (ctx, ids) => {
    const idLists = values(await productIdsByPackage(ctx).loadMany(ids));
    const products = values(await productsById(ctx).loadMany([...new Set(idLists.flat())])).filter(
      (p): p is Product => p !== null && p.status === ProductStatus.ACTIVE,
    );
    const [planLists, merchant] = await Promise.all([
      plansByProduct(ctx).loadMany(products.map((p) => p.id)),
      currentMerchant(ctx),
    ]);
    const plans = values(planLists).flat();
    const planIds = plans.map((p) => p.id);
    const [priceLists, rateLists] = await Promise.all([
      pricesByPlan(ctx).loadMany(planIds),
      usageRatesByPlan(ctx).loadMany(planIds),
    ]);
    const pricesOf = new Map(plans.map((p, i) => [p.id, values(priceLists)[i]]));
    const ratesOf = new Map(plans.map((p, i) => [p.id, values(rateLists)[i]]));
    const views = new Map<string, OfferingProduct>();
    for (const p of products) {
      views.set(
        p.id,
        Object.assign(new OfferingProduct(), {
          id: p.id,
          object: p.object,
          name: p.name,
          description: p.description ?? null,
          type: p.type,
          status: p.status,
          productFamilyId: p.productFamilyId ?? null,
          updatedAt: p.updatedAt,
          livemode: p.livemode,
          createdAt: p.createdAt,
          plans: plans
            .filter((plan) => plan.productId === p.id)
            .map((plan) => {
              const prices: Price[] = pricesOf.get(plan.id) ?? [];
              return Object.assign(new OfferingPlan(), {
                id: plan.id,
                object: plan.object,
                productId: plan.productId,
                name: plan.name,
                billingFrequency: plan.billingFrequency ?? null,
                billingInterval: plan.billingInterval,
                trialPeriodDays: plan.trialPeriodDays,
                trialEndAction: plan.trialEndAction,
                maxCycles: plan.maxCycles ?? null,
                livemode: plan.livemode,
                createdAt: plan.createdAt,
                prices,
                // The catalog's rule (`default_price` of GET /plans/{id}), over the defaults oldest first.
                defaultPrice: pickDefaultPrice(
                  prices.filter((x) => x.isDefault),
                  merchant.reportingCurrency,
                ),
                usageRates: ratesOf.get(plan.id) ?? [],
              });
            }),
        }),
      );
    }
    return idLists.map((list) => list.flatMap((id) => views.get(id) ?? []));
  },
);

/**
 * Offerings and packages that carry their nested values already (resolve's cached trees, offering.cache.ts): their
 * fields answer from these, synchronously, instead of the loaders. Weak: an entry goes with its tree.
 */
const offeringPackages = new WeakMap<Offering, OfferingPackage[]>();
const packageContents = new WeakMap<OfferingPackage, { productIds: string[]; products: OfferingProduct[] }>();

export function attachTree(
  offering: Offering,
  packages: OfferingPackage[],
  contents: { productIds: string[]; products: OfferingProduct[] }[],
): void {
  offeringPackages.set(offering, packages);
  packages.forEach((p, i) => packageContents.set(p, contents[i]));
}

export const packagesOf = (ctx: Ctx, offering: Offering) =>
  offeringPackages.get(offering) ?? packagesByOffering(ctx).load(offering.id);
export const productIdsOf = (ctx: Ctx, pkg: OfferingPackage | { id: string }) =>
  packageContents.get(pkg as OfferingPackage)?.productIds ?? productIdsByPackage(ctx).load(pkg.id);
export const productsOf = (ctx: Ctx, pkg: OfferingPackage | { id: string }) =>
  packageContents.get(pkg as OfferingPackage)?.products ?? offeringProductsByPackage(ctx).load(pkg.id);

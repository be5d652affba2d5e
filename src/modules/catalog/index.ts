/**
 * Products, plans, prices and usage rates, and their cached reads.
 * The module's public surface: other modules import it only through this file.
 */
export { graphqlReadKey, isCatalogRead, restReadKey } from './catalog-cache';
export {
  BillingFrequency,
  CatalogVersion,
  GatewayPrice,
  Plan,
  Price,
  Product,
  ProductFamily,
  ProductStatus,
  ProductType,
  TaxBehavior,
  TrialEndAction,
  UsageRate,
} from './catalog.entities';
export { catalogResolvers } from './catalog.resolver';
export {
  CatalogService,
  pickDefaultPrice,
  plansById,
  plansByProduct,
  pricesByPlan,
  productsById,
} from './catalog.service';
export {
  bumpCatalogVersion,
  catalogVersion,
  existingPlans,
  existingProducts,
  gatewayPriceId,
  lockPriceRegistration,
  recordGatewayPrice,
  subscriptionTerms,
  usageRateSql,
} from './catalog.store';
export { EVENT_TYPE, MAX_EVENT_TYPE, usageRatesByPlan } from './catalog.usage-rates';

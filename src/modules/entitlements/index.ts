/**
 * Entitlements: what a customer may use, evaluated from its subscriptions.
 * The module's public surface: other modules import it only through this file.
 */
export { EntitlementCache } from './entitlement.cache';
export { Entitlement, EntitlementProduct, EntitlementVersion } from './entitlement.entities';
export { EntitlementEvaluator } from './entitlement.evaluator';
export { entitlementResolvers } from './entitlement.resolver';
export { EntitlementService } from './entitlement.service';

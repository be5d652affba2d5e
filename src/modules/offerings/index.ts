/**
 * Offerings, packages and paywalls, and what a customer is shown.
 * The module's public surface: other modules import it only through this file.
 */
export { Offering, OfferingPackageLink, Package, PackageProductLink, Paywall } from './offering.entities';
export { offeringResolvers } from './offering.resolver';
export { OfferingService } from './offering.service';
export { existingOfferingIds } from './offering.store';

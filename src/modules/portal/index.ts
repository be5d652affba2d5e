/**
 * The customer portal's sessions and fields (docs/portal.md).
 * The module's public surface: other modules import it only through this file.
 */
export { PortalSession } from './portal.entities';
export { PORTAL_ROOT_FIELDS, portalResolvers } from './portal.resolver';
export { PORTAL_SESSION_SECONDS, PortalService } from './portal.service';
export type { PortalHolder } from './portal.service';

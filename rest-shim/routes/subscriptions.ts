import type { Route } from '../routes';

/** Subscriptions (src/modules/subscriptions). */
export const SUBSCRIPTION_ROUTES: Route[] = [];

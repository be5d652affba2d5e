import { lazy, type ComponentType } from 'react';
import { Overview } from './overview';

/**
 * Each page but the overview (the first screen) is its own chunk, loaded when first opened: the first screen
 * downloads only what it draws.
 */
const Subscriptions = lazy(() => import('./subscriptions').then((m) => ({ default: m.Subscriptions })));
const SubscriptionDetail = lazy(() => import('./subscription-detail').then((m) => ({ default: m.SubscriptionDetail })));
const Customers = lazy(() => import('./customers').then((m) => ({ default: m.Customers })));
const CustomerDetail = lazy(() => import('./customer-detail').then((m) => ({ default: m.CustomerDetail })));
const Payments = lazy(() => import('./payments').then((m) => ({ default: m.Payments })));
const Invoices = lazy(() => import('./invoices').then((m) => ({ default: m.Invoices })));
const Catalog = lazy(() => import('./catalog').then((m) => ({ default: m.Catalog })));
const Growth = lazy(() => import('./growth').then((m) => ({ default: m.Growth })));
const Coupons = lazy(() => import('./coupons').then((m) => ({ default: m.Coupons })));
const Usage = lazy(() => import('./usage').then((m) => ({ default: m.Usage })));
const Webhooks = lazy(() => import('./webhooks').then((m) => ({ default: m.Webhooks })));
const Developers = lazy(() => import('./developers').then((m) => ({ default: m.Developers })));

/** The navigation, in order (paths under /dashboard). */
export const PAGES: { path: string; label: string }[] = [
  { path: '/', label: 'Overview' },
  { path: '/subscriptions', label: 'Subscriptions' },
  { path: '/customers', label: 'Customers' },
  { path: '/payments', label: 'Payments' },
  { path: '/invoices', label: 'Invoices' },
  { path: '/catalog', label: 'Catalog' },
  { path: '/growth', label: 'Growth' },
  { path: '/coupons', label: 'Coupons' },
  { path: '/usage', label: 'Usage' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/developers', label: 'Developers' },
];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const ROUTES: { path: string; component: ComponentType<any> }[] = [
  { path: '/', component: Overview },
  { path: '/subscriptions', component: Subscriptions },
  { path: '/subscriptions/:id', component: SubscriptionDetail },
  { path: '/customers', component: Customers },
  { path: '/customers/:id', component: CustomerDetail },
  { path: '/payments', component: Payments },
  { path: '/invoices', component: Invoices },
  { path: '/catalog', component: Catalog },
  { path: '/growth', component: Growth },
  { path: '/coupons', component: Coupons },
  { path: '/usage', component: Usage },
  { path: '/webhooks', component: Webhooks },
  { path: '/developers', component: Developers },
];

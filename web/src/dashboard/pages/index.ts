import type { ComponentType } from 'react';
import { Overview } from './overview';
import { Subscriptions } from './subscriptions';
import { SubscriptionDetail } from './subscription-detail';
import { Customers } from './customers';
import { CustomerDetail } from './customer-detail';
import { Payments } from './payments';
import { Invoices } from './invoices';
import { Catalog } from './catalog';
import { Growth } from './growth';
import { Coupons } from './coupons';
import { Usage } from './usage';
import { Webhooks } from './webhooks';
import { Developers } from './developers';

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

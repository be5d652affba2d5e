/**
 * Which modules each module may import (through their index.ts), checked by test/core/boundaries.test.ts. The graph is
 * acyclic: a module lower in the list never imports one above it. A module that needs something from a module above
 * it takes it as a function passed in by the composition root (src/container.ts), or names the fields it reads.
 * Every module may import src/core and src/money; src/money imports nothing of src outside itself.
 */
export const MODULE_DEPENDENCIES: Readonly<Record<string, readonly string[]>> = {
  'test-clock': [],
  merchants: [],
  providers: [],
  idempotency: ['test-clock'],
  customers: ['idempotency'],
  catalog: ['idempotency', 'merchants', 'providers', 'test-clock'],
  coupons: ['catalog', 'merchants', 'test-clock'],
  usage: ['catalog', 'idempotency', 'test-clock'],
  'gateway-commands': ['providers', 'test-clock'],
  invoices: ['customers', 'gateway-commands', 'merchants', 'test-clock'],
  // payments: the catalog's TaxBehavior (a one-off payment's tax_behavior, as a price's).
  payments: ['catalog', 'customers', 'gateway-commands', 'idempotency', 'invoices', 'merchants', 'providers'],
  webhooks: ['payments', 'providers', 'test-clock'],
  analytics: ['merchants', 'test-clock'],
  subscriptions: [
    'analytics',
    'catalog',
    'coupons',
    'customers',
    'gateway-commands',
    'idempotency',
    'invoices',
    'merchants',
    'payments',
    'providers',
    'test-clock',
    'usage',
  ],
  // Entitlement checks and experiment results read subscriptions through its SQL pieces (subscription.store.ts).
  entitlements: ['catalog', 'customers', 'subscriptions'],
  experiments: ['analytics', 'customers', 'invoices', 'merchants', 'payments', 'subscriptions', 'test-clock'],
  offerings: ['catalog', 'experiments', 'merchants'],
  portal: ['catalog', 'customers', 'invoices', 'merchants', 'subscriptions'],
};

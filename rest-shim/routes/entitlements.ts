import type { Route } from '../routes';

const PAGE = 'pageInfo { hasNextPage endCursor }';

/** Entitlements (src/modules/entitlements): the gates, their product links, and a customer's evaluation. */
export const ENTITLEMENT_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/entitlements',
    tag: 'Entitlements',
    status: 201,
    conflicts: ['lookup_key_exists'],
    summary: 'Create a feature gate: lookup_key (unique per merchant and mode), name, optional description.',
    document: 'mutation($input: CreateEntitlementInput!) { createEntitlement(input: $input) { ...EntitlementFields } }',
  },
  {
    method: 'get',
    path: '/entitlements',
    tag: 'Entitlements',
    summary: 'List entitlements, newest first, with their linked product_ids.',
    document: `query($first: Int, $after: String) { entitlements(first: $first, after: $after) { edges { node { ...EntitlementFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/entitlements/{id}',
    tag: 'Entitlements',
    summary: 'Retrieve an entitlement with its linked product_ids.',
    document: 'query($id: ID!) { entitlement(id: $id) { ...EntitlementFields } }',
  },
  {
    method: 'post',
    path: '/entitlements/{id}/products',
    tag: 'Entitlements',
    summary: 'Link products to a feature gate: body {"product_ids": [...]}; products already linked stay as they are.',
    document:
      'mutation($id: ID!, $input: LinkEntitlementProductsInput!) { linkEntitlementProducts(id: $id, input: $input) { ...EntitlementFields } }',
  },
  {
    method: 'get',
    path: '/subscriptions/customer/{customer_id}/entitlements',
    tag: 'Entitlements',
    summary:
      'Every entitlement the customer holds now, across their active and trialing subscriptions, with the granting subscription_ids and expires_at (the latest current period end).',
    document:
      'query($customer_id: ID!) { customerEntitlements(customerId: $customer_id) { customerId entitlements { ...CustomerEntitlementFields } } }',
  },
];

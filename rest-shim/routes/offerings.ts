import type { Route } from '../routes';

const PAGE = 'pageInfo { hasNextPage endCursor }';
const OFFERING = '...OfferingFields packages { ...OfferingPackageFields }';
const TAG = 'Offerings';

/** What resolve answers: the offering with its packages in order, their products, plans and prices; the paywall; the arm. */
const RESOLUTION = `...OfferingResolutionFields
  offering { ...OfferingFields packages { ...OfferingPackageFields
    products { ...OfferingProductFields plans { ...OfferingPlanFields prices { ...PriceFields } defaultPrice { ...PriceFields } usageRates { ...UsageRateFields } } } } }
  paywall { ...PaywallFields }
  experiment { ...ResolvedExperimentFields }`;

/** Offerings, packages, paywalls and resolve (src/modules/offerings). */
export const OFFERING_ROUTES: Route[] = [
  {
    // Before /offerings/{id}: `resolve` is no offering id.
    method: 'post',
    path: '/offerings/resolve',
    tag: TAG,
    // The offering tree and paywall are resolve's cached records (src/modules/offerings/offering.cache.ts): their
    // REST text is rendered once per catalog version, the customer and the experiment per request.
    shared: ['offering', 'paywall'],
    summary:
      "The offering (packages, products, plans, prices) and paywall to show a customer: its experiment arm's offering (sticky enrolment, " +
      'else the first running experiment whose targeting matches the attributes), else the current offering, else null.',
    document: `mutation($input: ResolveOfferingInput!) { resolveOffering(input: $input) { ${RESOLUTION} } }`,
  },
  {
    method: 'post',
    path: '/offerings',
    tag: TAG,
    status: 201,
    conflicts: ['lookup_key_exists'],
    summary:
      'Create an offering (lookup_key unique per mode). is_current: true makes it the current offering; the previous one stops being current.',
    document: `mutation($input: CreateOfferingInput!) { createOffering(input: $input) { ${OFFERING} } }`,
  },
  {
    method: 'get',
    path: '/offerings',
    tag: TAG,
    summary: 'List offerings, newest first, with their packages in order (filter: lookup_key).',
    document: `query($first: Int, $after: String, $lookupKey: String) {
      offerings(first: $first, after: $after, lookupKey: $lookupKey) { edges { node { ${OFFERING} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/offerings/{id}',
    tag: TAG,
    summary: 'Retrieve an offering with its packages in order.',
    document: `query($id: ID!) { offering(id: $id) { ${OFFERING} } }`,
  },
  {
    method: 'post',
    path: '/offerings/{id}/packages',
    tag: TAG,
    summary:
      'Attach a package at position (0 first; omitted or past the end: last); the packages from there on move down one. ' +
      'An attached package moves to position (omitted: stays).',
    document: `mutation($id: ID!, $input: AttachPackageInput!) { attachPackage(offeringId: $id, input: $input) { ${OFFERING} } }`,
  },
  {
    method: 'post',
    path: '/offerings/{id}/make-current',
    tag: TAG,
    summary: 'Make the offering the current one: the previous current offering stops being current (one per mode).',
    document: `mutation($id: ID!) { makeOfferingCurrent(id: $id) { ${OFFERING} } }`,
  },
  {
    method: 'post',
    path: '/packages',
    tag: TAG,
    status: 201,
    conflicts: ['lookup_key_exists'],
    summary: 'Create a package (lookup_key unique per mode), e.g. monthly, annual or lifetime.',
    document: 'mutation($input: CreatePackageInput!) { createPackage(input: $input) { ...PackageFields } }',
  },
  {
    method: 'get',
    path: '/packages',
    tag: TAG,
    summary: 'List packages, newest first (filter: lookup_key).',
    document: `query($first: Int, $after: String, $lookupKey: String) {
      packages(first: $first, after: $after, lookupKey: $lookupKey) { edges { node { ...PackageFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/packages/{id}',
    tag: TAG,
    summary: 'Retrieve a package with its product ids.',
    document: 'query($id: ID!) { package(id: $id) { ...PackageFields } }',
  },
  {
    method: 'post',
    path: '/packages/{id}/products',
    tag: TAG,
    summary:
      'Link products of this mode to the package (product_ids); linking a product already linked changes nothing.',
    document:
      'mutation($id: ID!, $input: LinkPackageProductsInput!) { linkPackageProducts(packageId: $id, input: $input) { ...PackageFields } }',
  },
  {
    method: 'post',
    path: '/paywalls',
    tag: TAG,
    status: 201,
    conflicts: ['paywall_exists'],
    summary:
      'Create the paywall of an offering (one per offering): template simple, feature_comparison or sliding_cards; config free JSON up to 16 KiB.',
    document: 'mutation($input: CreatePaywallInput!) { createPaywall(input: $input) { ...PaywallFields } }',
  },
  {
    method: 'get',
    path: '/paywalls',
    tag: TAG,
    summary: 'List paywalls, newest first (filter: offering_id).',
    document: `query($first: Int, $after: String, $offeringId: ID) {
      paywalls(first: $first, after: $after, offeringId: $offeringId) { edges { node { ...PaywallFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/paywalls/{id}',
    tag: TAG,
    summary: 'Retrieve a paywall.',
    document: 'query($id: ID!) { paywall(id: $id) { ...PaywallFields } }',
  },
];

import type { ErrorCode } from '../src/core/errors';
import { INVOICE_ROUTES } from './routes/invoices';
import { INVOICE_PDF_ROUTES } from './routes/invoice-pdf';
import { SUBSCRIPTION_ROUTES } from './routes/subscriptions';
import { ENTITLEMENT_ROUTES } from './routes/entitlements';
import { EXPERIMENT_ROUTES } from './routes/experiments';
import { OFFERING_ROUTES } from './routes/offerings';
import { COUPON_ROUTES } from './routes/coupons';
import { USAGE_ROUTES } from './routes/usage';
import { ANALYTICS_ROUTES } from './routes/analytics';
import { ANALYTICS_RETENTION_ROUTES } from './routes/analytics-retention';
import { GATEWAY_COMMAND_ROUTES } from './routes/gateway-commands';

/**
 * The REST API as one table: each documented `/v1` path runs one GraphQL operation in-process.
 * `...XFields` spreads select every plain field of type X (fragments generated from the schema).
 *
 * Variables come from the request by name: path `{id}` -> `$id`, `$input` <- the JSON body, any other variable
 * <- the query string in snake_case (`$first` <- `limit`, `$after` <- `cursor`). A connection result becomes the
 * list envelope. Nothing else happens here.
 */
export interface Route {
  method: 'get' | 'post' | 'delete';
  path: string;
  summary: string;
  tag: string;
  document: string;
  /** Success status; default 200. */
  status?: number;
  /** `admin`: the operator token (ADMIN_TOKEN); default: a merchant secret key. */
  auth?: 'merchant' | 'admin';
  /** Accepts `Idempotency-Key` (docs/api.md): the header becomes the document's `$idempotencyKey`. */
  idempotent?: boolean;
  /** A catalog read: its answer is reused while the merchant's catalog version is unchanged (src/core/read-cache.ts). */
  cache?: 'catalog';
  /**
   * Fields of the root field's answer (written directly in its selection) whose values the service may share
   * between requests, unchanged (src/core/read-cache.ts `shareAnswer`): each is rendered on its own, once per such
   * value, and the REST text reused (rest-shim/compile.ts, router.ts). The answer is the same either way.
   */
  shared?: string[];
  /** 409 codes the operation can answer besides `idempotency_key_in_use` (documented in the OpenAPI document). */
  conflicts?: ErrorCode[];
  /** Calls the merchant's payment gateway, so it can answer 502 `gateway_unavailable` / `gateway_rejected`. */
  gateway?: boolean;
  /**
   * The answer is a file of this media type (e.g. `application/pdf`), not JSON: the document selects one object
   * `{ filename contentType base64 }`, whose decoded bytes are sent with its Content-Type and an inline
   * Content-Disposition.
   */
  binary?: string;
}

const PRODUCT_TREE =
  '...ProductFields plans { ...PlanFields defaultPrice { ...PriceFields } usageRates { ...UsageRateFields } }';
const PLAN_TREE =
  '...PlanFields prices { ...PriceFields } defaultPrice { ...PriceFields } usageRates { ...UsageRateFields }';
const PAGE = 'pageInfo { hasNextPage endCursor }';

// Webhooks and the test clock (src/modules/webhooks, src/modules/test-clock)
const DELIVERY = '...WebhookDeliveryFields attemptLog { ...WebhookDeliveryAttemptFields }';
const WEBHOOK_ROUTES: Route[] = [
  {
    method: 'post',
    path: '/webhooks/endpoints',
    tag: 'Webhooks',
    status: 201,
    summary:
      'Register a webhook endpoint (url, mode, optional enabled_events, description). The answer shows its whsec_ secret this once.',
    document:
      'mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ...CreatedWebhookEndpointFields } }',
  },
  {
    method: 'get',
    path: '/webhooks/endpoints',
    tag: 'Webhooks',
    summary: "List this mode's webhook endpoints, newest first.",
    document: `query($first: Int, $after: String) { webhookEndpoints(first: $first, after: $after) { edges { node { ...WebhookEndpointFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/webhooks/endpoints/{id}',
    tag: 'Webhooks',
    summary: 'Retrieve a webhook endpoint.',
    document: 'query($id: ID!) { webhookEndpoint(id: $id) { ...WebhookEndpointFields } }',
  },
  {
    method: 'post',
    path: '/webhooks/endpoints/{id}/toggle',
    tag: 'Webhooks',
    summary: 'Enable or disable an endpoint: body {"enabled": bool}, or no body to flip it.',
    document:
      'mutation($id: ID!, $enabled: Boolean) { toggleWebhookEndpoint(id: $id, enabled: $enabled) { ...WebhookEndpointFields } }',
  },
  {
    method: 'post',
    path: '/webhooks/endpoints/{id}/roll-secret',
    tag: 'Webhooks',
    summary: 'Issue a new signing secret (shown this once); the previous one also signs for 24 hours.',
    document: 'mutation($id: ID!) { rollWebhookEndpointSecret(id: $id) { ...CreatedWebhookEndpointFields } }',
  },
  {
    method: 'get',
    path: '/webhooks/deliveries',
    tag: 'Webhooks',
    summary: 'The delivery log, newest first (filters: endpoint_id, status), with every attempt.',
    document: `query($first: Int, $after: String, $endpointId: ID, $status: WebhookDeliveryStatus) {
      webhookDeliveries(first: $first, after: $after, endpointId: $endpointId, status: $status) { edges { node { ${DELIVERY} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/webhooks/deliveries/{id}',
    tag: 'Webhooks',
    summary: 'Retrieve a delivery with every attempt.',
    document: `query($id: ID!) { webhookDelivery(id: $id) { ${DELIVERY} } }`,
  },
  {
    method: 'post',
    path: '/webhooks/deliveries/{id}/retry',
    tag: 'Webhooks',
    conflicts: ['invalid_state_transition'],
    summary: 'Send a delivery again now.',
    document: `mutation($id: ID!) { retryWebhookDelivery(id: $id) { ${DELIVERY} } }`,
  },
  {
    method: 'post',
    path: '/webhooks/trigger-test',
    tag: 'Webhooks',
    status: 202,
    summary:
      "Send a simulated event of a kind (type, default payment.succeeded) to the merchant's enabled test endpoints that take it (optional endpoint_id). Test mode only.",
    document: `mutation($endpointId: ID, $type: String) { triggerTestWebhook(endpointId: $endpointId, type: $type) { eventId type deliveries { ${DELIVERY} } } }`,
  },
  {
    method: 'delete',
    path: '/webhooks/endpoints/{id}',
    tag: 'Webhooks',
    summary: 'Delete a webhook endpoint; its pending deliveries fail.',
    document: 'mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { ...DeletedObjectFields } }',
  },
  {
    method: 'get',
    path: '/test-clock',
    tag: 'Test clock',
    summary: "The merchant's test-mode time (test mode only).",
    document: '{ testClock { ...TestClockStateFields } }',
  },
  {
    method: 'post',
    path: '/test-clock/advance',
    tag: 'Test clock',
    summary:
      'Move the test clock forward ({"seconds": n} or {"to": ISO}), at most 366 days per call; answers once every piece of work due by then is done. ' +
      'A client that leaves (or a service that stops) ends it early at a consistent point (advance_target, advance_interrupted_at); the next advance resumes it.',
    document:
      'mutation($seconds: Int, $to: DateTimeISO) { advanceTestClock(seconds: $seconds, to: $to) { ...TestClockStateFields } }',
  },
];

export const routes: Route[] = [
  // Operator
  {
    method: 'post',
    path: '/admin/merchants',
    tag: 'Operator',
    status: 201,
    auth: 'admin',
    summary: 'Onboard a merchant (operator token). The answer holds its secret keys, shown this once.',
    document:
      'mutation($input: CreateMerchantInput!) { createMerchant(input: $input) { ...CreatedMerchantFields apiKeys { test live } } }',
  },
  {
    method: 'post',
    path: '/admin/merchants/{id}/api-keys/roll',
    tag: 'Operator',
    auth: 'admin',
    summary:
      "Roll a merchant's secret key for one mode (operator token), e.g. when the merchant lost it: the answer holds the new key, shown this once; the old one stops after grace_seconds (default 0).",
    document:
      'mutation($id: ID!, $input: RollMerchantApiKeyInput!) { rollMerchantApiKey(id: $id, input: $input) { ...RolledApiKeyFields } }',
  },
  {
    method: 'post',
    path: '/api-keys/roll',
    tag: 'Merchant',
    summary: "Roll this mode's secret key: a new key is issued; the old one stops after grace_seconds (default 0).",
    document: 'mutation($graceSeconds: Int) { rollApiKey(graceSeconds: $graceSeconds) { ...RolledApiKeyFields } }',
  },
  // Catalog
  {
    method: 'post',
    path: '/product-families',
    tag: 'Catalog',
    status: 201,
    summary: 'Create a product family.',
    document:
      'mutation($input: CreateProductFamilyInput!) { createProductFamily(input: $input) { ...ProductFamilyFields } }',
  },
  {
    method: 'get',
    path: '/product-families',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'List product families, newest first.',
    document: `query($first: Int, $after: String) { productFamilies(first: $first, after: $after) { edges { node { ...ProductFamilyFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/product-families/{id}',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'Retrieve a product family.',
    document: 'query($id: ID!) { productFamily(id: $id) { ...ProductFamilyFields } }',
  },
  {
    method: 'post',
    path: '/products',
    tag: 'Catalog',
    status: 201,
    summary: 'Create a product.',
    document: `mutation($input: CreateProductInput!) { createProduct(input: $input) { ${PRODUCT_TREE} } }`,
  },
  {
    method: 'get',
    path: '/products',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'List products, newest first, with their plans and default prices.',
    document: `query($first: Int, $after: String, $status: ProductStatus, $type: ProductType) {
      products(first: $first, after: $after, status: $status, type: $type) { edges { node { ${PRODUCT_TREE} } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/products/{id}',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'Retrieve a product with its plans and default prices.',
    document: `query($id: ID!) { product(id: $id) { ${PRODUCT_TREE} } }`,
  },
  {
    method: 'post',
    path: '/products/{id}',
    tag: 'Catalog',
    summary: "Update a product's name, description or status.",
    document: `mutation($id: ID!, $input: UpdateProductInput!) { updateProduct(id: $id, input: $input) { ${PRODUCT_TREE} } }`,
  },
  {
    method: 'post',
    path: '/products/{id}/plans',
    tag: 'Catalog',
    status: 201,
    summary: 'Create a plan of a product.',
    document: `mutation($id: ID!, $input: CreatePlanInput!) { createPlan(productId: $id, input: $input) { ${PLAN_TREE} } }`,
  },
  {
    method: 'get',
    path: '/plans/{id}',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'Retrieve a plan with its prices and default price.',
    document: `query($id: ID!) { plan(id: $id) { ${PLAN_TREE} } }`,
  },
  {
    method: 'post',
    path: '/plans/{id}/prices',
    tag: 'Catalog',
    status: 201,
    summary:
      "Add a price to a plan. Prices are immutable; a default price replaces the plan's previous default in its currency.",
    document:
      'mutation($id: ID!, $input: CreatePriceInput!) { createPrice(planId: $id, input: $input) { ...PriceFields } }',
  },
  {
    method: 'post',
    path: '/plans/{id}/usage-rates',
    tag: 'Catalog',
    status: 201,
    conflicts: ['usage_rate_exists'],
    summary:
      'Price one usage event type of a plan: event_type, currency, unit_amount_decimal (subunits per unit, a decimal string). One per plan, event type and currency; immutable. Usage is billed in arrears when a period closes.',
    document:
      'mutation($id: ID!, $input: CreateUsageRateInput!) { createUsageRate(planId: $id, input: $input) { ...UsageRateFields } }',
  },
  {
    method: 'get',
    path: '/plans/{id}/usage-rates',
    tag: 'Catalog',
    cache: 'catalog',
    summary: "List a plan's usage rates, newest first.",
    document: `query($id: ID!, $first: Int, $after: String) { usageRates(planId: $id, first: $first, after: $after) { edges { node { ...UsageRateFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/prices/{id}',
    tag: 'Catalog',
    cache: 'catalog',
    summary: 'Retrieve a price.',
    document: 'query($id: ID!) { price(id: $id) { ...PriceFields } }',
  },
  // Provider connections
  {
    method: 'post',
    path: '/providers/connections',
    tag: 'Providers',
    status: 201,
    conflicts: ['provider_already_connected'],
    gateway: true,
    summary:
      'Connect a gateway account (Stripe: secret_key, webhook_secret; Razorpay: key_id, key_secret, webhook_secret).',
    document:
      'mutation($input: ConnectProviderInput!) { connectProvider(input: $input) { ...ProviderConnectionFields } }',
  },
  {
    method: 'get',
    path: '/providers/connections',
    tag: 'Providers',
    summary: "List this mode's gateway connections.",
    document: `query($first: Int, $after: String) { providerConnections(first: $first, after: $after) { edges { node { ...ProviderConnectionFields } } ${PAGE} } }`,
  },
  {
    method: 'delete',
    path: '/providers/connections/{id}',
    tag: 'Providers',
    conflicts: ['provider_in_use'],
    summary: 'Delete a connection (refused while a subscription that has not ended uses it).',
    document: 'mutation($id: ID!) { deleteProviderConnection(id: $id) { ...DeletedObjectFields } }',
  },
  // Payments
  {
    method: 'post',
    path: '/payments',
    tag: 'Payments',
    status: 201,
    idempotent: true,
    conflicts: ['provider_not_connected'],
    gateway: true,
    summary: 'Create a payment; the answer carries the hosted checkout_url.',
    document:
      'mutation($input: CreatePaymentInput!, $idempotencyKey: String) { createPayment(input: $input, idempotencyKey: $idempotencyKey) { ...PaymentFields } }',
  },
  {
    method: 'get',
    path: '/payments',
    tag: 'Payments',
    summary: 'List payments, newest first.',
    document: `query($first: Int, $after: String, $status: PaymentStatus, $customerId: ID) {
      payments(first: $first, after: $after, status: $status, customerId: $customerId) { edges { node { ...PaymentFields } } ${PAGE} } }`,
  },
  {
    method: 'get',
    path: '/payments/{id}',
    tag: 'Payments',
    summary: 'Retrieve a payment: its current status and details.',
    document: 'query($id: ID!) { payment(id: $id) { ...PaymentFields } }',
  },
  {
    method: 'post',
    path: '/payments/{id}/refund',
    tag: 'Payments',
    status: 201,
    idempotent: true,
    conflicts: ['payment_not_refundable', 'provider_not_connected'],
    gateway: true,
    summary: 'Refund a succeeded payment: the whole remainder when amount is omitted, or part of it.',
    document:
      'mutation($id: ID!, $input: RefundPaymentInput, $idempotencyKey: String) { refundPayment(id: $id, input: $input, idempotencyKey: $idempotencyKey) { ...RefundFields } }',
  },
  // Customers
  {
    method: 'get',
    path: '/customers',
    tag: 'Customers',
    summary: 'List customers, newest first (filter: email).',
    document: `query($first: Int, $after: String, $email: String) {
      customers(first: $first, after: $after, email: $email) { edges { node { ...CustomerFields lifetimeRevenue { currency amount } } } ${PAGE} } }`,
  },
  {
    method: 'post',
    path: '/customers',
    tag: 'Customers',
    status: 201,
    idempotent: true,
    conflicts: ['customer_exists'],
    summary:
      'Create a customer before any purchase (email required; name, phone, state_code, gstin, address, metadata).',
    document:
      'mutation($input: CreateCustomerInput!, $idempotencyKey: String) { createCustomer(input: $input, idempotencyKey: $idempotencyKey) { ...CustomerFields lifetimeRevenue { currency amount } } }',
  },
  {
    method: 'get',
    path: '/customers/{id}',
    tag: 'Customers',
    summary: 'Retrieve a customer with active subscription count and lifetime revenue.',
    document: 'query($id: ID!) { customer(id: $id) { ...CustomerFields lifetimeRevenue { currency amount } } }',
  },
  {
    method: 'post',
    path: '/customers/{id}',
    tag: 'Customers',
    conflicts: ['customer_exists'],
    summary: "Update a customer's details: an omitted field is kept, null clears it (email cannot be cleared).",
    document:
      'mutation($id: ID!, $input: UpdateCustomerInput!) { updateCustomer(id: $id, input: $input) { ...CustomerFields lifetimeRevenue { currency amount } } }',
  },
  // The customer portal (src/modules/portal)
  {
    method: 'post',
    path: '/portal/sessions',
    tag: 'Customers',
    status: 201,
    summary:
      'A link to the customer portal for one customer (customer_id, return_url): the url opens, for one hour, a page where that customer sees their subscriptions and documents, cancels at period end or undoes it, and changes plan.',
    document:
      'mutation($input: CreatePortalSessionInput!) { createPortalSession(input: $input) { ...PortalSessionFields } }',
  },
  ...SUBSCRIPTION_ROUTES,
  ...ENTITLEMENT_ROUTES,
  ...INVOICE_ROUTES,
  ...INVOICE_PDF_ROUTES,
  ...WEBHOOK_ROUTES,
  ...EXPERIMENT_ROUTES,
  ...OFFERING_ROUTES,
  ...COUPON_ROUTES,
  ...USAGE_ROUTES,
  ...ANALYTICS_ROUTES,
  ...ANALYTICS_RETENTION_ROUTES,
  ...GATEWAY_COMMAND_ROUTES,
];

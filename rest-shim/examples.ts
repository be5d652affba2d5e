/**
 * Request examples of the OpenAPI document (rest-shim/openapi.ts): for every operation with a JSON body, a body that
 * works, and for every path parameter a value; Swagger UI's "Try it out" at /docs sends them as they are.
 *
 * Where an example names an object (`demo('plan')`), the served document fills in the demo merchant's newest such
 * object when the service runs with its demo merchant (docs/api.md "Trying the API in /docs"), and a fixed example id
 * otherwise. `UNIQUE` becomes a fresh token on each serve, so codes and lookup keys do not collide when tried again.
 */

/** The objects of the demo merchant (test mode) an example can name; DEMO_QUERY finds each. */
export const DEMO_REFS = [
  'product_family',
  'product',
  /** A plan with a default price, the newest of the newest product that has one (subscribe to it). */
  'plan',
  /** The newest plan of the newest product with plans, priced or not (give it prices). */
  'new_plan',
  /** That plan's default price. */
  'price',
  /** Another plan with a default price of the same product as `subscription`'s plan (else `plan`). */
  'other_plan',
  'customer',
  /** The newest succeeded payment with something left to refund. */
  'payment',
  /** The newest active or paused subscription (pause, resume, change plan and cancel it, in that order). */
  'subscription',
  /** The newest gateway connection that is not this mode's default. */
  'connection',
  'webhook_endpoint',
  'webhook_delivery',
  /** The newest draft or running experiment (edit, start, then stop it). */
  'experiment',
  'offering',
  'package',
  'entitlement',
  'coupon',
  'paywall',
  'invoice',
  /** The newest coupon's code. */
  'coupon_code',
  /** The demo merchant itself (operator routes). */
  'merchant',
] as const;
export type DemoRef = (typeof DEMO_REFS)[number];

const TOKEN = /\{\{(demo\.(\w+)|unique)\}\}/g;

/** Where an example names the demo merchant's `ref`. */
export const demo = (ref: DemoRef): string => `{{demo.${ref}}}`;
/** A fresh token per serve of the document. */
export const UNIQUE = '{{unique}}';

/** What the document shows without a demo merchant: a fixed, well-formed id per kind of object. */
export const EXAMPLE_VALUES: Record<DemoRef, string> = Object.fromEntries(
  DEMO_REFS.map((ref, i) => [
    ref,
    ref === 'coupon_code' ? 'WELCOME10' : `0190a6f2-6a7e-7000-8000-${String(i + 1).padStart(12, '0')}`,
  ]),
) as Record<DemoRef, string>;

/** Replaces the tokens of a document's JSON text: `values` (missing ones: EXAMPLE_VALUES) and `unique`. */
export function fillExamples(text: string, values: Partial<Record<DemoRef, string>>, unique: string): string {
  return text.replace(TOKEN, (_all, _what, ref: string | undefined) =>
    ref === undefined ? unique : (values[ref as DemoRef] ?? EXAMPLE_VALUES[ref as DemoRef]).replace(/["\\]/g, ''),
  );
}

const SUCCESS_URL = 'https://shop.example/thanks';
const CANCEL_URL = 'https://shop.example/cart';

/**
 * The JSON body of every operation that takes one, by `METHOD /path` as in the route table (rest-shim/routes.ts);
 * test/rest/openapi.test.ts keeps it complete and each example valid for its operation's body.
 */
export const BODY_EXAMPLES: Record<string, Record<string, unknown>> = {
  'POST /admin/merchants': { name: 'Acme Learning', gstin: '29ABCDE1234F1ZW', reporting_currency: 'INR' },
  'POST /api-keys/roll': { grace_seconds: 86400 },
  // The live key: the test key /docs is authorized with keeps working.
  'POST /admin/merchants/{id}/api-keys/roll': { mode: 'live', grace_seconds: 86400 },
  'POST /customers': {
    email: `asha.${UNIQUE}@example.com`,
    name: 'Asha Rao',
    phone: '+919876543210',
    state_code: '29',
    address: '12 MG Road, Bengaluru 560001',
    metadata: { crm_id: 'C-1042' },
  },
  'POST /portal/sessions': { customer_id: demo('customer'), return_url: 'https://merchant.example/account' },
  'POST /customers/{id}': { name: 'Asha R.', address: '4th Floor, 80 Residency Road, Bengaluru 560025' },
  'POST /product-families': { name: 'Courses', description: 'Online courses' },
  'POST /products': {
    name: 'Pro',
    description: 'Every course, every month',
    type: 'subscription',
    product_family_id: demo('product_family'),
  },
  'POST /products/{id}': { description: 'Every course, every month, with certificates' },
  'POST /products/{id}/plans': { name: 'Pro monthly', billing_frequency: 'monthly', billing_interval: 1 },
  'POST /plans/{id}/prices': { currency: 'INR', amount: 49900, is_default: true },
  'POST /plans/{id}/usage-rates': { event_type: `api_calls_${UNIQUE}`, currency: 'INR', unit_amount_decimal: '0.5' },
  'POST /providers/connections': {
    provider: 'razorpay',
    credentials: { key_id: `rzp_test_${UNIQUE}`, key_secret: `secret_${UNIQUE}`, webhook_secret: `whsec_${UNIQUE}` },
    is_default: false,
  },
  'POST /payments': {
    amount: 49900,
    currency: 'INR',
    customer_email: 'asha@example.com',
    customer_name: 'Asha Rao',
    success_url: SUCCESS_URL,
    cancel_url: CANCEL_URL,
  },
  'POST /payments/{id}/refund': { amount: 100, reason: 'Goodwill credit' },
  'POST /subscriptions': {
    plan_id: demo('plan'),
    customer_email: 'asha@example.com',
    customer_name: 'Asha Rao',
    success_url: SUCCESS_URL,
    cancel_url: CANCEL_URL,
  },
  'POST /subscriptions/{id}/cancel': { cancel_at_period_end: true },
  'POST /subscriptions/{id}/change-plan': {
    plan_id: demo('other_plan'),
    proration_behavior: 'create_prorations',
    effective: 'now',
  },
  'POST /subscriptions/{id}/change-plan/preview': { plan_id: demo('other_plan'), effective: 'now' },
  'POST /subscriptions/{id}/mandate-setup': {
    success_url: 'https://shop.example/account',
    cancel_url: 'https://shop.example/account',
  },
  'POST /merchant/billing-settings': { max_retries: 3, mandate_afa_limit: 1500000 },
  'POST /entitlements': { lookup_key: `certificates_${UNIQUE}`, name: 'Certificates' },
  'POST /entitlements/{id}/products': { product_ids: [demo('product')] },
  'POST /merchant/tax-settings': {
    gstin: '29ABCDE1234F1ZW',
    state_code: '29',
    tax_rate_bps: 1800,
    sac_code: '999293',
    e_invoicing: true,
  },
  'POST /invoices/{id}/e-invoice/cancel': { reason: 'data_entry_mistake', remark: 'Wrong GSTIN of the recipient' },
  'POST /webhooks/endpoints': {
    url: 'https://shop.example/webhooks/cadence',
    mode: 'test',
    description: 'Shop backend',
  },
  'POST /webhooks/endpoints/{id}/toggle': { enabled: true },
  'POST /webhooks/trigger-test': { type: 'payment.succeeded', endpoint_id: demo('webhook_endpoint') },
  'POST /test-clock/advance': { seconds: 3600 },
  'POST /experiments': {
    name: `Annual first ${UNIQUE}`,
    variants: [
      { key: 'control', name: 'Current', offering_id: demo('offering'), traffic_percent: 50, is_control: true },
      { key: 'annual', name: 'Annual first', offering_id: demo('offering'), traffic_percent: 50 },
    ],
  },
  'POST /experiments/{id}': { name: 'Annual first, round 2' },
  'POST /offerings/resolve': { customer_id: demo('customer'), attributes: { country: 'IN', platform: 'web' } },
  'POST /offerings': { lookup_key: `default_${UNIQUE}`, name: 'Default offering', is_current: true },
  'POST /offerings/{id}/packages': { package_id: demo('package'), position: 0 },
  'POST /packages': { lookup_key: `monthly_${UNIQUE}`, name: 'Monthly', description: 'Billed every month' },
  'POST /packages/{id}/products': { product_ids: [demo('product')] },
  'POST /paywalls': {
    name: 'Simple paywall',
    offering_id: demo('offering'),
    template: 'simple',
    config: { title: 'Go Pro', cta: 'Start now' },
  },
  'POST /coupons': { code: `WELCOME${UNIQUE}`, name: 'Welcome 10%', percent_off: 10, duration: 'once' },
  'POST /coupons/validate': { code: demo('coupon_code'), plan_id: demo('plan') },
  'POST /usage/events': { subscription_id: demo('subscription'), event_type: 'api_calls', quantity: 120, unit: 'call' },
  'POST /usage/events/batch': {
    events: [
      { subscription_id: demo('subscription'), event_type: 'api_calls', quantity: 40, unit: 'call' },
      { subscription_id: demo('subscription'), event_type: 'api_calls', quantity: 2.5, unit: 'call' },
    ],
  },
};

/** The object a path's parameter names (every method of the path), by path as in the route table. */
export const PARAM_EXAMPLES: Record<string, Record<string, string>> = {
  '/product-families/{id}': { id: demo('product_family') },
  '/products/{id}': { id: demo('product') },
  '/products/{id}/plans': { id: demo('product') },
  '/plans/{id}': { id: demo('plan') },
  '/plans/{id}/prices': { id: demo('new_plan') },
  '/plans/{id}/usage-rates': { id: demo('new_plan') },
  '/prices/{id}': { id: demo('price') },
  '/providers/connections/{id}': { id: demo('connection') },
  '/payments/{id}': { id: demo('payment') },
  '/payments/{id}/refund': { id: demo('payment') },
  '/admin/merchants/{id}/api-keys/roll': { id: demo('merchant') },
  '/customers/{id}': { id: demo('customer') },
  '/subscriptions/{id}': { id: demo('subscription') },
  '/subscriptions/{id}/events': { id: demo('subscription') },
  '/subscriptions/{id}/pause': { id: demo('subscription') },
  '/subscriptions/{id}/resume': { id: demo('subscription') },
  '/subscriptions/{id}/cancel': { id: demo('subscription') },
  '/subscriptions/{id}/change-plan': { id: demo('subscription') },
  '/subscriptions/{id}/change-plan/preview': { id: demo('subscription') },
  '/subscriptions/{id}/scheduled-change': { id: demo('subscription') },
  '/subscriptions/{id}/mandate-setup': { id: demo('subscription') },
  '/subscriptions/{id}/scheduled-cancellation': { id: demo('subscription') },
  '/subscriptions/customer/{customer_id}/entitlements': { customer_id: demo('customer') },
  '/entitlements/{id}': { id: demo('entitlement') },
  '/entitlements/{id}/products': { id: demo('entitlement') },
  '/invoices/{id}': { id: demo('invoice') },
  '/invoices/{id}/pdf': { id: demo('invoice') },
  '/invoices/{id}/e-invoice/retry': { id: demo('invoice') },
  '/invoices/{id}/e-invoice/cancel': { id: demo('invoice') },
  '/webhooks/endpoints/{id}': { id: demo('webhook_endpoint') },
  '/webhooks/endpoints/{id}/toggle': { id: demo('webhook_endpoint') },
  '/webhooks/endpoints/{id}/roll-secret': { id: demo('webhook_endpoint') },
  '/webhooks/deliveries/{id}': { id: demo('webhook_delivery') },
  '/webhooks/deliveries/{id}/retry': { id: demo('webhook_delivery') },
  '/experiments/{id}': { id: demo('experiment') },
  '/experiments/{id}/start': { id: demo('experiment') },
  '/experiments/{id}/stop': { id: demo('experiment') },
  '/experiments/{id}/results': { id: demo('experiment') },
  '/offerings/{id}': { id: demo('offering') },
  '/offerings/{id}/packages': { id: demo('offering') },
  '/offerings/{id}/make-current': { id: demo('offering') },
  '/packages/{id}': { id: demo('package') },
  '/packages/{id}/products': { id: demo('package') },
  '/paywalls/{id}': { id: demo('paywall') },
  '/coupons/{id}': { id: demo('coupon') },
};

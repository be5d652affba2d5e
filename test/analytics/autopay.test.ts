import crypto from 'node:crypto';
import { TestMerchant, useHarness } from '../harness';
import { checkoutForm, CheckoutInstrument, submitCheckout } from '../harness/checkout';
import { connect, Connected, postEvent, ProviderName, signedHeaders } from '../payments/helpers';
import { createSubscription, ok, recurringPlan, sandboxEventsAbout } from '../subscriptions/helpers';

/**
 * UPI autopay analytics (docs/analytics.md `GET /analytics/autopay`, GraphQL `autopay`): mandate checkouts at both
 * sandbox gateways with UPI (banks from the VPA handle), cards (issuer from the BIN or the form), e-mandates (the bank
 * picked) and declines; the answer computed by hand; a replayed or re-sent webhook counted once; a checkout cancelled
 * without an attempt not counted; the window in merchant time; tenancy.
 */

const h = useHarness();
jest.setTimeout(120_000);

const DAY = 86_400_000;

interface Attempt {
  provider: ProviderName;
  instrument: CheckoutInstrument;
  outcome?: 'success' | 'failure' | 'cancel';
  trial?: boolean;
}

/**
 * The mandate checkouts, and what each must record (by hand):
 *  #  gateway   instrument                          outcome        method    bank    status      reason
 *  1  stripe    card 4242 4242 4242 4242 (BIN HDFC)  success        card      HDFC    authorized
 *  2  stripe    UPI asha@okicici                     success        upi       ICICI   authorized
 *  3  stripe    card 4000 0000 0000 0002 (BIN ICICI) declined       card      ICICI   failed      card_declined
 *  4  stripe    card, cancelled at the page          (no attempt)
 *  5  razorpay  UPI ravi@okhdfcbank                  success        upi       HDFC    authorized
 *  6  razorpay  UPI declined@sandbox                 declined       upi       (none)  failed      card_declined
 *  7  razorpay  e-mandate SBI                        success        emandate  SBI     authorized
 *  8  razorpay  e-mandate HDFC                       failure        emandate  HDFC    failed      payment_failed
 *  9  razorpay  card 5105 1051 0510 5100, a trial    success        card      SBI     authorized
 * 10  razorpay  UPI, cancelled at the page           (no attempt)
 * 11  razorpay  card 4111 1111 1111 1111, bank KOTAK  success       card      KOTAK   authorized  (the form's bank wins)
 */
const ATTEMPTS: Attempt[] = [
  { provider: 'stripe', instrument: { method: 'card' } },
  { provider: 'stripe', instrument: { method: 'upi', vpa: 'asha@okicici' } },
  { provider: 'stripe', instrument: { method: 'card', card_number: '4000000000000002' } },
  { provider: 'stripe', instrument: { method: 'card' }, outcome: 'cancel' },
  { provider: 'razorpay', instrument: { method: 'upi', vpa: 'ravi@okhdfcbank' } },
  { provider: 'razorpay', instrument: { method: 'upi', vpa: 'declined@sandbox' } },
  { provider: 'razorpay', instrument: { method: 'emandate', bank: 'SBI' } },
  { provider: 'razorpay', instrument: { method: 'emandate', bank: 'HDFC' }, outcome: 'failure' },
  { provider: 'razorpay', instrument: { method: 'card', card_number: '5105105105105100' }, trial: true },
  { provider: 'razorpay', instrument: { method: 'upi', vpa: 'asha@oksbi' }, outcome: 'cancel' },
  { provider: 'razorpay', instrument: { method: 'card', card_number: '4111111111111111', bank: 'KOTAK' } },
];

/** The answer for ATTEMPTS, by hand: 9 attempts (4 and 10 made none), 6 authorised (1, 2, 5, 7, 9, 11). */
const EXPECTED = {
  attempts: 9,
  authorized: 6,
  failed: 3,
  success_rate: 6 / 9,
  by_method: [
    { method: 'card', attempts: 4, authorized: 3, success_rate: 3 / 4 }, // 1, 3, 9, 11
    { method: 'upi', attempts: 3, authorized: 2, success_rate: 2 / 3 }, // 2, 5, 6
    { method: 'emandate', attempts: 2, authorized: 1, success_rate: 1 / 2 }, // 7, 8
  ],
  failure_reasons: [
    { reason: 'card_declined', count: 2 }, // 3, 6
    { reason: 'payment_failed', count: 1 }, // 8
  ],
  banks: [
    { bank: 'HDFC', attempts: 3, authorized: 2, success_rate: 2 / 3 }, // 1, 5, 8
    { bank: 'ICICI', attempts: 2, authorized: 1, success_rate: 1 / 2 }, // 2, 3
    { bank: 'SBI', attempts: 2, authorized: 2, success_rate: 1 }, // 7, 9
    { bank: 'KOTAK', attempts: 1, authorized: 1, success_rate: 1 }, // 11
    { bank: null, attempts: 1, authorized: 0, success_rate: 0 }, // 6: the @sandbox handle names no bank
  ],
  // No renewal falls due within 48 hours yet: nothing announced (test/subscriptions/pre-debit.test.ts counts them).
  pre_debit_notices: { sent: 0, renewals: 0, retries: 0, collections: 0, declined: 0 },
  authentication: { required: 0, completed: 0 },
};

const EMPTY = {
  attempts: 0,
  authorized: 0,
  failed: 0,
  success_rate: null,
  by_method: [],
  failure_reasons: [],
  banks: [],
  pre_debit_notices: { sent: 0, renewals: 0, retries: 0, collections: 0, declined: 0 },
  authentication: { required: 0, completed: 0 },
};

let m: TestMerchant;
const conns = {} as Record<ProviderName, Connected>;
const subs: any[] = [];
let clockAtCheckouts: Date;

beforeAll(async () => {
  m = await h.merchant();
  conns.stripe = await connect(m.test, 'stripe');
  conns.razorpay = await connect(m.test, 'razorpay');
  const { plan } = await recurringPlan(m.test);
  const { plan: trialPlan } = await recurringPlan(m.test, { trial_period_days: 7 });
  // The checkouts happen 10 days ahead of wall time on the test clock: attempts are recorded in merchant time.
  clockAtCheckouts = await h.clock.advance(m, 10 * 86_400);
  for (const a of ATTEMPTS) {
    const sub = await createSubscription(m.test, a.trial ? trialPlan.id : plan.id, { provider: a.provider });
    const r = await submitCheckout(sub.checkout_url, checkoutForm(a.instrument, a.outcome));
    expect(r.status).toBe(303);
    subs.push(await ok(m.test.get(`/subscriptions/${sub.id}`)));
  }
});

it('the checkouts moved their subscriptions as the gateways said', () => {
  expect(subs.map((s) => s.status)).toEqual([
    'active',
    'active',
    'cancelled',
    'cancelled',
    'active',
    'cancelled',
    'active',
    'cancelled',
    'trialing',
    'cancelled',
    'active',
  ]);
});

it("counts attempts, rates, methods, banks and failure reasons over the default window (30 days to the merchant's now)", async () => {
  const r = await ok(m.test.get('/analytics/autopay'));
  expect(r).toEqual({ ...EXPECTED, from: expect.any(String), to: expect.any(String) });
  // The default window ends at the merchant's now (the test clock), 30 days long.
  const to = new Date(r.to).getTime();
  expect(to).toBeGreaterThanOrEqual(clockAtCheckouts.getTime());
  expect(to - new Date(r.from).getTime()).toBe(30 * DAY);
});

it('answers the same through GraphQL, methods as enum values', async () => {
  const r = await m.test
    .gql(`{ autopay { attempts authorized failed successRate byMethod { method attempts authorized successRate }
    failureReasons { reason count } banks { bank attempts authorized successRate } } }`);
  expect(r.errors).toBeUndefined();
  expect(r.data.autopay).toEqual({
    attempts: EXPECTED.attempts,
    authorized: EXPECTED.authorized,
    failed: EXPECTED.failed,
    successRate: EXPECTED.success_rate,
    byMethod: EXPECTED.by_method.map((x) => ({
      method: x.method.toUpperCase(),
      attempts: x.attempts,
      authorized: x.authorized,
      successRate: x.success_rate,
    })),
    failureReasons: EXPECTED.failure_reasons,
    banks: EXPECTED.banks.map((x) => ({
      bank: x.bank,
      attempts: x.attempts,
      authorized: x.authorized,
      successRate: x.success_rate,
    })),
  });
});

it('records each attempt once: a webhook re-posted as it was, or re-sent under a new event id, counts nothing more', async () => {
  for (const i of [0, 4, 5, 8]) {
    const sub = subs[i];
    const provider = ATTEMPTS[i].provider;
    const delivered = (await sandboxEventsAbout(h.app, sub)).filter((e) => e.delivered);
    expect(delivered.length).toBeGreaterThan(0);
    for (const e of delivered) {
      const same = await postEvent(conns[provider].connection.webhook_url, {
        payload: e.body,
        headers: signedHeaders(provider, conns[provider].webhookSecret, e.body, e.id),
      });
      expect(same.body).toEqual({ received: true, duplicate: true });
      // The gateway sending it again under another event id: a new event, the same checkout.
      const id =
        provider === 'stripe'
          ? `evt_${crypto.randomBytes(12).toString('hex')}`
          : `evt_${crypto.randomBytes(7).toString('hex')}`;
      const body = provider === 'stripe' ? JSON.stringify({ ...JSON.parse(e.body), id }) : e.body;
      const again = await postEvent(conns[provider].connection.webhook_url, {
        payload: body,
        headers: signedHeaders(provider, conns[provider].webhookSecret, body, id),
      });
      expect(again.status).toBe(200);
    }
  }
  expect(await ok(m.test.get('/analytics/autopay'))).toMatchObject(EXPECTED);
  const rows = await h.app.orm.em
    .getConnection()
    .execute<{ n: number }[]>('select count(*)::int as n from mandate_attempts where merchant_id = ?', [m.id]);
  expect(rows[0].n).toBe(EXPECTED.attempts);
});

it('windows are (from, to] in merchant time: attempts are dated by the test clock', async () => {
  const wallNow = Date.now();
  // A window around wall time ends before the test clock's checkouts.
  const wall = await ok(
    m.test.get(
      `/analytics/autopay?from=${new Date(wallNow - DAY).toISOString()}&to=${new Date(wallNow + DAY).toISOString()}`,
    ),
  );
  expect(wall).toMatchObject(EMPTY);
  const around = await ok(
    m.test.get(
      `/analytics/autopay?from=${new Date(clockAtCheckouts.getTime() - 1000).toISOString()}&to=${new Date(clockAtCheckouts.getTime() + DAY).toISOString()}`,
    ),
  );
  expect(around).toMatchObject({ attempts: EXPECTED.attempts, authorized: EXPECTED.authorized });
  expect(around.from).toBe(new Date(clockAtCheckouts.getTime() - 1000).toISOString());
  // A window that starts after the checkouts has none.
  const later = await ok(
    m.test.get(
      `/analytics/autopay?from=${new Date(clockAtCheckouts.getTime() + DAY).toISOString()}&to=${new Date(clockAtCheckouts.getTime() + 2 * DAY).toISOString()}`,
    ),
  );
  expect(later).toMatchObject(EMPTY);
});

it('validates from and to', async () => {
  const bad = await m.test.get('/analytics/autopay?from=yesterday');
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'from' });
  const reversed = await m.test.get('/analytics/autopay?from=2026-02-01&to=2026-01-01');
  expect(reversed.status).toBe(400);
  expect(reversed.body.error).toMatchObject({ code: 'parameter_invalid' });
  const unknown = await m.test.get('/analytics/autopay?bogus=1');
  expect(unknown.status).toBe(400);
});

it("is the merchant's and the mode's own", async () => {
  const other = await h.merchant();
  expect(await ok(other.test.get('/analytics/autopay'))).toMatchObject(EMPTY);
  expect(await ok(m.live.get('/analytics/autopay'))).toMatchObject(EMPTY);
  const g = await other.test.gql('{ autopay { attempts successRate byMethod { method } banks { bank } } }');
  expect(g.data.autopay).toEqual({ attempts: 0, successRate: null, byMethod: [], banks: [] });
});

it('takes currency: the attempts of subscriptions billed in it (every currency when omitted)', async () => {
  const bad = await m.test.get('/analytics/autopay?currency=XYZ');
  expect([bad.status, bad.body.error?.code, bad.body.error?.param]).toEqual([400, 'parameter_invalid', 'currency']);
  // Every checkout above was for an INR subscription; a USD one now: a card declined at Stripe.
  const { plan } = await recurringPlan(m.test, {}, { currency: 'USD', amount: 1500 });
  const sub = await createSubscription(m.test, plan.id, { provider: 'stripe' });
  expect(sub.currency).toBe('USD');
  expect(
    (await submitCheckout(sub.checkout_url, checkoutForm({ method: 'card', card_number: '4000000000000002' }))).status,
  ).toBe(303);

  const usd = { attempts: 1, authorized: 0, failed: 1, success_rate: 0 };
  expect(await ok(m.test.get('/analytics/autopay?currency=usd'))).toMatchObject({
    ...usd,
    failure_reasons: [{ reason: 'card_declined', count: 1 }],
  });
  expect(await ok(m.test.get('/analytics/autopay?currency=INR'))).toEqual({
    ...EXPECTED,
    from: expect.any(String),
    to: expect.any(String),
  });
  expect(await ok(m.test.get('/analytics/autopay?currency=EUR'))).toMatchObject(EMPTY);
  expect(await ok(m.test.get('/analytics/autopay'))).toMatchObject({
    attempts: EXPECTED.attempts + 1,
    authorized: EXPECTED.authorized,
  });
  const g = await m.test.gql('{ autopay(currency: "usd") { attempts failed } }');
  expect(g.data.autopay).toEqual({ attempts: 1, failed: 1 });
});

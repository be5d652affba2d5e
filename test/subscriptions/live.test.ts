import { Client_, eventually, sleep, TestMerchant, useHarness } from '../harness';
import { useWsClients } from '../harness/ws';
import { connect } from '../payments/helpers';
import { authorise, createSubscription, ok, recurringPlan, startSecondApp } from './helpers';

/**
 * GraphQL subscriptions subscriptionUpdated(id) and subscriptionsUpdated over graphql-ws: every change (create,
 * authorisation, pause, resume, renewal by the test clock) reaches the subscriber, only its own merchant's and mode's,
 * also when another process on the same database made the change.
 */

const h = useHarness();
jest.setTimeout(60_000);
let a: TestMerchant;
let b: TestMerchant;

beforeAll(async () => {
  a = await h.merchant();
  b = await h.merchant();
  await connect(a.test, 'stripe');
  await connect(a.live, 'razorpay');
  await connect(b.test, 'razorpay');
});
const wsClient = useWsClients(h);

const FIELDS = 'id status cyclesCompleted';

interface Sub {
  events: { id: string; status: string; cyclesCompleted: number }[];
  errors: unknown[];
}

async function subscribe(
  baseUrl: string,
  key: string,
  field: 'subscriptionUpdated' | 'subscriptionsUpdated',
  id?: string,
): Promise<Sub> {
  const sub: Sub = { events: [], errors: [] };
  const client = wsClient(key, { baseUrl });
  const query =
    field === 'subscriptionUpdated'
      ? `subscription($id: ID) { subscriptionUpdated(id: $id) { ${FIELDS} } }`
      : `subscription { subscriptionsUpdated { ${FIELDS} } }`;
  client.subscribe(
    { query, variables: id ? { id } : {} },
    {
      next: (v) => (v.errors ? sub.errors.push(...v.errors) : sub.events.push((v.data as any)[field])),
      error: (e) => sub.errors.push(e),
      complete: () => undefined,
    },
  );
  await sleep(400);
  return sub;
}

const statuses = (s: Sub, id: string) =>
  s.events.filter((e) => e.id === id).map((e) => `${e.status}/${e.cyclesCompleted}`);
/**
 * The states a subscriber saw, repeats collapsed: the gateway echoes a pause or resume (a notice with nothing new),
 * and a Stripe checkout reports the mandate and the first charge as two events (ACTIVE/0, then ACTIVE/1).
 */
const seen = (s: Sub, id: string) => statuses(s, id).filter((x, i, all) => x !== all[i - 1] && x !== 'ACTIVE/0');

describe('subscriptionUpdated / subscriptionsUpdated', () => {
  it('fire on every change of the subscription, to its own merchant and mode only', async () => {
    const all = await subscribe(h.app.url, a.keys.test, 'subscriptionsUpdated');
    const allById = await subscribe(h.app.url, a.keys.test, 'subscriptionUpdated');
    const live = await subscribe(h.app.url, a.keys.live, 'subscriptionsUpdated');
    const other = await subscribe(h.app.url, b.keys.test, 'subscriptionsUpdated');

    const { plan } = await recurringPlan(a.test);
    const created = await createSubscription(a.test, plan.id);
    await eventually(() => statuses(all, created.id).includes('CREATED/0'), 5000, 'the create notice');
    const one = await subscribe(h.app.url, a.keys.test, 'subscriptionUpdated', created.id);
    const spy = await subscribe(h.app.url, b.keys.test, 'subscriptionUpdated', created.id); // B asks for A's by id
    const liveSpy = await subscribe(h.app.url, a.keys.live, 'subscriptionUpdated', created.id);

    const { subscription } = await authorise(a.test, created);
    await eventually(() => statuses(one, created.id).includes('ACTIVE/1'), 5000, 'the activation');
    await ok(a.test.post(`/subscriptions/${created.id}/pause`));
    await eventually(() => statuses(one, created.id).includes('PAUSED/1'), 5000, 'the pause');
    await ok(a.test.post(`/subscriptions/${created.id}/resume`));
    await eventually(() => statuses(one, created.id).at(-1) === 'ACTIVE/1', 5000, 'the resume');
    await h.clock.advance(a, new Date(new Date(subscription.current_period_end).getTime() + 1000));
    await eventually(() => statuses(one, created.id).includes('ACTIVE/2'), 5000, 'the renewal');

    // Another merchant's and the other mode's changes go to their own subscribers only.
    const { plan: bPlan } = await recurringPlan(b.test);
    const bSub = await createSubscription(b.test, bPlan.id);
    const { plan: lPlan } = await recurringPlan(a.live);
    const lSub = await createSubscription(a.live, lPlan.id);
    await eventually(
      () => statuses(other, bSub.id).length >= 1 && statuses(live, lSub.id).length >= 1,
      5000,
      'B and live notices',
    );
    await sleep(500); // anything misrouted would have arrived by now

    expect(seen(one, created.id)).toEqual(['ACTIVE/1', 'PAUSED/1', 'ACTIVE/1', 'ACTIVE/2']);
    expect(new Set(one.events.map((e) => e.id))).toEqual(new Set([created.id]));
    for (const s of [all, allById]) {
      expect(seen(s, created.id)).toEqual(['CREATED/0', 'ACTIVE/1', 'PAUSED/1', 'ACTIVE/1', 'ACTIVE/2']);
      expect(new Set(s.events.map((e) => e.id))).toEqual(new Set([created.id]));
    }
    expect(other.events.map((e) => e.id)).toEqual([bSub.id]);
    expect(live.events.map((e) => e.id)).toEqual([lSub.id]);
    expect(spy.events).toEqual([]);
    expect(liveSpy.events).toEqual([]);
    for (const s of [all, allById, one, live, other, spy, liveSpy]) expect(s.errors).toEqual([]);
  });
});

describe('across processes', () => {
  let second: Awaited<ReturnType<typeof startSecondApp>>;
  beforeAll(async () => {
    second = await startSecondApp(h.app, { worker: false });
  });
  afterAll(async () => {
    await second?.close();
  });

  it("a change made through another process reaches this one's subscribers", async () => {
    const { plan } = await recurringPlan(a.test);
    const { subscription } = await authorise(a.test, await createSubscription(a.test, plan.id));
    const here = await subscribe(h.app.url, a.keys.test, 'subscriptionUpdated', subscription.id);
    const hereAll = await subscribe(h.app.url, a.keys.test, 'subscriptionsUpdated');
    const there = new Client_(second.url, a.keys.test);
    expect((await ok(there.post(`/subscriptions/${subscription.id}/pause`))).status).toBe('paused');
    await eventually(
      () =>
        statuses(here, subscription.id).includes('PAUSED/1') && statuses(hereAll, subscription.id).includes('PAUSED/1'),
      5000,
      'the pause made elsewhere',
    );
    const created = await ok(
      there.post('/subscriptions', {
        plan_id: plan.id,
        customer_email: 'x@example.com',
        success_url: 'https://m.example/ok',
        cancel_url: 'https://m.example/no',
      }),
      201,
    );
    await eventually(() => statuses(hereAll, created.id).includes('CREATED/0'), 5000, 'the create made elsewhere');
    expect(here.errors).toEqual([]);
    expect(hereAll.errors).toEqual([]);
  });
});

import { eventually, useHarness } from '../harness';
import type { Client_, TestMerchant } from '../harness';
import { SandboxProcess, startSandboxProcess } from '../harness/process';
import { ADVANCE_TIMEOUT_FACTOR } from '../../src/gateways/transport';
import { connect, paymentBody, PROVIDERS, sandboxCredentials } from '../payments/helpers';
import { authorise, createSubscription, recurringPlan, subscriptionBody } from '../subscriptions/helpers';

/**
 * GATEWAY_TIMEOUT_MS bounds every gateway call, with the gateway frozen: a sandbox running as its own process is
 * stopped with SIGSTOP, so the kernel still accepts its TCP connections (and keeps the service's kept-alive ones open)
 * but nothing ever answers. Each request must answer 502 gateway_unavailable within about the timeout times the
 * number of gateway calls it makes in sequence, never the 120 s it once took.
 */
const TIMEOUT_MS = 2000;

let sandbox: SandboxProcess;
// The sandbox process first, then the service on it.
const h = useHarness(async () => {
  sandbox = await startSandboxProcess('cadence_test_gw');
  // A command left without an answer is read back from the gateway half a second later (PENDING_OUTCOME_GRACE_MS).
  return { sandboxUrl: sandbox.url, gatewayTimeoutMs: TIMEOUT_MS, pendingOutcomeGraceMs: 500 };
});

h.cleanup(() => sandbox?.stop());

const frozen = <T>(fn: () => Promise<T>) => sandbox.frozen(fn);

/** A POST with its time; the client gives up after 60 s (so a hang fails the assertion rather than the test's timeout). */
async function timedPost(c: Client_, path: string, body: unknown): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  try {
    const res = await fetch(`${c.baseUrl}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, ms: Date.now() - started };
  } catch (err) {
    return { status: 0, body: String(err), ms: Date.now() - started };
  }
}

describe.each(PROVIDERS)('%s: a frozen gateway', (provider) => {
  let m: TestMerchant;
  let planId: string;

  beforeAll(async () => {
    m = await h.merchant();
    await connect(m.test, provider);
    const catalog = await recurringPlan(m.test);
    planId = catalog.plan.id;
    // An active subscription (renews in a month) and a moved test clock, made while the gateway answers: the plan's
    // price is registered, and a create aligns the sandbox clock (an advance call) before its checkout.
    const sub = await createSubscription(m.test, planId, { provider });
    await authorise(m.test, sub);
    await h.clock.advance(m, 3600);
  }, 60_000);

  it('POST /v1/payments answers 502 gateway_unavailable within the timeout (1 gateway call)', async () => {
    const r = await frozen(() => timedPost(m.test, '/payments', paymentBody({ provider })));
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
    // One call: the checkout (payment link). Its timeout and some slack, not 120 s.
    expect(r.ms).toBeLessThan(TIMEOUT_MS + 3000);
  }, 90_000);

  // A create makes up to 3 gateway calls in sequence: the price's registration (first subscription at that amount),
  // the sandbox clock's catch-up (test clock moved; the plain bound), the checkout. The first unanswered one ends it.
  it('POST /v1/subscriptions answers 502 gateway_unavailable within a small multiple of the timeout (clock catch-up first)', async () => {
    const r = await frozen(() => timedPost(m.test, '/subscriptions', subscriptionBody(planId, { provider })));
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
    expect(r.ms).toBeLessThan(10_000);
  }, 90_000);

  it('POST /v1/subscriptions on a price never registered: 502 gateway_unavailable within the timeout (registration first)', async () => {
    const fresh = await recurringPlan(m.test, {}, { amount: 59900 });
    const r = await frozen(() => timedPost(m.test, '/subscriptions', subscriptionBody(fresh.plan.id, { provider })));
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
    expect(r.ms).toBeLessThan(10_000);
  }, 90_000);

  it('connecting to a frozen gateway answers 502 gateway_unavailable within the timeout (credential check first)', async () => {
    const other = await h.merchant();
    const r = await frozen(() =>
      timedPost(other.test, '/providers/connections', { provider, credentials: sandboxCredentials(provider, 'test') }),
    );
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
    expect(r.ms).toBeLessThan(TIMEOUT_MS + 3000);
  }, 90_000);

  // The gateway frozen mid-call: whether it carries the command out once it thaws is the gateway's business; either way
  // the service answers within the timeout, keeps the command pending, and ends up where the gateway is.
  it.each(['pause', 'cancel'] as const)(
    '%s: 502 gateway_unavailable within the timeout, pending, then what the gateway did',
    async (command) => {
      const sub = await authorise(m.test, await createSubscription(m.test, planId, { provider })).then(
        (x) => x.subscription,
      );
      const r = await frozen(() => timedPost(m.test, `/subscriptions/${sub.id}/${command}`, {}));
      expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
      expect(r.ms).toBeLessThan(TIMEOUT_MS + 3000);
      const view = async () =>
        (await m.test.gql(`query($id: ID!) { subscription(id: $id) { status pendingGatewayCommand } }`, { id: sub.id }))
          .data.subscription;
      const settled = await eventually(
        async () => {
          const v = await view();
          return v.pendingGatewayCommand === null ? v : null;
        },
        20_000,
        `the ${command} settled`,
      );
      // Where the gateway is now (its own database): the service followed it, by the gateway's event or its read-back.
      const atGateway = await sandbox.object(sub.provider_subscription_id);
      const expected =
        command === 'pause'
          ? atGateway.status === 'paused' || atGateway.pause_collection
            ? 'PAUSED'
            : 'ACTIVE'
          : atGateway.status === 'cancelled' || atGateway.status === 'canceled'
            ? 'CANCELLED'
            : 'ACTIVE';
      expect(settled.status).toBe(expected);
    },
    90_000,
  );

  it('a test-clock advance over a renewal answers 502 gateway_unavailable within the advance bound', async () => {
    // The renewal is the advance's first gateway work: one sandbox clock call (it would charge the renewal, so it has
    // the test-helper advance's bound, ADVANCE_TIMEOUT_FACTOR x the timeout: 10 s here), whose failure ends it.
    const r = await frozen(() => timedPost(m.test, '/test-clock/advance', { seconds: 40 * 86_400 }));
    expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 502, code: 'gateway_unavailable' });
    expect(r.ms).toBeGreaterThanOrEqual(ADVANCE_TIMEOUT_FACTOR * TIMEOUT_MS - 500);
    expect(r.ms).toBeLessThan(ADVANCE_TIMEOUT_FACTOR * TIMEOUT_MS + 3000);
    // The gateway back: the unfinished advance is resumed and renews.
    const again = await timedPost(m.test, '/test-clock/advance', { seconds: 0 });
    expect(again.status).toBe(200);
  }, 90_000);
});

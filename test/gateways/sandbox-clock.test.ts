import crypto from 'node:crypto';
import { createGateway, GatewayEvent, GatewayPort } from '../../src/gateways';
import type { Credentials } from '../../src/gateways/port';
import { sandboxAccountKey } from '../../src/gateways/sandbox';
import { SandboxEvent } from '../../src/gateways/sandbox/sandbox.entities';
import { submitCheckout } from '../harness';
import { useGatewaySandbox } from '../harness/sandbox';
import { ADAPTERS, AdapterProfile } from './adapters';

/**
 * The sandbox's clock per account (sandbox_clocks): advanceTestClock moves one account's clock and charges what falls
 * due on the way; the wall-clock ticker (chargeDueRenewals) charges every account by its own time.
 */
const env = useGatewaySandbox();
const DAY = 86_400_000;

describe.each(ADAPTERS)('$provider: per-account sandbox clocks', (profile: AdapterProfile) => {
  /** One sandbox account: its adapter, its webhook path on the shared receiver, its default price. */
  interface Account {
    credentials: Credentials;
    gw: GatewayPort;
    path: string;
    price: string;
    key: string;
  }
  const accounts: Account[] = [];
  async function account(): Promise<Account> {
    const credentials = profile.credentials();
    const gw = createGateway(profile.provider, credentials, { sandboxUrl: env.sandbox.url });
    const path = `/${profile.provider}/${accounts.length}`;
    await gw.registerWebhook(`${env.receiver.url}${path}`);
    const { providerPriceId: price } = await gw.registerPrice({
      priceId: crypto.randomUUID(),
      productName: 'Clocked',
      planName: 'Monthly',
      amount: 99900,
      currency: 'INR',
      frequency: 'monthly',
      interval: 1,
      idempotencyKey: crypto.randomUUID(),
    });
    const a = { credentials, gw, path, price, key: sandboxAccountKey(profile.provider, credentials) };
    accounts.push(a);
    return a;
  }
  /** Everything received since the last call, each event verified by its own account's adapter. */
  function events(): (GatewayEvent & { account: number })[] {
    return env.receiver.take().map((r) => {
      const i = accounts.findIndex((x) => x.path === r.path);
      return { ...accounts[i].gw.parseEvent(r.raw, r.headers), account: i };
    });
  }
  const now = (a: Account) => env.sandbox.sandbox.now(a.key);
  async function subscribe(a: Account, trialDays = 0): Promise<{ id: string; events: GatewayEvent[] }> {
    const c = await a.gw.createSubscriptionCheckout({
      subscriptionId: crypto.randomUUID(),
      providerPriceId: a.price,
      amount: 99900,
      currency: 'INR',
      setupFee: 0,
      trialDays,
      maxCycles: null,
      customer: { email: 'clock@example.com' },
      successUrl: 'https://merchant.example/ok',
      cancelUrl: 'https://merchant.example/cancel',
      idempotencyKey: crypto.randomUUID(),
    });
    await submitCheckout(c.checkoutUrl, { outcome: 'success' });
    const got = events();
    return { id: got[0].providerSubscriptionId!, events: got };
  }
  async function cancel(a: Account, id: string) {
    await a.gw.cancelSubscription(id, { atPeriodEnd: false });
    await env.sandbox.sandbox.settle();
    events();
  }

  it('advanceTestClock renews only the advanced account, in time order, each event at its due time; never backwards', async () => {
    const [a, b] = [await account(), await account()];
    const sa = await subscribe(a);
    const sb = await subscribe(b);
    const first = sa.events[1];
    const t0 = Date.now();

    // Three months on account a: three renewals in order, each at its period's start; account b is untouched.
    const to = new Date(first.periodEnd!.getTime() + 62 * DAY);
    await a.gw.advanceTestClock(to);
    const got = events();
    expect(got.every((e) => e.account === 0 && e.providerSubscriptionId === sa.id)).toBe(true);
    expect(got.map((e) => e.kind)).toEqual(['subscription.charged', 'subscription.charged', 'subscription.charged']);
    expect(got[0].periodStart).toEqual(first.periodEnd);
    for (let i = 1; i < got.length; i++) expect(got[i].periodStart).toEqual(got[i - 1].periodEnd);
    for (const e of got) expect(e.occurredAt).toEqual(e.periodStart);

    // a's clock reads `to` and runs on; b's is the wall clock.
    const nowA = await now(a);
    expect(nowA.getTime()).toBeGreaterThanOrEqual(to.getTime());
    expect(nowA.getTime() - to.getTime()).toBeLessThan(Date.now() - t0 + 1000);
    expect(Math.abs((await now(b)).getTime() - Date.now())).toBeLessThan(1000);
    expect(await b.gw.getSubscription(sb.id)).toMatchObject({ currentPeriodStart: sb.events[1].periodStart });

    // Back in time changes nothing.
    await a.gw.advanceTestClock(new Date(Date.now()));
    expect((await now(a)).getTime()).toBeGreaterThanOrEqual(to.getTime());
    expect(events()).toEqual([]);

    // A checkout on a starts its period on a's clock.
    const later = await subscribe(a);
    expect(later.events[1].periodStart!.getTime()).toBeGreaterThanOrEqual(Math.floor(to.getTime() / 1000) * 1000);

    for (const [x, id] of [
      [a, sa.id],
      [b, sb.id],
      [a, later.id],
    ] as const)
      await cancel(x, id);
  });

  it('renews the subscriptions due at one instant at once, each instant after the earlier ones; a failed delivery stays pending', async () => {
    const a = await account();
    /** n subscriptions checked out together (their periods end at one or two instants). */
    async function batch(n: number): Promise<string[]> {
      const checkouts = await Promise.all(
        Array.from({ length: n }, () =>
          a.gw.createSubscriptionCheckout({
            subscriptionId: crypto.randomUUID(),
            providerPriceId: a.price,
            amount: 99900,
            currency: 'INR',
            setupFee: 0,
            trialDays: 0,
            maxCycles: null,
            customer: { email: 'wave@example.com' },
            successUrl: 'https://merchant.example/ok',
            cancelUrl: 'https://merchant.example/cancel',
            idempotencyKey: crypto.randomUUID(),
          }),
        ),
      );
      await Promise.all(checkouts.map((c) => submitCheckout(c.checkoutUrl, { outcome: 'success' })));
      return [...new Set(events().map((e) => e.providerSubscriptionId!))];
    }
    const early = await batch(6);
    // A day later on a's clock: the second batch falls due a day after the first.
    await a.gw.advanceTestClock(new Date((await now(a)).getTime() + DAY));
    expect(events()).toEqual([]);
    const late = await batch(6);
    expect(new Set([...early, ...late]).size).toBe(12);

    // Slow answers, counted while in flight; every delivery of one early subscription fails.
    const refused = early[0];
    let inFlight = 0;
    let peak = 0;
    env.receiver.respond = async (r) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((done) => setTimeout(done, 25));
      inFlight--;
      return r.body.includes(refused) ? 500 : 200;
    };
    const target = new Date((await now(a)).getTime() + 32 * DAY);
    try {
      // A delivery the merchant keeps refusing fails the advance: it must not answer as if the merchant knew.
      await expect(a.gw.advanceTestClock(target)).rejects.toMatchObject({ code: 'gateway_unavailable' });
    } finally {
      env.receiver.respond = () => 200;
    }
    // Answered only after every delivery: nothing more arrives later.
    await env.sandbox.sandbox.settle();
    const got = events().filter((e) => e.kind === 'subscription.charged');
    const delivered = got.filter((e) => e.providerSubscriptionId !== refused);
    expect(new Set(delivered.map((e) => e.providerSubscriptionId))).toEqual(new Set([...early.slice(1), ...late]));
    expect(delivered).toHaveLength(11); // one renewal each
    // (The refused one's deliveries, tried again before the advance gave up, come last.)
    const lastEarly = Math.max(
      ...got.map((e, i) =>
        early.includes(e.providerSubscriptionId!) && e.providerSubscriptionId !== refused ? i : -1,
      ),
    );
    const firstLate = got.findIndex((e) => late.includes(e.providerSubscriptionId!));
    expect(lastEarly).toBeLessThan(firstLate);
    expect(peak).toBeGreaterThan(1);

    // The refused renewal's events stay pending; the next advance delivers them first, and then answers.
    const pending = await env.sandbox.sandbox.orm.em.fork().find(SandboxEvent, { accountKey: a.key, delivered: false });
    expect(pending.map((e) => e.body.includes(refused))).toEqual(pending.map(() => true));
    expect(pending.length).toBeGreaterThan(0);
    await a.gw.advanceTestClock(target);
    expect(
      events()
        .filter((e) => e.kind === 'subscription.charged')
        .map((e) => e.providerSubscriptionId),
    ).toEqual([refused]);
    expect(await env.sandbox.sandbox.orm.em.fork().count(SandboxEvent, { accountKey: a.key, delivered: false })).toBe(
      0,
    );

    for (const id of [...early, ...late]) await cancel(a, id);
  });

  it('the wall-clock ticker (chargeDueRenewals) charges each account by its own time', async () => {
    const [ahead, wall] = [await account(), await account()];
    await ahead.gw.advanceTestClock(new Date(Date.now() + 10 * DAY));
    const sAhead = await subscribe(ahead, 1); // its trial ends at wall + 11 days
    const sWall = await subscribe(wall, 5); // at wall + 5 days
    const filter = { provider: profile.provider };

    // Half a day of wall time on: nothing is due on either clock.
    expect(await env.sandbox.chargeDueRenewals(new Date(Date.now() + DAY / 2), filter)).toEqual([]);
    // Two days on: the account ten days ahead is at its trial's end; the other is not.
    const due = await env.sandbox.chargeDueRenewals(new Date(Date.now() + 2 * DAY), filter);
    expect(due).toEqual([
      { provider: profile.provider, providerSubscriptionId: sAhead.id, events: profile.renewalEvents },
    ]);
    expect(events()).toEqual([
      expect.objectContaining({
        account: accounts.indexOf(ahead),
        kind: 'subscription.charged',
        periodStart: sAhead.events[0].trialEnd,
      }),
    ]);
    // Six days on: the other's trial ends too.
    expect(
      (await env.sandbox.chargeDueRenewals(new Date(Date.now() + 6 * DAY), filter)).map(
        (r) => r.providerSubscriptionId,
      ),
    ).toEqual([sWall.id]);
    events();

    await cancel(ahead, sAhead.id);
    await cancel(wall, sWall.id);
  });

  it('a live key cannot move a clock', async () => {
    const live = profile.credentials();
    const liveCredentials =
      'secret_key' in live
        ? { ...live, secret_key: live.secret_key.replace('sk_test_', 'sk_live_') }
        : { ...live, key_id: live.key_id.replace('rzp_test_', 'rzp_live_') };
    const gw = createGateway(profile.provider, liveCredentials, { sandboxUrl: env.sandbox.url });
    await expect(gw.advanceTestClock(new Date(Date.now() + DAY))).rejects.toMatchObject({
      name: 'GatewayError',
      code: 'gateway_rejected',
    });
    expect(await env.sandbox.sandbox.offsetMs(sandboxAccountKey(profile.provider, liveCredentials))).toBe(0);
  });
});

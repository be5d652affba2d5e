import { closedPortUrl, useHarness } from '../harness';
import { eventually, sleep } from '../harness/wait';
import { connect, createPayment, pay, PROVIDERS } from '../payments/helpers';
import { NO_WEBHOOK, RETRY_DELAYS_MS } from '../../src/gateways/sandbox/events';
import { REDELIVERY_ROUNDS } from '../../src/gateways/sandbox/sandbox';

/**
 * The sandbox sends again the events the service did not take, as the gateways do (docs/sandbox.md, "Event
 * delivery"): each round later than the last, until one is taken or every round is spent.
 */
// A first wait of 1 s: rounds 1, 3, 7 and 15 s after an event was made (the harness's other apps never redeliver).
const h = useHarness({ sandboxRedeliverySeconds: 1 });
const ATTEMPTS_PER_ROUND = RETRY_DELAYS_MS.length + 1; // one attempt and its quick retries

const sql = <T>(text: string, params: unknown[]) => h.app.orm.em.getConnection().execute<T[]>(text, params);

describe.each(PROVIDERS)('%s', (provider) => {
  it('payments made while the service was unreachable succeed once their events are sent again; spent events stay', async () => {
    const m = await h.merchant();
    const conn = await connect(m.test, provider);
    const serviceUrl = conn.connection.webhook_url;
    const [hook] = await sql<{ account_key: string }>(
      'update sandbox_webhooks set url = ? where provider = ? and url = ? returning account_key',
      [await closedPortUrl(), provider, serviceUrl],
    );
    expect(hook).toBeDefined();
    const events = (paymentRef: string) =>
      sql<{ id: string; delivered: boolean; attempts: number }>(
        'select id, delivered, attempts from sandbox_events where provider = ? and account_key = ? and body like ?',
        [provider, hook.account_key, `%${paymentRef}%`],
      );
    /** Rewrites a payment's stored events (`set`: the SQL assignments, `params` theirs) as a situation needs them. */
    const rewriteEvents = (paymentRef: string, set: string, params: unknown[] = []) =>
      sql(`update sandbox_events set ${set} where provider = ? and account_key = ? and body like ?`, [
        ...params,
        provider,
        hook.account_key,
        `%${paymentRef}%`,
      ]);

    // The customer pays while the service is unreachable: the checkout's event is not taken.
    const late = await pay(m.test, await createPayment(m.test, { provider }));
    expect(late.payment.status).toBe('pending');
    const first = await events(late.payment.id);
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((e) => !e.delivered && e.attempts >= ATTEMPTS_PER_ROUND)).toBe(true);
    // A second round a second later, still refused.
    await eventually(
      async () => (await events(late.payment.id)).every((e) => e.attempts >= 2 * ATTEMPTS_PER_ROUND),
      10_000,
      'the second round',
    );

    // Another payment's events, made a day ago with every round spent since (else due long ago): given up, never sent
    // again.
    const spent = await pay(m.test, await createPayment(m.test, { provider }));
    expect(spent.payment.status).toBe('pending');
    await rewriteEvents(spent.payment.id, `attempts = ?, created_at = now() - interval '1 day'`, [
      ATTEMPTS_PER_ROUND * REDELIVERY_ROUNDS,
    ]);

    // A third payment's events, as a process leaves them that stopped before their first round was recorded: never
    // tried, made two minutes ago.
    const orphan = await pay(m.test, await createPayment(m.test, { provider }));
    expect(orphan.payment.status).toBe('pending');
    await rewriteEvents(
      orphan.payment.id,
      `attempts = 0, last_error = null, created_at = now() - interval '2 minutes'`,
    );

    // And a fourth's, made when the account had no webhook: a gateway never sends those later.
    const unhooked = await pay(m.test, await createPayment(m.test, { provider }));
    await rewriteEvents(
      unhooked.payment.id,
      `attempts = 0, last_error = ?, created_at = now() - interval '2 minutes'`,
      [NO_WEBHOOK],
    );

    // The service reachable again: a later round delivers the first payment's events, and it succeeds.
    await sql('update sandbox_webhooks set url = ? where provider = ? and account_key = ?', [
      serviceUrl,
      provider,
      hook.account_key,
    ]);
    await eventually(
      async () => (await m.test.get(`/payments/${late.payment.id}`)).body.status === 'succeeded',
      20_000,
      'the late payment recorded',
    );
    // A round's outcomes are recorded together once it is done.
    await eventually(
      async () => (await events(late.payment.id)).every((e) => e.delivered),
      10_000,
      "the late payment's events recorded as delivered",
    );
    await eventually(
      async () => (await m.test.get(`/payments/${orphan.payment.id}`)).body.status === 'succeeded',
      10_000,
      'the never-tried payment recorded',
    );
    await sleep(1_500); // three more looks of the loop
    expect((await m.test.get(`/payments/${spent.payment.id}`)).body.status).toBe('pending');
    expect((await m.test.get(`/payments/${unhooked.payment.id}`)).body.status).toBe('pending');
    expect(
      (await events(spent.payment.id)).every(
        // A round already under way when they were marked spent may have added its attempts.
        (e) => !e.delivered && e.attempts >= ATTEMPTS_PER_ROUND * REDELIVERY_ROUNDS,
      ),
    ).toBe(true);
  });
});

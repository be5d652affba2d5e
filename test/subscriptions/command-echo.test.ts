import { TestMerchant, useHarness } from '../harness';
import { connect, Connected, postEvent, PROVIDERS, ProviderName } from '../payments/helpers';
import { authorise, createSubscription, gatewayCancellation, ok, recurringPlan, trail } from './helpers';

/**
 * A cancel command calls the gateway, then records the cancellation; the gateway may report the cancellation (its
 * webhook) before the command's last step commits. That echo must be left to the command, or the command would find
 * the subscription already cancelled and answer 409 after doing what was asked. Simulated here by holding the
 * command's claim while the gateway's event arrives.
 */

const h = useHarness();

describe.each(PROVIDERS)('%s', (provider: ProviderName) => {
  let m: TestMerchant;
  let conn: Connected;
  beforeAll(async () => {
    m = await h.merchant();
    conn = await connect(m.test, provider);
  });

  it("a gateway's cancellation while a cancel command is in flight is left to the command; otherwise it cancels (webhook)", async () => {
    const { plan } = await recurringPlan(m.test);
    const { subscription: sub } = await authorise(m.test, await createSubscription(m.test, plan.id));
    expect(sub.status).toBe('active');
    const db = h.app.orm.em.getConnection();
    await db.execute(`update subscriptions set pending_command = 'cancel', pending_command_at = now() where id = ?`, [
      sub.id,
    ]);

    const echo = await postEvent(conn.connection.webhook_url, gatewayCancellation(provider, conn, sub));
    expect(echo.status).toBe(200);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('active');
    expect(await trail(m.test, sub.id)).toHaveLength(2);

    // With no command in flight, the same news from the gateway is a cancellation made there.
    await db.execute('update subscriptions set pending_command = null, pending_command_at = null where id = ?', [
      sub.id,
    ]);
    expect((await postEvent(conn.connection.webhook_url, gatewayCancellation(provider, conn, sub))).status).toBe(200);
    expect((await ok(m.test.get(`/subscriptions/${sub.id}`))).status).toBe('cancelled');
    expect((await trail(m.test, sub.id)).at(-1)).toBe('active>cancelled:subscription.cancelled:webhook');
  });
});
